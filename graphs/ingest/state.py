"""What flows through the ingest graph: the request, intermediate products, the result."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypedDict

from graphs.ingest.chunking import Chunk
from graphs.ingest.formats import ExtractedText, SourceFormat
from storage.documents import DocumentRecord, SourceType
from storage.ids import ChunkHash, DocumentId, UserId
from storage.vectors import SparseVector

__all__ = [
    "IngestOutcome",
    "IngestProgress",
    "IngestRequest",
    "IngestResult",
    "IngestState",
    "PreparedChunk",
    "RawSource",
    "chunks_text",
]


def chunks_text(count: int) -> str:
    """A number of chunks as people write it: "1 chunk", "0 chunks", "14 chunks"."""
    return f"{count} chunk" if count == 1 else f"{count} chunks"


@dataclass(frozen=True, slots=True)
class IngestRequest:
    """One source to remember, for one owner (None: the shared knowledge).

    Exactly one of `text` (a note), `path` (a local file), `data` (uploaded bytes,
    with `file_name`) or `url` is set; `source_router` checks that. `read` is the text a
    model already read from `data` (a voice question's transcript, a shared document's kept
    OCR text): it is stored instead of reading `data` again.
    """

    owner_id: UserId | None
    text: str | None = None
    path: Path | None = None
    data: bytes | None = None
    url: str | None = None
    file_name: str | None = None
    title: str | None = None
    read: ExtractedText | None = None

    @property
    def source_type(self) -> SourceType:
        """Note, file or URL."""
        if self.url is not None:
            return SourceType.URL
        if self.text is not None:
            return SourceType.NOTE
        return SourceType.FILE


@dataclass(frozen=True, slots=True)
class RawSource:
    """The bytes of a source, before extraction."""

    data: bytes
    file_name: str
    source_ref: str
    content_type: str | None = None
    charset: str | None = None


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """A step of an ingest, for edges that show progress ("Fetching the page..."), with the
    icon that leads it ("🎙" while transcribing, "🔎" while reading pictures)."""

    stage: str
    message: str
    icon: str = "⏳"


class IngestOutcome(StrEnum):
    """What happened to a source."""

    SAVED = "saved"
    UPDATED = "updated"
    DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True)
class IngestResult:
    """The answer to "remember this": which document, how many chunks, what changed."""

    outcome: IngestOutcome
    document_id: DocumentId
    title: str
    chunk_count: int
    embedded_chunks: int = 0
    removed_chunks: int = 0
    pending_chunks: int = 0
    masked_cards: int = 0  # card numbers masked before storing (edges tell the member)

    @property
    def chunks_text(self) -> str:
        """The chunk count for a message: "1 chunk", "14 chunks"."""
        return chunks_text(self.chunk_count)


@dataclass(frozen=True, slots=True)
class PreparedChunk:
    """A chunk with its identity, ready to store; vectors only for chunks that need them."""

    chunk: Chunk
    hash: ChunkHash
    dense: tuple[float, ...] | None = None
    sparse: SparseVector | None = None


class IngestState(TypedDict, total=False):
    """The ingest graph's state; each node adds its product."""

    request: IngestRequest
    raw: RawSource
    format: SourceFormat
    extracted: ExtractedText
    content_hash: str
    masked_cards: int
    existing: DocumentRecord | None
    prepared: list[PreparedChunk]
    result: IngestResult
