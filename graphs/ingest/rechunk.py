"""Re-chunking: cut every stored document again from its kept original with the current chunk
settings (`lore reindex --all` after CHUNK_TOKENS or CHUNK_OVERLAP_TOKENS changed).

Each document takes the ingest graph's own steps: its original (invariant 6: files, notes
and fetched pages are all kept) is extracted again in the limited worker, cut by the ingest
chunker (`nodes.cut_chunks`), scored for injection, embedded; then, as one write, SQLite
first (the document's chunks replaced in one transaction: chunks that are cut the same keep
their rows, the others are deleted or inserted `pending`) and Qdrant second (the vanished
points deleted, every point of the new cut upserted under its deterministic id, the chunks
marked indexed). A crash leaves each document cut the old way or the new way; what it
leaves undone (pending chunks, points SQLite no longer knows) is what `lore reindex`
finishes (invariant 1). The document row keeps its id (its handle), owner (shared or
private), title, pin, dates and content hash; no other table refers to chunk rows.

A document whose original is missing, no longer extracts, or now reads differently (its
text no longer has the stored content hash, e.g. after an extractor upgrade) keeps its
chunks and is reported, so nothing changes content behind the operator's back. Text a model
read (OCR, a transcript) is kept beside its original and cut again from there: a recording
is never transcribed again.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath

from graphs.ingest.context import IngestContext
from graphs.ingest.errors import IngestError
from graphs.ingest.extract_pool import ExtractionUnavailableError
from graphs.ingest.formats import ExtractedText, SourceFormat
from graphs.ingest.nodes import cut_chunks
from graphs.ingest.points import embedding_text, lexical_vectors, make_point
from graphs.ingest.state import PreparedChunk
from graphs.ingest.store_node import chunk_injection_scores, new_chunk
from storage.documents import DocumentRecord
from storage.ids import DocumentId, point_id

__all__ = ["KeptDocument", "RechunkReport", "rechunk_all", "rechunk_document"]

logger = logging.getLogger(__name__)


class _OriginalChangedError(Exception):
    """The kept original no longer gives the text the document was stored with."""


@dataclass(frozen=True, slots=True)
class KeptDocument:
    """A document that kept its chunks, and why."""

    document_id: DocumentId
    handle: str
    title: str
    reason: str


@dataclass(frozen=True, slots=True)
class RechunkReport:
    """What one re-chunking run did."""

    documents: int  # cut again
    chunks_before: int  # of the documents cut again
    chunks_after: int
    kept: tuple[KeptDocument, ...]


async def rechunk_all(
    context: IngestContext, *, progress: Callable[[int], None] | None = None
) -> RechunkReport:
    """Cut every stored document again (see the module docstring); `progress(1)` after each."""
    done = before = after = 0
    kept: list[KeptDocument] = []
    for document_id in sorted(await context.documents.document_ids()):
        record = await context.documents.get(document_id)
        if record is not None:
            try:
                old, new = await rechunk_document(context, record)
            except ExtractionUnavailableError:
                raise
            except (IngestError, OSError, _OriginalChangedError) as exc:
                kept.append(KeptDocument(record.id, record.handle, record.title, str(exc)))
                logger.warning("Document %s keeps its chunks: %s", record.id, exc)
            else:
                done, before, after = done + 1, before + old, after + new
        if progress is not None:
            progress(1)
    logger.info("Re-chunked %d documents: %d chunks, %d before", done, after, before)
    return RechunkReport(done, before, after, tuple(kept))


async def rechunk_document(context: IngestContext, record: DocumentRecord) -> tuple[int, int]:
    """Cut one document again from its original and replace its chunks and points; the
    number of chunks before and after."""
    extracted = await _stored_text(context, record)
    if hashlib.sha256(extracted.text.encode()).hexdigest() != record.content_hash:
        raise _OriginalChangedError("its original no longer reads as the text it was stored with")
    prepared = await cut_chunks(extracted, context)
    scores = await chunk_injection_scores(record.title, [p.chunk.text for p in prepared])
    texts = [embedding_text(record.title, p.chunk.heading_path, p.chunk.text) for p in prepared]
    dense = await context.embedder.embed_passages(texts)
    rows = [new_chunk(record.id, p, score) for p, score in zip(prepared, scores, strict=True)]
    before = len(await context.documents.chunk_hashes(record.id))
    async with context.documents.writing():  # a backup sees the old cut or the new one
        removed = await context.documents.save(record, rows, replace=True)
        await context.index.delete_points(record.collection, removed)
        await _upsert(context, record, prepared, dense, texts)
    return before, len(rows)


async def _stored_text(context: IngestContext, record: DocumentRecord) -> ExtractedText:
    """The document's text: as a model once read it (kept beside the original), else its
    original extracted again in the limited worker."""
    recognised = await context.originals.read_recognised(record.original_path)
    if recognised is not None:
        return ExtractedText(record.title, recognised.text, recognised.is_markdown, True)
    data = await context.originals.read(record.original_path)
    return await context.extractor.extract(
        data,
        SourceFormat(record.format),
        filename=PurePath(record.original_path).name,
        charset=None,
        max_decompressed_bytes=context.limits.max_decompressed_bytes,
    )


async def _upsert(
    context: IngestContext,
    record: DocumentRecord,
    prepared: list[PreparedChunk],
    dense: list[list[float]],
    texts: list[str],
) -> None:
    step = context.limits.upsert_batch
    sparse = await lexical_vectors(context.lexical, texts)
    for start in range(0, len(prepared), step):
        points = [
            make_point(
                point_id(record.id, p.hash),
                document_id=record.id,
                owner_id=record.owner_id,
                chunk_index=p.chunk.index,
                dense=vector,
                sparse=terms,
            )
            for p, vector, terms in zip(
                prepared[start : start + step],
                dense[start : start + step],
                sparse[start : start + step],
                strict=True,
            )
        ]
        await context.index.upsert(record.collection, points)
        await context.documents.mark_indexed([point.id for point in points])
