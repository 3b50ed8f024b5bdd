"""The Discord edge's lifecycle: log in over REST, sync the `/lore` commands, register the
notifier, and run the gateway connection as a task owned by the `running` block, inside
Lore's event loop (never `Client.run`, which would own the loop). The block ends with the
client closed: the gateway says goodbye and the HTTP session is released.

`api_url` points discord.py's REST base at another server; the gateway URL then comes from
that server's `GET /gateway/bot`. discord.py keeps both as class attributes, so they are set
for the time the edge runs and restored after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.client import LoreClient
from adapters.discord.config import PERMISSIONS, PLATFORM, DiscordConfig
from adapters.discord.context import EdgeContext
from adapters.discord.notifier import DiscordNotifier
from bot.dedupe import EventDeduper, EventLedger
from bot.edge import RunningEdge
from bot.errors import StartupError
from bot.service import Bot

__all__ = ["DiscordEdge", "RunningDiscord"]

logger = logging.getLogger(__name__)

LOGIN_REFUSED = (
    "Discord refused DISCORD_BOT_TOKEN. Copy the bot token again from the Developer Portal "
    "(Bot → Reset Token); see docs/discord.md."
)
INTENT_MISSING = (
    "Discord refused the gateway connection: switch on the Message Content intent in the "
    "Developer Portal (Bot → Privileged Gateway Intents); see docs/discord.md."
)


@dataclass
class RunningDiscord(RunningEdge):
    """The running Discord edge and its client."""

    client: LoreClient | None = None


@contextlib.contextmanager
def _api_base(api_url: str | None) -> Iterator[None]:
    """discord.py's REST base (a class attribute) set to `api_url` while the edge runs."""
    saved_base, saved_gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    if api_url:
        Route.BASE = api_url.rstrip("/")
    try:
        yield
    finally:
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = saved_base, saved_gateway


async def _connected(client: LoreClient, connection: asyncio.Task[None], within: float) -> None:
    """Wait until the gateway said READY, or fail with the reason the connection ended."""
    ready = asyncio.create_task(client.wait_until_ready())
    try:
        done, _ = await asyncio.wait(
            {ready, connection}, timeout=within, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        ready.cancel()
    if connection in done:
        if isinstance(connection.exception(), discord.PrivilegedIntentsRequired):
            raise StartupError(INTENT_MISSING)
        raise StartupError(f"The Discord gateway connection ended: {connection.exception()}")
    if ready not in done:
        raise StartupError("The Discord gateway did not say READY in time.")


class DiscordEdge:
    """Discord through discord.py: the gateway for events, REST for everything sent."""

    platform = PLATFORM

    def __init__(self, config: DiscordConfig, ledger: EventLedger) -> None:
        self._config = config
        self._ledger = ledger

    @contextlib.asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningDiscord]:
        """Log in, sync the commands, connect, and serve until the block ends."""
        config = self._config
        client = LoreClient(EdgeContext(bot, config, EventDeduper(self._ledger)))
        with _api_base(config.api_url):
            async with client:
                await self._login(client)
                await self._sync_commands(client)
                bot.register_notifier(PLATFORM, DiscordNotifier(client, config.owner_ids))
                connection = asyncio.create_task(client.connect(), name="discord-gateway")
                try:
                    await _connected(client, connection, config.connect_timeout)
                    self._announce(client)
                    yield RunningDiscord("discord", client=client)
                finally:
                    await client.close()
                    with contextlib.suppress(Exception, asyncio.CancelledError):
                        await asyncio.wait_for(connection, timeout=10)
        logger.info("Discord edge stopped")

    async def _login(self, client: LoreClient) -> None:
        try:
            await client.login(self._config.token)
        except discord.LoginFailure:
            raise StartupError(LOGIN_REFUSED) from None
        if self._config.api_url:
            _, url, _ = await client.http.get_bot_gateway()
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)

    async def _sync_commands(self, client: LoreClient) -> None:
        guild_id = self._config.guild_id
        client.install_commands(guild_id)
        guild = discord.Object(guild_id) if guild_id is not None else None
        try:
            synced = await client.tree.sync(guild=guild)
        except discord.HTTPException as exc:
            logger.warning("Discord slash commands not synced: %s", exc)
            return
        logger.info(
            "Discord /lore synced with %d subcommands (%s)",
            sum(len(command.options) for command in synced),
            f"server {guild_id}" if guild_id else "global",
        )

    def _announce(self, client: LoreClient) -> None:
        user = client.user
        invite = discord.utils.oauth_url(
            client.application_id or 0,
            permissions=PERMISSIONS,
            scopes=("bot", "applications.commands"),
        )
        logger.info("Discord edge running as %s; invite it with %s", user, invite)
