"""The ingest graph's nodes up to the vectors: route, fetch, clean, chunk, embed. Each is small
and async; the last node, `store`, is in `graphs.ingest.store_node`.

Errors are `IngestError`s raised before anything is written; `store` writes the
original, then SQLite (one transaction), then Qdrant, so a crash at any point
leaves either nothing or rows the re-index job can finish (invariants 1 and 6).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePath
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from langgraph.runtime import Runtime

from graphs.guards.payment import mask_payment_cards
from graphs.ingest.chunking import chunk_text
from graphs.ingest.context import IngestContext
from graphs.ingest.errors import (
    FileTooLargeError,
    TooManyChunksError,
    UnsupportedSourceError,
)
from graphs.ingest.formats import ExtractedText, SourceFormat, detect_format
from graphs.ingest.points import chunk_hash, embedding_text, lexical_vectors
from graphs.ingest.reading_progress import reading_progress
from graphs.ingest.state import (
    IngestOutcome,
    IngestProgress,
    IngestResult,
    IngestState,
    PreparedChunk,
    RawSource,
    chunks_text,
)
from storage.documents import DocumentRecord, DocumentRepository

__all__ = [
    "chunk",
    "clean",
    "cut_chunks",
    "embed",
    "fetch_url",
    "read_file",
    "route_after_clean",
    "route_source",
    "source_router",
    "take_note",
]

logger = logging.getLogger(__name__)

Update = dict[str, Any]
#: Least seconds between two "Embedding 1,200 of 5,000 chunks..." lines of one document.
EMBEDDING_PROGRESS_SECONDS = 2.0


def _progress(runtime: Runtime[IngestContext], stage: str, message: str) -> None:
    runtime.stream_writer(IngestProgress(stage=stage, message=message))


async def source_router(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Check that the request names exactly one source of a kind Lore reads."""
    request = state["request"]
    given = [v for v in (request.text, request.path, request.data, request.url) if v is not None]
    if len(given) != 1:
        raise UnsupportedSourceError("Send one note, file or link at a time.")
    if request.data is not None and not request.file_name:
        raise UnsupportedSourceError("An uploaded file needs its file name.")
    _progress(runtime, "received", "Got it, reading...")
    return {}


def route_source(state: IngestState) -> Literal["fetch_url", "read_file", "take_note"]:
    """Pick the fetch step for the kind of source."""
    request = state["request"]
    if request.url is not None:
        return "fetch_url"
    if request.text is not None:
        return "take_note"
    if request.path is not None or request.data is not None:
        return "read_file"
    raise AssertionError("source_router lets only one source kind through")


