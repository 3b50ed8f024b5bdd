"""HTTP mode: one path (`/slack/events`) for events, interactivity and slash commands,
served on the configured address inside Lore's event loop and dispatched to the Bolt app,
which checks every request's signature and timestamp (401 otherwise). A body that is not
what its Content-Type says is refused before Bolt parses it (401 unsigned, else 400).
Bodies are capped by aiohttp (1 MiB); access logs are off."""

from __future__ import annotations

import logging

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

__all__ = ["SlackHttpServer"]

logger = logging.getLogger(__name__)


class SlackHttpServer:
    """Serves one Bolt app at `path` on `listen:port` (port 0: any free port)."""

    def __init__(
        self, app: AsyncApp, *, signing_secret: str, listen: str, port: int, path: str
    ) -> None:
        self._app = app
        self._verifier = SignatureVerifier(signing_secret)
        web_app = web.Application()
        web_app.router.add_post(path, self._handle)
        self._runner = web.AppRunner(web_app, access_log=None)
        self._listen = listen
        self._path = path
        self.port = port

    async def start(self) -> None:
        """Listen."""
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._listen, self.port)
        await site.start()
        for address in self._runner.addresses:
            if isinstance(address, tuple):
                self.port = int(address[1])
                break
        logger.info("Slack events listening on %s:%d%s", self._listen, self.port, self._path)

    async def stop(self) -> None:
        """Stop listening and close open connections."""
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.text()
        try:
            bolt_request = AsyncBoltRequest(
                body=body,
                query=request.query_string,
                headers=request.headers,  # type: ignore[arg-type]  # a multidict is a mapping
            )
        except ValueError:  # not the JSON or form its Content-Type says
            signed = self._verifier.is_valid(
                body,
                request.headers.get("X-Slack-Request-Timestamp", "0"),
                request.headers.get("X-Slack-Signature", ""),
            )
            return web.Response(status=400 if signed else 401, text="invalid request")
        return await to_aiohttp_response(await self._app.async_dispatch(bolt_request))
