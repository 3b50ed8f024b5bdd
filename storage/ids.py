"""Typed identifiers and the deterministic point ids that tie SQLite rows to Qdrant points."""

from __future__ import annotations

import secrets
import uuid
from typing import NewType

__all__ = [
    "ApprovalId",
    "ChunkHash",
    "DocumentId",
    "EvalRunId",
    "InviteCode",
    "PointId",
    "TurnId",
    "UserId",
    "new_approval_id",
    "new_document_id",
    "new_eval_run_id",
    "new_invite_code",
    "new_turn_id",
    "new_user_id",
    "point_id",
]

UserId = NewType("UserId", str)
DocumentId = NewType("DocumentId", str)
ChunkHash = NewType("ChunkHash", str)
PointId = NewType("PointId", str)
# [A-Za-z0-9_-], 22 characters: fits a Telegram deep link (`/start <code>`, at most 64).
InviteCode = NewType("InviteCode", str)
# [A-Za-z0-9_-], 16 characters: fits in button callback data (Telegram allows 64 bytes).
ApprovalId = NewType("ApprovalId", str)
TurnId = NewType("TurnId", str)
EvalRunId = NewType("EvalRunId", str)

# Fixed namespace: changing it would orphan every stored point.
_POINT_NAMESPACE = uuid.UUID("6f1c2a7e-4b1d-5c3e-9a8f-0d2b4e6c8a10")


def point_id(document_id: DocumentId, chunk_hash: ChunkHash) -> PointId:
    """Return the Qdrant point id of one chunk: UUIDv5 of (document id, chunk hash).

    A retry computes the same id, so an upsert overwrites instead of duplicating.
    """
    return PointId(str(uuid.uuid5(_POINT_NAMESPACE, f"{document_id}:{chunk_hash}")))


def new_document_id() -> DocumentId:
    """Return a fresh random document id."""
    return DocumentId(uuid.uuid4().hex)


def new_user_id() -> UserId:
    """Return a fresh random user id."""
    return UserId(uuid.uuid4().hex)


def new_invite_code() -> InviteCode:
    """Return a fresh unguessable invite code (128 random bits, URL-safe)."""
    return InviteCode(secrets.token_urlsafe(16))


def new_approval_id() -> ApprovalId:
    """Return a fresh unguessable approval id (96 random bits, URL-safe)."""
    return ApprovalId(secrets.token_urlsafe(12))


def new_turn_id() -> TurnId:
    """Return a fresh random turn id."""
    return TurnId(uuid.uuid4().hex)


def new_eval_run_id() -> EvalRunId:
    """Return a fresh random evaluation run id."""
    return EvalRunId(uuid.uuid4().hex)
