"""How a stored chunk becomes a Qdrant point: its hash, the text that is embedded, its payload.

The ingest graph and the re-index job both build points here, so a repaired vector
is exactly the vector the first ingest would have written.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Protocol

from storage.ids import ChunkHash, DocumentId, PointId, UserId
from storage.knowledge_index import DOCUMENT_FIELD, TENANT_FIELD
from storage.vectors import SparseVector, VectorPoint

__all__ = ["chunk_hash", "embedding_text", "lexical_vectors", "make_point"]


class _DocumentEncoder(Protocol):
    def encode_document(self, text: str) -> SparseVector: ...


def chunk_hash(text: str, heading_path: Sequence[str]) -> ChunkHash:
    """A stable digest of a chunk's text and where it sits in the document."""
    digest = hashlib.sha256()
    for heading in heading_path:
        digest.update(heading.encode())
        digest.update(b"\x1f")
    digest.update(b"\x1e")
    digest.update(text.encode())
    return ChunkHash(digest.hexdigest()[:32])


def embedding_text(title: str, heading_path: Sequence[str], text: str) -> str:
    """The text that is embedded: the chunk, preceded by its title and heading path."""
    trail = [title, *(heading for heading in heading_path if heading != title)]
    return " > ".join(part for part in trail if part) + "\n\n" + text


async def lexical_vectors(encoder: _DocumentEncoder, texts: Sequence[str]) -> list[SparseVector]:
    """The lexical vector of each text, in order, made off the event loop (each text's
    language is detected first: up to a millisecond a chunk)."""
    if not texts:
        return []
    return await asyncio.to_thread(lambda: [encoder.encode_document(text) for text in texts])


def make_point(
    point_id: PointId,
    *,
    document_id: DocumentId,
    owner_id: UserId | None,
    chunk_index: int,
    dense: Sequence[float],
    sparse: SparseVector | None,
) -> VectorPoint:
    """A point with the payload its collection's filters need."""
    payload: dict[str, str | int] = {DOCUMENT_FIELD: document_id, "chunk_index": chunk_index}
    if owner_id is not None:
        payload[TENANT_FIELD] = owner_id
    return VectorPoint(id=point_id, dense=dense, sparse=sparse, payload=payload)
