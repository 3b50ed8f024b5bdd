"""Each Telegram update is answered once: an update processor that hands every update id to
the `bot.dedupe.EventDeduper` (in flight, and handled before — across restarts)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from bot.dedupe import EventDeduper

__all__ = ["DedupingProcessor"]

logger = logging.getLogger(__name__)


class DedupingProcessor(BaseUpdateProcessor):
    """Processes updates concurrently (up to a limit), each update id at most once to the end."""

    def __init__(self, deduper: EventDeduper, *, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self._deduper = deduper

    @property
    def skipped(self) -> int:
        """Deliveries skipped as repeats."""
        return self._deduper.skipped

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run the handlers for `update` unless it is a repeat."""
        if not isinstance(update, Update):
            await coroutine
            return
        async with self._deduper.once(str(update.update_id)) as first:
            if not first:
                if hasattr(coroutine, "close"):
                    coroutine.close()
                return
            await coroutine

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""
