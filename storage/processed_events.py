"""Handled chat-platform events, so an event delivered again is not answered twice.

One table for every edge, keyed by (platform, event id): Telegram update ids, Slack
event ids, Discord message ids. A row is written when an event arrives (`handled_at`
NULL) and completed when its handling ends. An event whose row is complete is skipped;
one that arrived but never completed (the process died while handling it) is handled
again: at least once.
"""

from __future__ import annotations

from datetime import datetime

from storage.database import Database
from storage.timestamps import utc_iso

__all__ = ["ProcessedEvents"]


class ProcessedEvents:
    """The `processed_events` rows of one platform."""

    def __init__(self, database: Database, platform: str) -> None:
        self._db = database
        self._platform = platform

    async def begin(self, event_id: str, now: datetime) -> bool:
        """Record that `event_id` arrived; False if it was already handled to the end."""
        # One statement for a new event (the common case); a repeat is looked up after.
        inserted = await self._db.write(
            "INSERT INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)"
            " ON CONFLICT (platform, event_id) DO NOTHING RETURNING event_id",
            (self._platform, event_id, utc_iso(now)),
        )
        if inserted:
            return True
        handled = await self._db.fetch_value(
            "SELECT handled_at FROM processed_events WHERE platform = ? AND event_id = ?",
            (self._platform, event_id),
        )
        return handled is None

    async def finish(self, event_id: str, now: datetime) -> None:
        """Mark `event_id` as handled."""
        await self._db.write(
            "UPDATE processed_events SET handled_at = ? WHERE platform = ? AND event_id = ?",
            (utc_iso(now), self._platform, event_id),
        )

    async def prune(self, before: datetime) -> int:
        """Forget this platform's handled events received before `before` (platforms
        redeliver for minutes to a day)."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "DELETE FROM processed_events WHERE platform = ? AND handled_at IS NOT NULL"
                " AND received_at < ?",
                (self._platform, utc_iso(before)),
            )
            return cursor.rowcount
