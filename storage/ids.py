"""Typed identifiers and the deterministic point ids that tie SQLite rows to Qdrant points."""

from __future__ import annotations

import uuid
from typing import NewType

__all__ = [
    "ChunkHash",
    "DocumentId",
    "PointId",
    "UserId",
    "new_document_id",
    "new_user_id",
    "point_id",
]

UserId = NewType("UserId", str)
DocumentId = NewType("DocumentId", str)
ChunkHash = NewType("ChunkHash", str)
PointId = NewType("PointId", str)

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
