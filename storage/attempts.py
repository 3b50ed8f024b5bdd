"""Attempts counted per key over a sliding window: wrong link or invite codes per identity,
digests asked for on demand per member. The count and the new row are written in one
transaction, so concurrent attempts cannot slip past a limit together."""

from __future__ import annotations

from datetime import datetime, timedelta

from storage.database import Database
from storage.timestamps import utc_iso

__all__ = ["AttemptLog"]


class AttemptLog:
    """The `attempts` table."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def take(self, key: str, *, limit: int, window: timedelta, now: datetime) -> bool:
        """Record one attempt for `key` if fewer than `limit` were made within `window`
        before `now`; False (and nothing recorded) when the limit is reached."""
        async with self._db.transaction() as tx:
            async with tx.execute(
                "SELECT COUNT(*) FROM attempts WHERE key = ? AND at > ?",
                (key, utc_iso(now - window)),
            ) as cursor:
                row = await cursor.fetchone()
            if row is not None and int(row[0]) >= limit:
                return False
            await tx.execute("INSERT INTO attempts (key, at) VALUES (?, ?)", (key, utc_iso(now)))
        return True

    async def count(self, key: str, *, window: timedelta, now: datetime) -> int:
        """Attempts for `key` within `window` before `now`."""
        value = await self._db.fetch_value(
            "SELECT COUNT(*) FROM attempts WHERE key = ? AND at > ?",
            (key, utc_iso(now - window)),
        )
        return int(str(value))

    async def record(self, key: str, now: datetime) -> None:
        """Count one attempt (a failure, after the fact)."""
        async with self._db.transaction() as tx:
            await tx.execute("INSERT INTO attempts (key, at) VALUES (?, ?)", (key, utc_iso(now)))

    async def prune(self, before: datetime) -> int:
        """Forget attempts older than any window."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute("DELETE FROM attempts WHERE at < ?", (utc_iso(before),))
            return cursor.rowcount
