"""The ingest graph's last node, `store`: keep the original, commit the rows to SQLite in one
transaction, then write the vectors to Qdrant batch by batch (invariants 1 and 6), all as one
write that a backup never sees half of. `graphs.ingest.rechunk` uses its row and score
helpers too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from graphs.guards import injection_risks
from graphs.ingest.context import IngestContext
from graphs.ingest.formats import ExtractedText
from graphs.ingest.points import make_point
from graphs.ingest.state import (
    IngestOutcome,
    IngestProgress,
    IngestResult,
    IngestState,
    PreparedChunk,
    chunks_text,
)
from storage.documents import DocumentRecord, DuplicateContentError, NewChunk
from storage.ids import DocumentId, PointId, new_document_id, point_id
from storage.originals import RecognisedText
from storage.text_language import detect_language
from storage.timestamps import now_iso
from storage.vectors import VectorStoreError

__all__ = ["chunk_injection_scores", "new_chunk", "store"]

logger = logging.getLogger(__name__)

Update = dict[str, Any]


async def store(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    """Keep the original, commit rows to SQLite, then write vectors to Qdrant: one write
    (a backup never holds half of it)."""
    async with runtime.context.documents.writing():
        return await _store(state, runtime)


async def _store(state: IngestState, runtime: Runtime[IngestContext]) -> Update:
    context, request, raw = runtime.context, state["request"], state["raw"]
    existing, extracted = state.get("existing"), state["extracted"]
    document_id = existing.id if existing is not None else new_document_id()
    now = now_iso()
    recognised = (
        RecognisedText(extracted.text, extracted.is_markdown) if extracted.recognised else None
    )
    original = await context.originals.save(
        request.owner_id, document_id, raw.file_name, raw.data, recognised=recognised
    )
    record = DocumentRecord(
        id=document_id,
        owner_id=request.owner_id,
        title=extracted.title,
        source_type=request.source_type,
        source_ref=raw.source_ref,
        content_hash=state["content_hash"],
        original_path=str(original),
        format=state["format"].value,
        status="indexing",
        created_at=existing.created_at if existing is not None else now,
        updated_at=now,
        language=await document_language(extracted),
    )
    prepared = state["prepared"]
    # Flag only, never refuse: the score is stored, and a passage that reads like
    # instructions to an AI is shown to the model with a warning (graphs.agent.tools). The
    # title (a caption, a page's <title>) is shown with every passage, so it counts for each.
    scores = await chunk_injection_scores(extracted.title, [p.chunk.text for p in prepared])
    rows = [new_chunk(document_id, p, score) for p, score in zip(prepared, scores, strict=True)]
    try:
        removed = await context.documents.save(record, rows, replace=existing is not None)
    except DuplicateContentError:
        if existing is None:
            await context.originals.remove(request.owner_id, document_id)
        same = await context.documents.find_by_hash(request.owner_id, state["content_hash"])
        if same is None:
            raise
        result = IngestResult(
            IngestOutcome.DUPLICATE,
            same.id,
            same.title,
            len(rows),
            masked_cards=state.get("masked_cards", 0),
        )
        return {"result": result}
    except BaseException:
        if existing is None:
            await context.originals.remove(request.owner_id, document_id)
        raise
    pending = await _write_vectors(context, record, prepared, removed)
    outcome = IngestOutcome.UPDATED if existing is not None else IngestOutcome.SAVED
    embedded = sum(1 for p in prepared if p.dense is not None)
    runtime.stream_writer(
        IngestProgress(stage="saved", message=f"Saved: {record.title} ({chunks_text(len(rows))})")
    )
    result = IngestResult(
        outcome,
        document_id,
        record.title,
        len(rows),
        embedded,
        len(removed),
        pending,
        masked_cards=state.get("masked_cards", 0),
    )
    logger.info(
        "Ingested document %s (%s): %d chunks, %d embedded, %d removed, %d pending",
        document_id,
        outcome.value,
        len(rows),
        embedded,
        len(removed),
        pending,
    )
    return {"result": result}


async def chunk_injection_scores(title: str, texts: Sequence[str]) -> list[float]:
    """Each chunk's injection score: the higher of its text's and its document title's (the
    title is shown with every passage)."""
    title_risk, *risks = await asyncio.to_thread(injection_risks, [title, *texts])
    return [max(risk, title_risk) for risk in risks]


def new_chunk(document_id: DocumentId, prepared: PreparedChunk, score: float) -> NewChunk:
    """The row of a prepared chunk, with its deterministic point id and injection score."""
    piece = prepared.chunk
    return NewChunk(
        index=piece.index,
        text=piece.text,
        hash=prepared.hash,
        heading_path=piece.heading_path,
        token_count=piece.token_count,
        point_id=point_id(document_id, prepared.hash),
        injection_score=score,
    )


async def _write_vectors(
    context: IngestContext,
    record: DocumentRecord,
    prepared: list[PreparedChunk],
    removed: list[PointId],
) -> int:
    """Delete vanished points, upsert new ones batch by batch; return chunks left pending."""
    collection = record.collection
    todo = [p for p in prepared if p.dense is not None]
    try:
        await context.index.delete_points(collection, removed)
        for start in range(0, len(todo), context.limits.upsert_batch):
            batch = todo[start : start + context.limits.upsert_batch]
            points = [
                make_point(
                    point_id(record.id, p.hash),
                    document_id=record.id,
                    owner_id=record.owner_id,
                    chunk_index=p.chunk.index,
                    dense=p.dense or (),
                    sparse=p.sparse,
                )
                for p in batch
            ]
            await context.index.upsert(collection, points)
            await context.documents.mark_indexed([point.id for point in points])
    except VectorStoreError:
        logger.warning("Vector write failed for document %s; re-index will retry", record.id)
        return await context.documents.pending_count(record.id)
    return 0


async def document_language(extracted: ExtractedText) -> str:
    """The language of a document: the one a model heard (whisper, for a recording), else the
    one its text is written in (lingua); "" when neither can tell."""
    if extracted.language:
        return extracted.language
    return await asyncio.to_thread(detect_language, extracted.text) or ""
