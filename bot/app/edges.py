"""Which edges `lore run` starts: one per configured platform, each built from its settings
as plain values, plus the terminal chat when there is a terminal (or nothing else to run)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adapters.console import ConsoleEdge
from adapters.mcp import McpHttpConfig, McpHttpEdge, McpStdioEdge
from adapters.telegram import TelegramConfig, TelegramEdge
from bot.app.core import Lore
from bot.edge import Edge
from bot.people import LOCAL_OWNER
from bot.settings import Settings
from storage.processed_events import ProcessedEvents

__all__ = ["EDGE_SETTINGS", "mcp_stdio_edge", "platform_edges", "terminal_edge"]

# What an operator sets to start each platform edge (named when none is configured).
EDGE_SETTINGS = ("TELEGRAM_BOT_TOKEN", "MCP_HTTP_PORT")
LEDGER_DAYS = 7  # platforms redeliver for minutes (Slack) to a day (Telegram)


def _owners_on(settings: Settings, platform: str) -> frozenset[str]:
    return frozenset(user for where, user in settings.owner_identities if where == platform)


def _telegram_config(settings: Settings) -> TelegramConfig:
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


async def _ledger(lore: Lore, platform: str) -> ProcessedEvents:
    ledger = ProcessedEvents(lore.database, platform)
    await ledger.prune(datetime.now(UTC) - timedelta(days=LEDGER_DAYS))
    return ledger


async def platform_edges(lore: Lore) -> list[Edge]:
    """Every chat-platform edge the settings configure (the terminal is added by the caller)."""
    settings = lore.settings
    edges: list[Edge] = []
    if settings.telegram_bot_token is not None:
        ledger = await _ledger(lore, TelegramEdge.platform)
        edges.append(TelegramEdge(_telegram_config(settings), ledger))
    if settings.mcp_http_port is not None:
        config = McpHttpConfig(listen=settings.mcp_http_listen, port=settings.mcp_http_port)
        edges.append(McpHttpEdge(config))
    return edges


def terminal_edge(*, interactive: bool) -> Edge:
    """The terminal chat (interactive at a terminal, scripted with piped input)."""
    return ConsoleEdge(interactive=interactive)


def mcp_stdio_edge() -> Edge:
    """MCP over this process's stdin/stdout, for the person at this machine (`lore mcp`)."""
    return McpStdioEdge(LOCAL_OWNER)
