"""Conversation memory: embed each answered exchange of the turn log into the `memory` index.

`ConversationMemory.build(now)` is the job the scheduler runs every 30 minutes. It reads
the turn log over a window wider than its schedule (2 hours by default), so a failed or
missed run heals on the next one, and upserts one point per answered or refused turn
with text ("Q: ...\\nA: ..."); lookups by MCP clients are no conversation and are skipped.
Point ids come from the turn ids, so overlapping runs overwrite instead of duplicating. The
payload indexes are ensured on every run. The day of an exchange is its calendar day in the
member's timezone (UTC when none is set).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from bot.lookups import is_lookup
from storage.ids import UserId
from storage.memory_index import MemoryEntry, MemoryIndex
from storage.turns import TurnRecord, TurnRepository
from storage.users import UserRepository

__all__ = ["MEMORY_WINDOW", "ConversationMemory", "MemoryReport", "exchange_text"]

logger = logging.getLogger(__name__)

#: How far back each run reads: wider than the 30-minute schedule, so a missed run heals.
MEMORY_WINDOW = timedelta(hours=2)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: Exchanges embedded per model call.
BATCH = 64


class PassageEncoder(Protocol):
    """Turns texts into the dense vectors the memory index stores."""

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for `texts`, in order (off the event loop)."""


@dataclass(frozen=True, slots=True)
class MemoryReport:
    """What one memory run did."""

    since: datetime
    until: datetime
    turns_read: int
    points_written: int
    seconds: float


def exchange_text(question: str, answer: str) -> str:
    """The text embedded for one exchange."""
    return f"Q: {question.strip()}\nA: {answer.strip()}"


class ConversationMemory:
    """Builds and forgets members' conversation memory."""

    def __init__(
        self,
        *,
        turns: TurnRepository,
        users: UserRepository,
        index: MemoryIndex,
        embedder: PassageEncoder,
        window: timedelta = MEMORY_WINDOW,
    ) -> None:
        self._turns = turns
        self._users = users
        self._index = index
        self._embedder = embedder
        self._window = window

    async def build(self, now: datetime, *, window: timedelta | None = None) -> MemoryReport:
        """Embed every answered exchange created in [now - window, now]; idempotent."""
        started = time.perf_counter()
        since, until = now - (window or self._window), now + timedelta(seconds=1)
        await self._index.ensure()
        records = await self._turns.created_between(since, until)
        usable = [r for r in records if r.question.strip() and not is_lookup(r)]
        zones: dict[UserId, ZoneInfo] = {}
        written = 0
        for start in range(0, len(usable), BATCH):
            batch = usable[start : start + BATCH]
            vectors = await self._embedder.embed_passages(
                [exchange_text(record.question, record.answer) for record in batch]
            )
            entries = [
                await self._entry(record, vector, zones)
                for record, vector in zip(batch, vectors, strict=True)
            ]
            await self._index.upsert(entries)
            written += len(entries)
        report = MemoryReport(since, now, len(records), written, time.perf_counter() - started)
        logger.info(
            "Memory run: %d turns read, %d exchanges written in %.2fs",
            report.turns_read,
            report.points_written,
            report.seconds,
        )
        return report

    async def rebuild(self, now: datetime) -> MemoryReport:
        """Drop every remembered exchange and embed the whole turn log again with the current
        model (`lore reindex --all`); forgotten members' turns are gone from the log already."""
        await self._index.ensure()
        await self._index.clear()
        return await self.build(now, window=now - _EPOCH)

    async def forget(self, user_id: UserId) -> None:
        """Remove every remembered exchange of one member."""
        await self._index.forget_user(user_id)

    async def count(self, user_id: UserId | None = None) -> int:
        """Remembered exchanges (of one member, when given)."""
        return await self._index.count(user_id)

    async def _entry(
        self, record: TurnRecord, vector: list[float], zones: dict[UserId, ZoneInfo]
    ) -> MemoryEntry:
        zone = zones.get(record.user_id)
        if zone is None:
            zone = zones[record.user_id] = await self._zone(record.user_id)
        return MemoryEntry(
            turn_id=record.id,
            user_id=record.user_id,
            chat_id=record.chat_id,
            created_at=record.created_at,
            day=record.created_at.astimezone(zone).date(),
            dense=vector,
        )

    async def _zone(self, user_id: UserId) -> ZoneInfo:
        user = await self._users.get(user_id)
        try:
            return ZoneInfo(user.timezone if user is not None and user.timezone else "UTC")
        except (KeyError, ValueError):
            return ZoneInfo("UTC")
