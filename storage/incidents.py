"""Incidents: fired guards and citation/grounding problems, recorded without message text.

A guard incident names the guard and a short reason written by our code (for example
"prompt injection pattern", "unknown user"); the user's message itself is never stored
here, so the incident log can be shown to the owner without leaking anyone's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from storage.database import Database, Row
from storage.ids import TurnId, UserId
from storage.timestamps import stamp, utc_iso

__all__ = ["CitationEvent", "CitationEventKind", "GuardIncident", "IncidentRepository"]


class CitationEventKind(StrEnum):
    """What went wrong with an answer's sources."""

    DROPPED_CITATION = "dropped_citation"
    GROUNDING_RISK = "grounding_risk"


@dataclass(frozen=True, slots=True)
class GuardIncident:
    """A guard refused a message."""

    id: int
    user_id: UserId | None
    platform: str
    chat_id: str
    guard: str
    reason: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CitationEvent:
    """A citation was dropped, or an answer looked weakly grounded, in one turn."""

    id: int
    turn_id: TurnId
    kind: CitationEventKind
    detail: str
    created_at: datetime


def _incident(row: Row) -> GuardIncident:
    return GuardIncident(
        id=row["id"],
        user_id=UserId(row["user_id"]) if row["user_id"] is not None else None,
        platform=row["platform"],
        chat_id=row["chat_id"],
        guard=row["guard"],
        reason=row["reason"],
        created_at=datetime.fromisoformat(row["created_at"]),
    )


def _event(row: Row) -> CitationEvent:
    return CitationEvent(
        id=row["id"],
        turn_id=TurnId(row["turn_id"]),
        kind=CitationEventKind(row["kind"]),
        detail=row["detail"],
        created_at=datetime.fromisoformat(row["created_at"]),
    )


class IncidentRepository:
    """Records and lists guard incidents and citation events."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def record_guard(
        self,
        *,
        guard: str,
        reason: str,
        platform: str,
        chat_id: str,
        user_id: UserId | None = None,
        now: datetime | None = None,
    ) -> GuardIncident:
        """Record that `guard` refused a message; `reason` must not quote the message."""
        async with (
            self._db.transaction() as tx,
            tx.execute(
                "INSERT INTO guard_incidents (user_id, platform, chat_id, guard, reason,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *",
                (user_id, platform, chat_id, guard, reason, stamp(now)),
            ) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return _incident(rows[0])

    async def guard_incidents(
        self, *, since: datetime | None = None, limit: int = 100
    ) -> list[GuardIncident]:
        """The most recent guard incidents (at or after `since`), newest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM guard_incidents WHERE created_at >= ?"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (utc_iso(since) if since is not None else "", limit),
        )
        return [_incident(row) for row in rows]

    async def record_citation_event(
        self,
        turn_id: TurnId,
        kind: CitationEventKind,
        detail: str,
        *,
        now: datetime | None = None,
    ) -> CitationEvent:
        """Record a dropped citation or a grounding risk in one turn."""
        async with (
            self._db.transaction() as tx,
            tx.execute(
                "INSERT INTO citation_events (turn_id, kind, detail, created_at)"
                " VALUES (?, ?, ?, ?) RETURNING *",
                (turn_id, kind.value, detail, stamp(now)),
            ) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return _event(rows[0])

    async def citation_events(
        self, *, turn_id: TurnId | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[CitationEvent]:
        """Citation events of one turn, or the most recent ones (at or after `since`)."""
        rows = await self._db.fetch_all(
            "SELECT * FROM citation_events WHERE (? IS NULL OR turn_id = ?) AND created_at >= ?"
            " ORDER BY created_at DESC, id DESC LIMIT ?",
            (turn_id, turn_id, utc_iso(since) if since is not None else "", limit),
        )
        return [_event(row) for row in rows]

    async def delete_for_user(self, user_id: UserId, turn_ids: Sequence[str]) -> None:
        """Forget a user's guard incidents and the citation events of their turns."""
        async with self._db.transaction() as tx:
            await tx.execute("DELETE FROM guard_incidents WHERE user_id = ?", (user_id,))
            await tx.executemany(
                "DELETE FROM citation_events WHERE turn_id = ?", [(turn,) for turn in turn_ids]
            )
