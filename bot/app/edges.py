"""Which edges `lore run` starts: one per configured platform, each built from its settings
as plain values, plus the terminal chat when there is a terminal (or nothing else to run).

Each platform's adapter (and so its SDK: python-telegram-bot, discord.py, slack-bolt,
matrix-nio, the MCP SDK) is imported only when that platform is configured, so other commands
start fast."""

# ruff: noqa: PLC0415 - adapters are imported where their edge is built, see the docstring

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import SecretStr

from bot.edge import Edge
from bot.people import LOCAL_OWNER
from bot.settings import Settings, split_list
from storage.processed_events import ProcessedEvents

if TYPE_CHECKING:
    from adapters.console import ConsoleEdge
    from adapters.discord import DiscordConfig
    from adapters.matrix import MatrixConfig
    from adapters.telegram import TelegramConfig
    from bot.app.core import Lore

__all__ = ["EDGE_SETTINGS", "mcp_stdio_edge", "platform_edges", "terminal_edge"]

# What an operator sets to start each platform edge (named when none is configured).
EDGE_SETTINGS = (
    "TELEGRAM_BOT_TOKEN",
    "SLACK_BOT_TOKEN",
    "DISCORD_BOT_TOKEN",
    "MATRIX_HOMESERVER",
    "MCP_HTTP_PORT",
)
LEDGER_DAYS = 7  # platforms redeliver for minutes (Slack) to a day (Telegram)


def _owners_on(settings: Settings, platform: str) -> frozenset[str]:
    return frozenset(user for where, user in settings.owner_identities if where == platform)


def _telegram_config(settings: Settings) -> TelegramConfig:
    from adapters.telegram import TelegramConfig, TelegramEdge

    token = settings.telegram_bot_token
    secret = settings.telegram_webhook_secret
    return TelegramConfig(
        token=token.get_secret_value() if token else "",
        max_file_bytes=settings.max_file_bytes,
        owner_ids=_owners_on(settings, TelegramEdge.platform),
        api_root=settings.telegram_api_root,
        webhook_url=settings.telegram_webhook_url,
        webhook_secret=secret.get_secret_value() if secret else None,
        webhook_listen=settings.telegram_webhook_listen,
        webhook_port=settings.telegram_webhook_port,
    )


def _discord_config(settings: Settings) -> DiscordConfig:
    from adapters.discord import DiscordConfig, DiscordEdge

    token = settings.discord_bot_token
    return DiscordConfig(
        token=token.get_secret_value() if token else "",
        max_file_bytes=settings.max_file_bytes,
        owner_ids=_owners_on(settings, DiscordEdge.platform),
        api_url=settings.discord_api_url,
        guild_id=settings.discord_guild_id,
    )


def _matrix_config(settings: Settings) -> MatrixConfig:
    from adapters.matrix import MatrixConfig, MatrixEdge

    return MatrixConfig(
        homeserver=settings.matrix_homeserver or "",
        user_id=settings.matrix_user_id or "",
        data_dir=settings.data_dir,
        max_file_bytes=settings.max_file_bytes,
        access_token=_reveal(settings.matrix_access_token),
        password=_reveal(settings.matrix_password),
        owner_ids=_owners_on(settings, MatrixEdge.platform),
    )


async def _ledger(lore: Lore, platform: str) -> ProcessedEvents:
    ledger = ProcessedEvents(lore.database, platform)
    await ledger.prune(datetime.now(UTC) - timedelta(days=LEDGER_DAYS))
    return ledger


async def platform_edges(lore: Lore) -> list[Edge]:
    """Every chat-platform edge the settings configure (the terminal is added by the caller)."""
    settings = lore.settings
    edges: list[Edge] = []
    if settings.telegram_bot_token is not None:
        from adapters.telegram import TelegramEdge

        ledger = await _ledger(lore, TelegramEdge.platform)
        edges.append(TelegramEdge(_telegram_config(settings), ledger))
    if settings.slack_bot_token is not None:
        edges.append(await _slack_edge(lore))
    if settings.discord_bot_token is not None:
        from adapters.discord import DiscordEdge

        ledger = await _ledger(lore, DiscordEdge.platform)
        edges.append(DiscordEdge(_discord_config(settings), ledger))
    if settings.matrix_homeserver is not None:
        from adapters.matrix import MatrixEdge

        ledger = await _ledger(lore, MatrixEdge.platform)
        edges.append(MatrixEdge(_matrix_config(settings), ledger))
    if settings.mcp_http_port is not None:
        from adapters.mcp import McpHttpConfig, McpHttpEdge

        config = McpHttpConfig(
            listen=settings.mcp_http_listen,
            port=settings.mcp_http_port,
            allowed_hosts=tuple(split_list(settings.mcp_allowed_hosts)),
            allowed_origins=tuple(split_list(settings.mcp_allowed_origins)),
        )
        edges.append(McpHttpEdge(config))
    return edges


def _reveal(secret: SecretStr | None) -> str | None:
    return secret.get_secret_value() if secret is not None else None


async def _slack_edge(lore: Lore) -> Edge:
    """The Slack edge. Its libraries (slack-bolt, slack-sdk, aiohttp) are imported only when
    Slack is configured, so every other `lore` command starts as fast as before."""
    from adapters.slack import SlackConfig, SlackEdge

    settings = lore.settings
    config = SlackConfig(
        bot_token=_reveal(settings.slack_bot_token) or "",
        max_file_bytes=settings.max_file_bytes,
        app_token=_reveal(settings.slack_app_token),
        signing_secret=_reveal(settings.slack_signing_secret),
        listen=settings.slack_http_listen,
        port=settings.slack_http_port,
        api_url=settings.slack_api_url,
    )
    return SlackEdge(config, await _ledger(lore, SlackEdge.platform))


def terminal_edge(*, interactive: bool) -> ConsoleEdge:
    """The terminal chat (interactive at a terminal, scripted with piped input)."""
    from adapters.console import ConsoleEdge

    return ConsoleEdge(interactive=interactive)


def mcp_stdio_edge() -> Edge:
    """MCP over this process's stdin/stdout, for the person at this machine (`lore mcp`)."""
    from adapters.mcp import McpStdioEdge

    return McpStdioEdge(LOCAL_OWNER)