async def take_note(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """A note is its own source: its text, kept as a Markdown file."""
    text = state["request"].text or ""
    data = text.encode()
    if len(data) > runtime.context.limits.max_file_bytes:
        raise FileTooLargeError(_too_large(len(data), runtime.context.limits.max_file_bytes))
    raw = RawSource(data=data, file_name="note.md", source_ref=_note_ref(data))
    return {"raw": raw}


def _note_ref(data: bytes) -> str:
    return f"note:{hashlib.sha256(data).hexdigest()[:16]}"


async def read_file(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Read a local file or take uploaded bytes, refusing anything over the size cap."""
    request = state["request"]
    cap = runtime.context.limits.max_file_bytes
    if request.path is not None:
        path = request.path
        data = await asyncio.to_thread(_read_capped, path, cap)
        raw = RawSource(data=data, file_name=path.name, source_ref=str(path.resolve()))
    else:
        data = request.data or b""
        if len(data) > cap:
            raise FileTooLargeError(_too_large(len(data), cap))
        name = request.file_name or "upload"
        raw = RawSource(data=data, file_name=name, source_ref=f"file:{name}")
    return {"raw": raw}


def _read_capped(path: Path, cap: int) -> bytes:
    if not path.is_file():
        raise UnsupportedSourceError(f"There is no file at {path}.")
    size = path.stat().st_size
    if size > cap:
        raise FileTooLargeError(_too_large(size, cap))
    return path.read_bytes()


def _too_large(size: int, cap: int) -> str:
    return (
        f"That file is {size / 1_048_576:.1f} MB; Lore accepts files up to "
        f"{cap / 1_048_576:.1f} MB."
    )


async def fetch_url(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Fetch a URL through the SSRF-safe fetcher."""
    url = state["request"].url or ""
    _progress(runtime, "fetching", "Fetching the page...")
    page = await runtime.context.fetcher.fetch(url)
    path = unquote(urlsplit(page.final_url).path)
    name = Path(path).name or "page.html"
    raw = RawSource(
        data=page.body,
        file_name=name,
        source_ref=url,
        content_type=page.content_type,
        charset=page.charset,
    )
    return {"raw": raw}


async def clean(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Extract clean text (in a limited worker process), mask card numbers, and recognise
    content this owner already has: the same source sent again with the same bytes is not
    read again (a scan is not OCR'd twice), the same text under another name is recognised
    once read."""
    request, raw = state["request"], state["raw"]
    documents = runtime.context.documents
    known = await documents.find_by_source(request.owner_id, raw.source_ref)
    if known is not None and await runtime.context.originals.holds(known.original_path, raw.data):
        return {"result": await _duplicate(documents, known, 0)}
    fmt = detect_format(raw.file_name, raw.content_type, raw.data[:2048])
    extracted = request.read or await runtime.context.extractor.extract(
        raw.data,
        fmt,
        filename=raw.file_name,
        charset=raw.charset,
        max_decompressed_bytes=runtime.context.limits.max_decompressed_bytes,
        on_step=lambda step: runtime.stream_writer(reading_progress(step)),
    )
    if request.title:
        extracted = replace(extracted, title=request.title)
    extracted, raw, fmt, masked = await asyncio.to_thread(_mask_cards, extracted, raw, fmt)
    content_hash = hashlib.sha256(extracted.text.encode()).hexdigest()
    same = await documents.find_by_hash(request.owner_id, content_hash)
    update: Update = {
        "raw": raw,
        "format": fmt,
        "extracted": extracted,
        "content_hash": content_hash,
        "masked_cards": masked,
    }
    if same is not None:
        update["result"] = await _duplicate(documents, same, masked)
        return update
    update["existing"] = known
    return update


async def _duplicate(
    documents: DocumentRepository, same: DocumentRecord, masked: int
) -> IngestResult:
    chunk_count = len(await documents.chunk_hashes(same.id))
    return IngestResult(
        IngestOutcome.DUPLICATE, same.id, same.title, chunk_count, masked_cards=masked
    )


def _mask_cards(
    extracted: ExtractedText, raw: RawSource, fmt: SourceFormat
) -> tuple[ExtractedText, RawSource, SourceFormat, int]:
    """Mask card numbers in the text and title; then the original kept on disk is the
    masked text too (the file with the numbers is not kept), as Markdown or plain text."""
    text, title = mask_payment_cards(extracted.text), mask_payment_cards(extracted.title)
    masked = text.cards or title.cards  # a title taken from the text repeats its numbers
    if not masked:
        return extracted, raw, fmt, 0
    fmt = SourceFormat.MARKDOWN if extracted.is_markdown else SourceFormat.TEXT
    stem = PurePath(raw.file_name).stem or "source"
    name = f"{stem}.md" if extracted.is_markdown else f"{stem}.txt"
    data = text.text.encode()
    # A note's reference hashes its text: hash the masked text, not the numbers.
    source_ref = _note_ref(data) if raw.source_ref.startswith("note:") else raw.source_ref
    kept = RawSource(data=data, file_name=name, source_ref=source_ref)
    logger.info("Masked %d card number(s) in %s before storing it", masked, fmt.value)
    return replace(extracted, text=text.text, title=title.text), kept, fmt, masked


def route_after_clean(state: IngestState) -> Literal["chunk", "__end__"]:
    """A duplicate ends here; anything else is chunked."""
    return "__end__" if "result" in state else "chunk"


async def chunk(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Split the text into heading-aware token windows; identical chunks are kept once."""
    extracted = state["extracted"]
    prepared = await cut_chunks(extracted, runtime.context)
    _progress(runtime, "reading", f"Read {extracted.title!r}: {chunks_text(len(prepared))}")
    return {"prepared": prepared}


async def cut_chunks(extracted: ExtractedText, context: IngestContext) -> list[PreparedChunk]:
    """The ingest chunker: heading-aware windows of the context's chunk settings, each chunk
    once, numbered in order (`graphs.ingest.rechunk` cuts stored documents again with it).
    Raises `TooManyChunksError` past the per-document cap."""
    limits = context.limits
    chunks = await asyncio.to_thread(
        chunk_text,
        extracted.text,
        is_markdown=extracted.is_markdown,
        token_spans=context.embedder.token_spans,
        max_tokens=limits.chunk_tokens,
        overlap_tokens=limits.overlap_tokens,
    )
    prepared: list[PreparedChunk] = []
    seen: set[str] = set()
    for piece in chunks:
        digest = chunk_hash(piece.text, piece.heading_path)
        if digest not in seen:
            seen.add(digest)
            prepared.append(PreparedChunk(chunk=replace(piece, index=len(prepared)), hash=digest))
    if len(prepared) > limits.max_chunks:
        raise TooManyChunksError(_too_many_chunks(len(prepared), limits.max_chunks))
    return prepared


def _too_many_chunks(count: int, cap: int) -> str:
    return (
        f"That is too long to keep as one document: it makes {count:,} chunks, and Lore keeps "
        f"at most {cap:,} per document (the owner sets this with MAX_CHUNKS_PER_DOCUMENT). "
        "Please split it into smaller parts and send them one by one."
    )


async def embed(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Embed only the chunks that have no stored vector yet (a changed source re-embeds little)."""
    existing, title = state.get("existing"), state["extracted"].title
    indexed: set[str] = set()
    if existing is not None:
        statuses = await runtime.context.documents.chunk_hashes(existing.id)
        indexed = {digest for digest, status in statuses.items() if status == "indexed"}
    todo = [p for p in state["prepared"] if p.hash not in indexed]
    texts = [embedding_text(title, p.chunk.heading_path, p.chunk.text) for p in todo]
    if texts:
        _progress(runtime, "embedding", f"Embedding {chunks_text(len(texts))}...")
    dense = await runtime.context.embedder.embed_passages(
        texts, done=_embedding_progress(runtime, len(texts))
    )
    sparse = await lexical_vectors(runtime.context.lexical, texts)
    vectors = {
        p.hash: replace(p, dense=tuple(vector), sparse=terms)
        for p, vector, terms in zip(todo, dense, sparse, strict=True)
    }
    return {"prepared": [vectors.get(p.hash, p) for p in state["prepared"]]}


def _embedding_progress(runtime: Runtime[IngestContext], total: int) -> Callable[[int], None]:
    """Tell how far the embedding is, at most every `EMBEDDING_PROGRESS_SECONDS`."""
    last = time.monotonic()

    def done(count: int) -> None:
        nonlocal last
        now = time.monotonic()
        if count < total and now - last >= EMBEDDING_PROGRESS_SECONDS:
            last = now
            _progress(runtime, "embedding", f"Embedding {count:,} of {total:,} chunks...")

    return done
