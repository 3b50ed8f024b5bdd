"""What documents and chunks look like: the collections, source types, and the frozen
records the repository reads and writes (rows mapped to dataclasses in one place)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum

from storage.database import Row
from storage.ids import ChunkHash, DocumentId, PointId, UserId

__all__ = [
    "CHUNK_COLUMNS",
    "HANDLE_LENGTH",
    "PASSAGE_COLUMNS",
    "ChunkRecord",
    "Collection",
    "DocumentRecord",
    "DuplicateContentError",
    "NewChunk",
    "Passage",
    "SourceType",
    "chunk_from_row",
    "collection_for",
    "document_from_row",
    "passage_from_row",
]


class Collection(StrEnum):
    """The Qdrant collection that holds a document's vectors."""

    KNOWLEDGE = "knowledge"
    PRIVATE = "private"


class SourceType(StrEnum):
    """Where a document came from."""

    NOTE = "note"
    FILE = "file"
    URL = "url"


# A document's handle: the first characters of its id. Ids are random, so a handle never
# changes when another document comes or goes (unlike a position in a list).
HANDLE_LENGTH = 7


def collection_for(owner_id: UserId | None) -> Collection:
    """Shared documents (no owner) live in `knowledge`, the rest in `private`."""
    return Collection.KNOWLEDGE if owner_id is None else Collection.PRIVATE


class DuplicateContentError(Exception):
    """The same content is already stored for this owner (a race lost to another ingest)."""


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One stored source."""

    id: DocumentId
    owner_id: UserId | None
    title: str
    source_type: SourceType
    source_ref: str
    content_hash: str
    original_path: str
    format: str
    status: str
    created_at: str
    updated_at: str
    # Pinned shared documents are put, whole, into every prompt (see `pinned_shared`).
    pinned: bool = False
    # The language it is in (ISO 639-1): a recording's as whisper heard it, else its text's;
    # "" when neither could tell.
    language: str = ""

    @property
    def collection(self) -> Collection:
        """The Qdrant collection of this document's vectors."""
        return collection_for(self.owner_id)

    @property
    def handle(self) -> str:
        """The short, stable name `/sources` shows (a prefix of the id)."""
        return self.id[:HANDLE_LENGTH]


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk about to be stored."""

    index: int
    text: str
    hash: ChunkHash
    heading_path: tuple[str, ...]
    token_count: int
    point_id: PointId
    # How much the text reads like instructions to an AI (None: not scored).
    injection_score: float | None = None


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A stored chunk with what the re-index job needs to rebuild its vector."""

    point_id: PointId
    document_id: DocumentId
    owner_id: UserId | None
    document_title: str
    chunk_index: int
    text: str
    heading_path: tuple[str, ...]
    hash: ChunkHash
    vector_status: str

    @property
    def collection(self) -> Collection:
        """The Qdrant collection of this chunk's vector."""
        return collection_for(self.owner_id)


@dataclass(frozen=True, slots=True)
class Passage:
    """A chunk as a search result: text plus the source it can be cited as."""

    point_id: PointId
    document_id: DocumentId
    document_title: str
    source_type: SourceType
    source_ref: str
    owner_id: UserId | None
    chunk_index: int
    text: str
    heading_path: tuple[str, ...]
    # How much the text reads like instructions to an AI (None: not scored yet).
    injection_score: float | None = None
    # The document's format ("pdf", "audio"...): what its headings mean (see citations).
    document_format: str = ""


def document_from_row(row: Row) -> DocumentRecord:
    return DocumentRecord(
        id=DocumentId(row["id"]),
        owner_id=UserId(row["owner_id"]) if row["owner_id"] is not None else None,
        title=row["title"],
        source_type=SourceType(row["source_type"]),
        source_ref=row["source_ref"],
        content_hash=row["content_hash"],
        original_path=row["original_path"],
        format=row["format"],
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        pinned=bool(row["pinned"]),
        language=row["language"],
    )


CHUNK_COLUMNS = (
    "SELECT c.point_id, c.document_id, d.owner_id, d.title, c.chunk_index, c.text,"
    " c.heading_path, c.hash, c.vector_status"
    " FROM chunks c JOIN documents d ON d.id = c.document_id"
)


def chunk_from_row(row: Row) -> ChunkRecord:
    return ChunkRecord(
        point_id=PointId(row["point_id"]),
        document_id=DocumentId(row["document_id"]),
        owner_id=UserId(row["owner_id"]) if row["owner_id"] is not None else None,
        document_title=row["title"],
        chunk_index=row["chunk_index"],
        text=row["text"],
        heading_path=tuple(json.loads(row["heading_path"])),
        hash=ChunkHash(row["hash"]),
        vector_status=row["vector_status"],
    )


PASSAGE_COLUMNS = (
    "SELECT c.point_id, c.document_id, d.title, d.source_type, d.source_ref,"
    " d.owner_id, c.chunk_index, c.text, c.heading_path, c.injection_score, d.format"
    " FROM chunks c JOIN documents d ON d.id = c.document_id"
)


def passage_from_row(row: Row) -> Passage:
    return Passage(
        point_id=PointId(row["point_id"]),
        document_id=DocumentId(row["document_id"]),
        document_title=row["title"],
        source_type=SourceType(row["source_type"]),
        source_ref=row["source_ref"],
        owner_id=UserId(row["owner_id"]) if row["owner_id"] is not None else None,
        chunk_index=row["chunk_index"],
        text=row["text"],
        heading_path=tuple(json.loads(row["heading_path"])),
        injection_score=row["injection_score"],
        document_format=row["format"],
    )
