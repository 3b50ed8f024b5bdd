"""The turn log, unanswered questions and answer feedback: what each conversation turn did.

Questions and answers are stored because conversation memory and the digest read
them later ("reading what already exists is cheaper than asking the model to save
it"). A user's rows go with the user (`ON DELETE CASCADE`) or with `delete_for_user`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from storage.database import Database, Row
from storage.ids import TurnId, UserId
from storage.timestamps import stamp, utc_iso

__all__ = ["Feedback", "TurnOutcome", "TurnRecord", "TurnRepository", "UnansweredQuestion"]

# Before any stored timestamp, and after it: open ends of a time range.
_EARLIEST = ""
_LATEST = "~"


class TurnOutcome(StrEnum):
    """How a turn ended."""

    ANSWERED = "answered"
    REFUSED = "refused"
    ERROR = "error"
    AWAITING_APPROVAL = "awaiting_approval"


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One question and what answering it cost. Money is in micro-dollars."""

    id: TurnId
    thread_id: str
    user_id: UserId
    chat_id: str
    platform: str
    outcome: TurnOutcome
    model: str
    question: str
    answer: str
    created_at: datetime
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_micros: int = 0
    latency_ms: int = 0
    node_latency_ms: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UnansweredQuestion:
    """A question no stored source could answer."""

    id: int
    user_id: UserId
    chat_id: str
    question: str
    reason: str
    created_at: datetime
    resolved_at: datetime | None


@dataclass(frozen=True, slots=True)
class Feedback:
    """A thumbs up (+1) or down (-1) on one answer."""

    turn_id: TurnId
    user_id: UserId
    value: int
    created_at: datetime


def _turn(row: Row) -> TurnRecord:
    return TurnRecord(
        id=TurnId(row["id"]),
        thread_id=row["thread_id"],
        user_id=UserId(row["user_id"]),
        chat_id=row["chat_id"],
        platform=row["platform"],
        outcome=TurnOutcome(row["outcome"]),
        model=row["model"],
        question=row["question"],
        answer=row["answer"],
        created_at=datetime.fromisoformat(row["created_at"]),
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        cached_tokens=row["cached_tokens"],
        cost_micros=row["cost_micros"],
        latency_ms=row["latency_ms"],
        node_latency_ms=dict(json.loads(row["node_latency_json"])),
    )


def _unanswered(row: Row) -> UnansweredQuestion:
    resolved = row["resolved_at"]
    return UnansweredQuestion(
        id=row["id"],
        user_id=UserId(row["user_id"]),
        chat_id=row["chat_id"],
        question=row["question"],
        reason=row["reason"],
        created_at=datetime.fromisoformat(row["created_at"]),
        resolved_at=datetime.fromisoformat(resolved) if resolved is not None else None,
    )


def _bound(moment: datetime | None, open_end: str) -> str:
    return utc_iso(moment) if moment is not None else open_end


