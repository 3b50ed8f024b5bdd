"""Each Telegram update is answered once: an update processor that skips update ids already
handled (remembered in SQLite through an `UpdateLedger`) or being handled right now."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Protocol

from telegram import Update
from telegram.ext import BaseUpdateProcessor

__all__ = ["DedupingProcessor", "UpdateLedger"]

logger = logging.getLogger(__name__)


class UpdateLedger(Protocol):
    """Persistent memory of handled update ids (`storage.processed_updates.ProcessedUpdates`)."""

    async def begin(self, update_id: int, now: datetime) -> bool:
        """Record arrival; False if the update was already handled to the end."""

    async def finish(self, update_id: int, now: datetime) -> None:
        """Record that handling ended."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class DedupingProcessor(BaseUpdateProcessor):
    """Processes updates concurrently (up to a limit), each update id at most once to the end.

    An update that arrived but whose handling never ended (the process died) is handled
    again when it is delivered again: at least once, and answered once.
    """

    def __init__(
        self,
        ledger: UpdateLedger,
        *,
        max_concurrent_updates: int,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        super().__init__(max_concurrent_updates)
        self._ledger = ledger
        self._clock = clock
        self._in_flight: set[int] = set()
        self.skipped = 0

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run the handlers for `update` unless it is a repeat."""
        if not isinstance(update, Update):
            await coroutine
            return
        update_id = update.update_id
        if update_id in self._in_flight:
            self._skip(update_id, coroutine)
            return
        # Claimed before the first await: a copy arriving meanwhile sees it in flight.
        self._in_flight.add(update_id)
        try:
            if not await self._ledger.begin(update_id, self._clock()):
                self._skip(update_id, coroutine)
                return
            await coroutine
            await self._ledger.finish(update_id, self._clock())
        finally:
            self._in_flight.discard(update_id)

    def _skip(self, update_id: int, coroutine: Awaitable[Any]) -> None:
        self.skipped += 1
        logger.info("Update %d was delivered again; already handled", update_id)
        if hasattr(coroutine, "close"):
            coroutine.close()

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""
