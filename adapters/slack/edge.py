"""The Slack edge's lifecycle: one Web API client (Slack's rate limits waited out), the
bot's own identity from `auth.test`, the notifier, the Bolt app, then Socket Mode (an
outgoing WebSocket: no public URL) or the HTTP-mode server, inside the caller's event
loop until the `running` block ends."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.config import PLATFORM, SlackConfig
from adapters.slack.context import SlackContext
from adapters.slack.directory import Directory
from adapters.slack.files import FileDownloader
from adapters.slack.http_server import SlackHttpServer
from adapters.slack.jobs import Jobs
from adapters.slack.listeners import SDK_LOGGER, build_app
from adapters.slack.notifier import SlackNotifier
from adapters.slack.outbox import Outbox
from adapters.slack.streaming import Capabilities
from bot.dedupe import EventDeduper, EventLedger
from bot.edge import RunningEdge
from bot.errors import StartupError
from bot.service import Bot

__all__ = ["RunningSlack", "SlackEdge"]

logger = logging.getLogger(__name__)

API_TIMEOUT = 30.0


@dataclass
class RunningSlack(RunningEdge):
    """The running Slack edge: its context, its work, and the HTTP server in HTTP mode."""

    context: SlackContext | None = None
    jobs: Jobs | None = None
    http: SlackHttpServer | None = None


def _retry_handlers(config: SlackConfig) -> list[AsyncRetryHandler]:
    """Connection errors retried once, 429s waited out (`Retry-After`) up to a few times."""
    return [
        AsyncConnectionErrorRetryHandler(),
        AsyncRateLimitErrorRetryHandler(max_retry_count=config.rate_limit_retries),
    ]


class SlackEdge:
    """Slack through slack-bolt: Socket Mode with an app-level token, else HTTP mode."""

    platform = PLATFORM

    def __init__(self, config: SlackConfig, ledger: EventLedger) -> None:
        self._config = config
        self._ledger = ledger

    @asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningSlack]:
        """Connect, register the notifier, and serve until the block ends."""
        config = self._config
        timeout = aiohttp.ClientTimeout(total=API_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session, AsyncExitStack() as stack:
            retries = _retry_handlers(config)
            client = AsyncWebClient(
                token=config.bot_token,
                base_url=config.api_url,
                session=session,
                logger=SDK_LOGGER,
                retry_handlers=retries,
            )
            me = await _checked(client.auth_test(), "SLACK_BOT_TOKEN", config.api_url)
            edge = SlackContext(
                bot=bot,
                config=config,
                outbox=Outbox(client, session=session, retry_handlers=retries),
                directory=Directory(client),
                files=FileDownloader(client, session, bot_token=config.bot_token),
                capabilities=Capabilities(),
                bot_user_id=str(me.get("user_id", "")),
            )
            bot.register_notifier(PLATFORM, SlackNotifier(edge))
            jobs = Jobs(grace=config.shutdown_grace)
            stack.push_async_callback(jobs.close)
            app = build_app(edge, jobs, EventDeduper(self._ledger))
            http = await self._serve(app, client, stack)
            logger.info(
                "Slack edge running as %s in %s (%s)",
                me.get("user", "?"),
                me.get("team", "?"),
                "HTTP mode" if http else "Socket Mode",
            )
            yield RunningSlack("slack", context=edge, jobs=jobs, http=http)

    async def _serve(
        self, app: AsyncApp, client: AsyncWebClient, stack: AsyncExitStack
    ) -> SlackHttpServer | None:
        """Start receiving; what stops it is pushed on `stack` (it runs before work ends)."""
        config = self._config
        if config.socket_mode:
            handler = AsyncSocketModeHandler(
                app,
                app_token=config.app_token,
                logger=SDK_LOGGER,
                web_client=client,
                ping_interval=config.ping_interval,
            )
            stack.push_async_callback(_close_socket, handler)
            # Asked here so a wrong app token fails the start with Slack's error at once
            # (the Socket Mode client would retry it forever).
            opened = await _checked(
                client.apps_connections_open(app_token=config.app_token or ""),
                "SLACK_APP_TOKEN",
                config.api_url,
            )
            handler.client.wss_uri = str(opened["url"])
            await handler.connect_async()  # type: ignore[no-untyped-call]  # Bolt's own
            return None
        server = SlackHttpServer(
            app,
            signing_secret=config.signing_secret or "",
            listen=config.listen,
            port=config.port,
            path=config.path,
        )
        await server.start()
        stack.push_async_callback(server.stop)
        return server


async def _checked(
    call: Awaitable[AsyncSlackResponse], setting: str, api_url: str
) -> AsyncSlackResponse:
    """A start-up call; Slack's refusal or silence becomes a `StartupError` that names the
    setting to check (never the token)."""
    try:
        return await call
    except SlackApiError as exc:
        error = exc.response.get("error", "an error")
        raise StartupError(f"Slack refused {setting} ({error}); see docs/slack.md.") from exc
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise StartupError(f"Lore cannot reach Slack at {api_url}: {exc}") from exc


async def _close_socket(handler: AsyncSocketModeHandler) -> None:
    await handler.close_async()  # type: ignore[no-untyped-call]  # Bolt's own
    await asyncio.sleep(0)  # let the client's cancelled receivers finish