class TurnRepository:
    """Writes and reads turns, unanswered questions and feedback."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def log(self, turn: TurnRecord) -> None:
        """Store a turn; logging the same turn id again (after an approval) updates it."""
        await self._db.write(
            "INSERT INTO turn_log (id, thread_id, user_id, chat_id, platform, outcome, model,"
            " prompt_tokens, completion_tokens, cached_tokens, cost_micros, latency_ms,"
            " node_latency_json, question, answer, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET outcome = excluded.outcome,"
            " model = excluded.model, prompt_tokens = excluded.prompt_tokens,"
            " completion_tokens = excluded.completion_tokens,"
            " cached_tokens = excluded.cached_tokens, cost_micros = excluded.cost_micros,"
            " latency_ms = excluded.latency_ms,"
            " node_latency_json = excluded.node_latency_json, answer = excluded.answer",
            (
                turn.id,
                turn.thread_id,
                turn.user_id,
                turn.chat_id,
                turn.platform,
                turn.outcome.value,
                turn.model,
                turn.prompt_tokens,
                turn.completion_tokens,
                turn.cached_tokens,
                turn.cost_micros,
                turn.latency_ms,
                json.dumps(dict(turn.node_latency_ms), sort_keys=True),
                turn.question,
                turn.answer,
                utc_iso(turn.created_at),
            ),
        )

    async def get(self, turn_id: str) -> TurnRecord | None:
        """One turn, or None."""
        row = await self._db.fetch_one("SELECT * FROM turn_log WHERE id = ?", (turn_id,))
        return _turn(row) if row is not None else None

    async def for_user(
        self,
        user_id: UserId,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
    ) -> list[TurnRecord]:
        """The user's latest `limit` turns in [since, until), in the order they happened."""
        rows = await self._db.fetch_all(
            "SELECT * FROM (SELECT *, rowid AS seq FROM turn_log WHERE user_id = ?"
            " AND created_at >= ? AND created_at < ? ORDER BY created_at DESC, seq DESC"
            " LIMIT ?) ORDER BY created_at, seq",
            (user_id, _bound(since, _EARLIEST), _bound(until, _LATEST), limit),
        )
        return [_turn(row) for row in rows]

    async def created_between(
        self,
        since: datetime,
        until: datetime,
        *,
        outcomes: Sequence[TurnOutcome] = (TurnOutcome.ANSWERED, TurnOutcome.REFUSED),
        limit: int = 10_000,
    ) -> list[TurnRecord]:
        """Every user's turns created in [since, until) that ended in one of `outcomes`,
        oldest first (what conversation memory reads)."""
        wanted = json.dumps([outcome.value for outcome in outcomes])
        rows = await self._db.fetch_all(
            "SELECT *, rowid AS seq FROM turn_log WHERE created_at >= ? AND created_at < ?"
            " AND outcome IN (SELECT value FROM json_each(?)) ORDER BY created_at, seq LIMIT ?",
            (utc_iso(since), utc_iso(until), wanted, limit),
        )
        return [_turn(row) for row in rows]

    async def count_since(self, user_id: UserId, since: datetime) -> int:
        """How many turns a user started at or after `since` (the rate limit counts these)."""
        value = await self._db.fetch_value(
            "SELECT COUNT(*) FROM turn_log WHERE user_id = ? AND created_at >= ?",
            (user_id, _bound(since, _EARLIEST)),
        )
        return int(str(value))

    async def turn_ids(self, user_id: UserId) -> list[str]:
        """Every logged turn of a user."""
        rows = await self._db.fetch_all("SELECT id FROM turn_log WHERE user_id = ?", (user_id,))
        return [str(row["id"]) for row in rows]

    async def thread_ids(self, user_id: UserId) -> list[str]:
        """The conversation threads a user's turns were in (to drop their checkpoints)."""
        rows = await self._db.fetch_all(
            "SELECT DISTINCT thread_id FROM turn_log WHERE user_id = ? ORDER BY thread_id",
            (user_id,),
        )
        return [str(row["thread_id"]) for row in rows]

    async def delete_for_user(self, user_id: UserId) -> int:
        """Forget a user's turns, unanswered questions and feedback; return turns deleted."""
        async with self._db.transaction() as tx:
            await tx.execute("DELETE FROM feedback WHERE user_id = ?", (user_id,))
            await tx.execute("DELETE FROM unanswered_questions WHERE user_id = ?", (user_id,))
            cursor = await tx.execute("DELETE FROM turn_log WHERE user_id = ?", (user_id,))
            return cursor.rowcount

    async def record_unanswered(
        self,
        *,
        user_id: UserId,
        chat_id: str,
        question: str,
        reason: str,
        now: datetime | None = None,
    ) -> UnansweredQuestion:
        """Record a question that ended in a refusal for lack of sources (invariant 5)."""
        rows = await self._db.write(
            "INSERT INTO unanswered_questions (user_id, chat_id, question, reason,"
            " created_at) VALUES (?, ?, ?, ?, ?) RETURNING *",
            (user_id, chat_id, question, reason, stamp(now)),
        )
        return _unanswered(rows[0])

    async def unanswered(
        self,
        *,
        since: datetime | None = None,
        user_id: UserId | None = None,
        include_resolved: bool = False,
        limit: int = 100,
    ) -> list[UnansweredQuestion]:
        """Unanswered questions (of one user, at or after `since`), oldest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM unanswered_questions WHERE created_at >= ?"
            " AND (? IS NULL OR user_id = ?) AND (? OR resolved_at IS NULL)"
            " ORDER BY created_at, id LIMIT ?",
            (_bound(since, _EARLIEST), user_id, user_id, include_resolved, limit),
        )
        return [_unanswered(row) for row in rows]

    async def resolve_unanswered(self, question_id: int, *, now: datetime | None = None) -> bool:
        """Mark a question answered (say, after a new source arrived); False if unknown or done."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE unanswered_questions SET resolved_at = ?"
                " WHERE id = ? AND resolved_at IS NULL",
                (stamp(now), question_id),
            )
            return cursor.rowcount == 1

    async def set_feedback(
        self, turn_id: str, user_id: UserId, value: int, *, now: datetime | None = None
    ) -> bool:
        """Record or change a user's +1/-1 on a turn; False if the turn is not logged."""
        if value not in {-1, 1}:
            raise ValueError("Feedback is +1 or -1")
        try:
            async with self._db.transaction() as tx:
                await tx.execute(
                    "INSERT INTO feedback (turn_id, user_id, value, created_at)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (turn_id, user_id)"
                    " DO UPDATE SET value = excluded.value, created_at = excluded.created_at",
                    (turn_id, user_id, value, stamp(now)),
                )
        except sqlite3.IntegrityError:
            return False
        return True

    async def feedback(self, turn_id: str) -> list[Feedback]:
        """Every feedback on one turn."""
        rows = await self._db.fetch_all(
            "SELECT * FROM feedback WHERE turn_id = ? ORDER BY created_at, user_id", (turn_id,)
        )
        return [
            Feedback(
                turn_id=TurnId(row["turn_id"]),
                user_id=UserId(row["user_id"]),
                value=row["value"],
                created_at=datetime.fromisoformat(row["created_at"]),
            )
            for row in rows
        ]
