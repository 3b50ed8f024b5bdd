"""Morning-digest schedules and deliveries in SQLite: who wants one, when, and which day is done.

A schedule row says where and at what local time a member's digest goes. A delivery
row is written only after the platform returned a message id, in the same transaction
that marks the day done on the schedule; its primary key (user, day) makes a second
delivery of the same day impossible, whatever retries or restarts happen.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime

from storage.database import Database, Row
from storage.ids import UserId
from storage.timestamps import utc_iso

__all__ = ["DigestDelivery", "DigestRepository", "DigestSchedule"]


@dataclass(frozen=True, slots=True)
class DigestSchedule:
    """One member's digest setting and its delivery state."""

    user_id: UserId
    platform: str
    chat_id: str
    local_time: str
    timezone: str
    quiet_days: bool
    enabled: bool
    last_sent_day: str | None
    failures: int
    retry_at: datetime | None
    created_at: datetime
    # When the last digest was delivered (None before the first one).
    last_sent_at: datetime | None = None
    # The chat's thread the digest goes into (None: the chat itself).
    chat_thread: str | None = None


@dataclass(frozen=True, slots=True)
class DigestDelivery:
    """A delivered digest: the day it was for and the platform's message id."""

    user_id: UserId
    day: str
    message_id: str
    sent_at: datetime


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _schedule(row: Row) -> DigestSchedule:
    created = datetime.fromisoformat(row["created_at"])
    return DigestSchedule(
        user_id=UserId(row["user_id"]),
        platform=row["platform"],
        chat_id=row["chat_id"],
        local_time=row["local_time"],
        timezone=row["timezone"],
        quiet_days=bool(row["quiet_days"]),
        enabled=bool(row["enabled"]),
        last_sent_day=row["last_sent_day"],
        failures=int(row["failures"]),
        retry_at=_time(row["retry_at"]),
        created_at=created,
        last_sent_at=_time(row["last_sent_at"]),
        chat_thread=row["chat_thread"],
    )


_SELECT = (
    "SELECT s.*, (SELECT MAX(d.sent_at) FROM digest_deliveries d"
    " WHERE d.user_id = s.user_id) AS last_sent_at FROM digest_schedules s"
)


class DigestRepository:
    """Reads and writes digest schedules and deliveries."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def save(
        self,
        user_id: UserId,
        *,
        platform: str,
        chat_id: str,
        local_time: str,
        timezone: str,
        quiet_days: bool,
        now: datetime,
        chat_thread: str | None = None,
    ) -> DigestSchedule:
        """Turn a member's digest on (or change it); the day already delivered stays done."""
        stamp = utc_iso(now)
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO digest_schedules (user_id, platform, chat_id, chat_thread,"
                " local_time, timezone, quiet_days, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (user_id) DO UPDATE SET platform = excluded.platform,"
                " chat_id = excluded.chat_id, chat_thread = excluded.chat_thread,"
                " local_time = excluded.local_time,"
                " timezone = excluded.timezone, quiet_days = excluded.quiet_days, enabled = 1,"
                " failures = 0, retry_at = NULL, updated_at = excluded.updated_at",
                (
                    user_id,
                    platform,
                    chat_id,
                    chat_thread,
                    local_time,
                    timezone,
                    int(quiet_days),
                    stamp,
                    stamp,
                ),
            )
        schedule = await self.get(user_id)
        if schedule is None:
            raise sqlite3.DatabaseError("the digest schedule just saved is missing")
        return schedule

    async def disable(self, user_id: UserId, *, now: datetime) -> bool:
        """Turn a member's digest off; False if it was not on."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE digest_schedules SET enabled = 0, updated_at = ?"
                " WHERE user_id = ? AND enabled = 1",
                (utc_iso(now), user_id),
            )
            return cursor.rowcount == 1

    async def get(self, user_id: UserId) -> DigestSchedule | None:
        """A member's schedule, on or off."""
        row = await self._db.fetch_one(f"{_SELECT} WHERE s.user_id = ?", (user_id,))
        return _schedule(row) if row is not None else None

    async def ready(self, now: datetime) -> list[DigestSchedule]:
        """Enabled schedules not waiting for a retry back-off to pass."""
        rows = await self._db.fetch_all(
            f"{_SELECT} WHERE s.enabled = 1 AND (s.retry_at IS NULL OR s.retry_at <= ?)"
            " ORDER BY s.user_id",
            (utc_iso(now),),
        )
        return [_schedule(row) for row in rows]

    async def record_delivery(
        self, user_id: UserId, day: str, message_id: str, *, now: datetime
    ) -> bool:
        """Mark `day` delivered with the platform's message id; False if it already was."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "INSERT INTO digest_deliveries (user_id, day, message_id, sent_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (user_id, day) DO NOTHING",
                (user_id, day, message_id, utc_iso(now)),
            )
            inserted = cursor.rowcount == 1
            await tx.execute(
                "UPDATE digest_schedules SET last_sent_day = ?, failures = 0, retry_at = NULL"
                " WHERE user_id = ? AND (last_sent_day IS NULL OR last_sent_day < ?)",
                (day, user_id, day),
            )
        return inserted

    async def mark_quiet(self, user_id: UserId, day: str) -> None:
        """A quiet day: nothing new and the member asked for silence; the day is done."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "UPDATE digest_schedules SET last_sent_day = ?, failures = 0, retry_at = NULL"
                " WHERE user_id = ? AND (last_sent_day IS NULL OR last_sent_day < ?)",
                (day, user_id, day),
            )

    async def record_failure(self, user_id: UserId, *, retry_at: datetime) -> None:
        """A send failed: count it and wait until `retry_at` before the next try."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "UPDATE digest_schedules SET failures = failures + 1, retry_at = ?"
                " WHERE user_id = ?",
                (utc_iso(retry_at), user_id),
            )

    async def deliveries(self, user_id: UserId) -> list[DigestDelivery]:
        """A member's delivered digests, oldest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM digest_deliveries WHERE user_id = ? ORDER BY day", (user_id,)
        )
        return [
            DigestDelivery(
                UserId(row["user_id"]),
                row["day"],
                row["message_id"],
                datetime.fromisoformat(row["sent_at"]),
            )
            for row in rows
        ]
