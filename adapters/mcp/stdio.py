"""MCP over stdio as an edge (`lore mcp`): one local MCP client talks to Lore through this
process's stdin and stdout, as the person at this machine; the edge ends when the client
closes stdin. Nothing else may write to stdout meanwhile (logs go to stderr)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from adapters.mcp.tools import build_server
from bot.edge import RunningEdge
from bot.events import Identity
from bot.mcp_tokens import MCP_PLATFORM
from bot.service import Bot

__all__ = ["McpStdioEdge"]


class McpStdioEdge:
    """Lore's knowledge for one local MCP client, read-only, as `identity`."""

    platform = MCP_PLATFORM

    def __init__(self, identity: Identity) -> None:
        self._identity = identity

    def _caller(self) -> Identity:
        return self._identity

    @asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningEdge]:
        """Serve the MCP client on stdin/stdout until it hangs up or Lore stops."""
        server = build_server(bot, self._caller)
        running = RunningEdge("mcp-stdio")

        async def serve() -> None:
            try:
                await server.run_stdio_async()
            finally:
                running.finished.set()

        task = asyncio.create_task(serve(), name="mcp-stdio")
        try:
            yield running
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
