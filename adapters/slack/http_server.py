"""HTTP mode: one path (`/slack/events`) for events, interactivity and slash commands,
served on the configured address inside Lore's event loop and dispatched to the Bolt app,
which checks every request's signature and timestamp (401 otherwise). Signing headers that
are missing or not of Slack's form (a timestamp of ASCII digits, a `v0=` signature of 64 hex
digits) are refused before Bolt sees them: 401, and one WARNING line (never a traceback) for
the first such request and then at most one a minute with how many more came, so nobody who
reaches the port can flood the log. A body that is not what its Content-Type says is refused
before Bolt parses it (401 unsigned, else 400). Bodies are capped by aiohttp (1 MiB); access
logs are off."""

from __future__ import annotations

import logging
import re
import time

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

__all__ = ["SlackHttpServer"]

logger = logging.getLogger(__name__)

_TIMESTAMP = re.compile(r"[0-9]{1,15}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
#: Least seconds between two warnings about malformed signing headers.
WARN_EVERY_SECONDS = 60.0


class _MalformedHeaders:
    """Counts requests with malformed signing headers; warns for the first, then once a
    `WARN_EVERY_SECONDS` with how many came since."""

    def __init__(self) -> None:
        self._unreported = 0
        self._warned_at: float | None = None

    def refuse(self, header: str) -> web.Response:
        self._unreported += 1
        now = time.monotonic()
        if self._warned_at is None or now - self._warned_at >= WARN_EVERY_SECONDS:
            logger.warning(
                "Refused %d Slack request(s) with a malformed %s header (401)",
                self._unreported,
                header,
            )
            self._warned_at, self._unreported = now, 0
        return web.Response(status=401, text="invalid request")


class SlackHttpServer:
    """Serves one Bolt app at `path` on `listen:port` (port 0: any free port)."""

    def __init__(
        self, app: AsyncApp, *, signing_secret: str, listen: str, port: int, path: str
    ) -> None:
        self._app = app
        self._verifier = SignatureVerifier(signing_secret)
        self._malformed = _MalformedHeaders()
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
        for header, form in (
            ("X-Slack-Request-Timestamp", _TIMESTAMP),
            ("X-Slack-Signature", _SIGNATURE),
        ):
            if not form.fullmatch(request.headers.get(header, "")):
                return self._malformed.refuse(header)
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
                request.headers["X-Slack-Request-Timestamp"],
                request.headers["X-Slack-Signature"],
            )
            return web.Response(status=400 if signed else 401, text="invalid request")
        return await to_aiohttp_response(await self._app.async_dispatch(bolt_request))
