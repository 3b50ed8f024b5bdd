"""Pending approvals: a high-risk tool call waiting for an owner, decided and run once.

Every state change is one conditional UPDATE inside the writer transaction, so two
owners tapping at once get one `decided` and one `already_decided`, and two resumes
of the same approved call get one `True` from `start_execution` / `mark_executed`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal

from storage.database import Database, Row
from storage.ids import ApprovalId, UserId, new_approval_id
from storage.timestamps import utc_iso

__all__ = ["Approval", "ApprovalRepository", "ApprovalStatus", "Decision", "DecisionOutcome"]


class ApprovalStatus(StrEnum):
    """Where an approval request stands."""

    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


DecisionOutcome = Literal["decided", "already_decided", "expired", "unknown"]


@dataclass(frozen=True, slots=True)
class Approval:
    """A tool call that waits for (or got) an owner's decision."""

    id: ApprovalId
    thread_id: str
    requester_user_id: UserId
    chat_id: str
    platform: str
    tool_name: str
    arguments_json: str
    summary: str
    status: ApprovalStatus
    created_at: datetime
    expires_at: datetime
    decided_by: UserId | None
    decided_at: datetime | None
    result_json: str | None
    executed_at: datetime | None
    # Where the request was made: a group chat (shared knowledge only) and the chat's thread.
    is_group: bool = True
    chat_thread: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """What a tap did: `decided` only for the tap that changed the status."""

    outcome: DecisionOutcome
    record: Approval | None
    # True when this call changed the status (a decision, or a tap that found it overdue).
    changed: bool = False


