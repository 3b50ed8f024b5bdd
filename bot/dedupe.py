"""Each incoming platform event is handled once: a copy delivered while the first is still
being handled is dropped at once (claimed before the first await), and a copy delivered
after it was handled to the end — even across a restart — is skipped through a persistent
ledger (`storage.processed_events.ProcessedEvents`, wired by the composition root).

An event that arrived but whose handling never ended (the process died) is handled again
when it is delivered again: at least once, and answered once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["EventDeduper", "EventLedger"]

logger = logging.getLogger(__name__)


class EventLedger(Protocol):
    """Persistent memory of handled event ids of one platform."""

    async def begin(self, event_id: str, now: datetime) -> bool:
        """Record arrival; False if the event was already handled to the end."""

    async def finish(self, event_id: str, now: datetime) -> None:
        """Record that handling ended."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class EventDeduper:
    """Decides, per event id, whether this delivery is the one to handle."""

    def __init__(self, ledger: EventLedger, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._ledger = ledger
        self._clock = clock
        self._in_flight: set[str] = set()
        self.skipped = 0

    @asynccontextmanager
    async def once(self, event_id: str) -> AsyncIterator[bool]:
        """`async with deduper.once(id) as first:` handle the event only when `first`; the
        event counts as handled when the block ends without an exception."""
        if event_id in self._in_flight:
            self._skip(event_id)
            yield False
            return
        self._in_flight.add(event_id)  # before the first await: a racing copy sees it
        try:
            if not await self._ledger.begin(event_id, self._clock()):
                self._skip(event_id)
                yield False
                return
            yield True
            await self._ledger.finish(event_id, self._clock())
        finally:
            self._in_flight.discard(event_id)

    def _skip(self, event_id: str) -> None:
        self.skipped += 1
        logger.info("Event %s was delivered again; already handled", event_id)
