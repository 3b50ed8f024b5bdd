"""Handled chat-platform update ids, so an update delivered again is not answered twice.

A row is written when an update arrives (`handled_at` NULL) and completed when its
handling ends. An update whose row is complete is skipped; one that arrived but never
completed (the process died while handling it) is handled again: at least once.
"""

from __future__ import annotations

from datetime import datetime

from storage.database import Database
from storage.timestamps import utc_iso

__all__ = ["ProcessedUpdates"]


class ProcessedUpdates:
    """The `telegram_updates` table."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def begin(self, update_id: int, now: datetime) -> bool:
        """Record that `update_id` arrived; False if it was already handled to the end."""
        async with self._db.transaction() as tx:
            async with tx.execute(
                "SELECT handled_at FROM telegram_updates WHERE update_id = ?", (update_id,)
            ) as cursor:
                row = await cursor.fetchone()
            if row is not None and row[0] is not None:
                return False
            await tx.execute(
                "INSERT OR IGNORE INTO telegram_updates (update_id, received_at) VALUES (?, ?)",
                (update_id, utc_iso(now)),
            )
        return True

    async def finish(self, update_id: int, now: datetime) -> None:
        """Mark `update_id` as handled."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "UPDATE telegram_updates SET handled_at = ? WHERE update_id = ?",
                (utc_iso(now), update_id),
            )

    async def prune(self, before: datetime) -> int:
        """Forget handled updates received before `before` (Telegram redelivers for a day)."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "DELETE FROM telegram_updates WHERE handled_at IS NOT NULL AND received_at < ?",
                (utc_iso(before),),
            )
            return cursor.rowcount