def _optional_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _approval(row: Row) -> Approval:
    return Approval(
        id=ApprovalId(row["id"]),
        thread_id=row["thread_id"],
        requester_user_id=UserId(row["requester_user_id"]),
        chat_id=row["chat_id"],
        platform=row["platform"],
        tool_name=row["tool_name"],
        arguments_json=row["arguments_json"],
        summary=row["summary"],
        status=ApprovalStatus(row["status"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        expires_at=datetime.fromisoformat(row["expires_at"]),
        decided_by=UserId(row["decided_by"]) if row["decided_by"] is not None else None,
        decided_at=_optional_time(row["decided_at"]),
        result_json=row["result_json"],
        executed_at=_optional_time(row["executed_at"]),
        is_group=bool(row["is_group"]),
        chat_thread=row["chat_thread"],
    )


class ApprovalRepository:
    """Creates, decides, expires and completes approval requests."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def create(
        self,
        *,
        thread_id: str,
        requester_user_id: UserId,
        chat_id: str,
        platform: str,
        tool_name: str,
        arguments_json: str,
        summary: str,
        now: datetime,
        ttl: timedelta,
        is_group: bool,
        chat_thread: str | None = None,
    ) -> Approval:
        """Store a new pending request that expires at `now + ttl`."""
        if ttl <= timedelta(0):
            raise ValueError("An approval must wait for a positive time")
        async with (
            self._db.transaction() as tx,
            tx.execute(
                "INSERT INTO pending_approvals (id, thread_id, requester_user_id, chat_id,"
                " platform, tool_name, arguments_json, summary, created_at, expires_at,"
                " is_group, chat_thread) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *",
                (
                    new_approval_id(),
                    thread_id,
                    requester_user_id,
                    chat_id,
                    platform,
                    tool_name,
                    arguments_json,
                    summary,
                    utc_iso(now),
                    utc_iso(now + ttl),
                    int(is_group),
                    chat_thread,
                ),
            ) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return _approval(rows[0])

    async def get(self, approval_id: str) -> Approval | None:
        """One request, or None (ids come back from buttons, so any string is accepted)."""
        row = await self._db.fetch_one(
            "SELECT * FROM pending_approvals WHERE id = ?", (approval_id,)
        )
        return _approval(row) if row is not None else None

    async def pending(self, *, now: datetime | None = None) -> list[Approval]:
        """Requests still waiting, oldest first; with `now`, only those not yet overdue."""
        if now is None:
            rows = await self._db.fetch_all(
                "SELECT * FROM pending_approvals WHERE status = 'pending' ORDER BY created_at, id"
            )
        else:
            rows = await self._db.fetch_all(
                "SELECT * FROM pending_approvals WHERE status = 'pending' AND expires_at > ?"
                " ORDER BY created_at, id",
                (utc_iso(now),),
            )
        return [_approval(row) for row in rows]

    async def decide(
        self, approval_id: str, decider: UserId, approve: bool, now: datetime
    ) -> Decision:
        """Approve or reject a pending request; only the first decision counts.

        An overdue request is flipped to `expired` instead and reported as such.
        """
        status = ApprovalStatus.APPROVED if approve else ApprovalStatus.REJECTED
        at = utc_iso(now)
        async with self._db.transaction() as tx:
            async with tx.execute(
                "UPDATE pending_approvals SET status = ?, decided_by = ?, decided_at = ?"
                " WHERE id = ? AND status = 'pending' AND expires_at > ? RETURNING *",
                (status.value, decider, at, approval_id, at),
            ) as cursor:
                decided = list(await cursor.fetchall())
            if decided:
                return Decision("decided", _approval(decided[0]), changed=True)
            async with tx.execute(
                "UPDATE pending_approvals SET status = 'expired'"
                " WHERE id = ? AND status = 'pending' RETURNING *",
                (approval_id,),
            ) as cursor:
                expired = list(await cursor.fetchall())
            if expired:
                return Decision("expired", _approval(expired[0]), changed=True)
            async with tx.execute(
                "SELECT * FROM pending_approvals WHERE id = ?", (approval_id,)
            ) as cursor:
                row = await cursor.fetchone()
        if row is None:
            return Decision("unknown", None)
        record = _approval(row)
        if record.status is ApprovalStatus.EXPIRED:
            return Decision("expired", record)
        return Decision("already_decided", record)

    async def expire_due(self, now: datetime) -> list[Approval]:
        """Flip every overdue pending request to `expired`; return them (to tell requesters)."""
        async with (
            self._db.transaction() as tx,
            tx.execute(
                "UPDATE pending_approvals SET status = 'expired'"
                " WHERE status = 'pending' AND expires_at <= ? RETURNING *",
                (utc_iso(now),),
            ) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return sorted((_approval(row) for row in rows), key=lambda a: (a.created_at, a.id))

    async def delete_for_requester(self, user_id: UserId) -> list[ApprovalId]:
        """Forget every request a user made (their words are in the summary and the
        arguments); the ids, so their waiting threads can go too."""
        async with (
            self._db.transaction() as tx,
            tx.execute(
                "DELETE FROM pending_approvals WHERE requester_user_id = ? RETURNING id",
                (user_id,),
            ) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return [ApprovalId(row[0]) for row in rows]

    async def start_execution(self, approval_id: str, now: datetime) -> bool:
        """Claim the right to run an approved tool; True for exactly one caller.

        Call it before the side effect: a resume after a crash between the claim and
        the result gets False and must not run the tool again (at most once).
        """
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE pending_approvals SET executed_at = ?"
                " WHERE id = ? AND status = 'approved' AND executed_at IS NULL",
                (utc_iso(now), approval_id),
            )
            return cursor.rowcount == 1

    async def mark_executed(self, approval_id: str, result_json: str, now: datetime) -> bool:
        """Record the result of an approved tool; True for exactly one caller.

        Works with or without a prior `start_execution`; False if a result is already
        recorded or the request was not approved.
        """
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE pending_approvals SET result_json = ?,"
                " executed_at = IFNULL(executed_at, ?)"
                " WHERE id = ? AND status = 'approved' AND result_json IS NULL",
                (result_json, utc_iso(now), approval_id),
            )
            return cursor.rowcount == 1
