"""What the ingest graph's nodes work with, handed in at run time (LangGraph runtime context)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from graphs.ingest.extract_protocol import ReadingStep
from graphs.ingest.formats import ExtractedText, SourceFormat
from storage.documents import DocumentRepository
from storage.knowledge_index import KnowledgeIndex
from storage.originals import OriginalStore
from storage.vectors import SparseVector

__all__ = [
    "IngestContext",
    "IngestLimits",
    "LexicalEncoder",
    "PageFetcher",
    "PassageEmbedder",
    "TextExtractor",
]


class PassageEmbedder(Protocol):
    """Dense embeddings for passages, and the tokenizer that counts their tokens."""

    async def embed_passages(
        self, texts: Sequence[str], *, done: Callable[[int], None] | None = None
    ) -> list[list[float]]:
        """One unit vector per text; `done(n)` as the first n are embedded."""

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of each token of `text`."""


class LexicalEncoder(Protocol):
    """Sparse lexical (BM25-style) vectors for hybrid search."""

    def encode_document(self, text: str) -> SparseVector:
        """Term weights of a passage."""


class TextExtractor(Protocol):
    """Extracts text from untrusted bytes with bounded CPU and memory (see `extract_pool`)."""

    async def extract(
        self,
        data: bytes,
        fmt: SourceFormat,
        *,
        filename: str | None,
        charset: str | None,
        max_decompressed_bytes: int,
        on_step: Callable[[ReadingStep], None] | None = None,
    ) -> ExtractedText:
        """Clean text and a title, or an `IngestError` saying why not; the steps of a long
        reading (pages OCR'd, minutes transcribed) go to `on_step`."""


class FetchedPage(Protocol):
    """What a URL fetch returns (see `graphs.ingest.url_fetch.FetchedResource`)."""

    @property
    def final_url(self) -> str: ...
    @property
    def content_type(self) -> str: ...
    @property
    def charset(self) -> str | None: ...
    @property
    def body(self) -> bytes: ...


class PageFetcher(Protocol):
    """Fetches a URL safely (see `graphs.ingest.url_fetch.SafeFetcher`)."""

    async def fetch(
        self, url: str, *, extra_headers: Mapping[str, str] | None = None
    ) -> FetchedPage:
        """The response body, or an `IngestError` saying why not."""


@dataclass(frozen=True, slots=True)
class IngestLimits:
    """Caps and chunk sizes, from settings."""

    max_file_bytes: int
    max_decompressed_bytes: int
    chunk_tokens: int
    overlap_tokens: int
    max_chunks: int = 10_000
    upsert_batch: int = 64
    max_audio_seconds: float = 1200.0  # a recording announced longer is refused undownloaded


@dataclass(frozen=True, slots=True)
class IngestContext:
    """Everything the nodes use; built once by the composition root."""

    documents: DocumentRepository
    originals: OriginalStore
    index: KnowledgeIndex
    embedder: PassageEmbedder
    lexical: LexicalEncoder
    fetcher: PageFetcher
    extractor: TextExtractor
    limits: IngestLimits
