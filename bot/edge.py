"""The `Edge` protocol: how a chat platform (or the terminal, or MCP) plugs into Lore.

An edge turns its platform's payloads into `Bot` calls and renders what comes back; it
makes no permission decision and holds no command table. `lore run` enters every
configured edge's `running(bot)` in one `AsyncExitStack` beside the scheduler, and stops
them all together (see `bot.app.run`).
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.service import Bot

__all__ = ["Edge", "RunningEdge"]


@dataclass
class RunningEdge:
    """A started edge. `finished` is set when the edge ends on its own (the terminal chat
    reached the end of its input); platform edges run until Lore stops."""

    name: str
    finished: asyncio.Event = field(default_factory=asyncio.Event)


class Edge(Protocol):
    """One platform's connection to the `Bot`."""

    @property
    def platform(self) -> str:
        """The platform name in identities and settings (`telegram`, `slack`, ...)."""

    def running(self, bot: Bot) -> AbstractAsyncContextManager[RunningEdge]:
        """Connect, register the platform's notifier with `bot`, serve until the block ends."""
