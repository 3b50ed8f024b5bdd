"""The re-index job: finish what a crash or a failed vector write left undone (invariant 1).

It scores chunks whose injection score is not known yet (stored before migration 8), re-embeds
every chunk still `pending` and upserts it (point ids are deterministic,
so a retry overwrites), removes points SQLite does not know, and removes original
folders whose document never committed. Safe to run at any time, any number of times.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from graphs.guards import injection_risks
from graphs.ingest.context import IngestContext
from graphs.ingest.points import embedding_text, lexical_vectors, make_point
from storage.document_records import ChunkRecord
from storage.documents import Collection
from storage.ids import DocumentId
from storage.vectors import VectorPoint

__all__ = ["RepairReport", "reembed_all", "repair_index"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What one repair run fixed."""

    reembedded_chunks: int
    removed_orphan_points: int
    removed_orphan_folders: int
    scored_chunks: int = 0


async def repair_index(
    context: IngestContext, *, batch_size: int = 64, folder_min_age_seconds: float = 3600.0
) -> RepairReport:
    """Re-embed pending chunks, drop orphan points and orphan originals.

    An original is written just before its document commits, so only folders older
    than `folder_min_age_seconds` count as orphans while ingests may be running; a
    process that holds the data store alone may pass 0.
    """
    reembedded = await _reembed_pending(context, batch_size)
    scored = await _score_unscored(context, batch_size)
    orphans = 0
    for collection in Collection:
        # Qdrant first: a point written after this read is not judged; one read
        # here had its SQLite row committed before it was written (store order).
        stored = await context.index.point_ids(collection)
        known = await context.documents.point_ids(collection)
        stray = sorted(stored - known)
        if stray:
            await context.index.delete_points(collection, stray)
            orphans += len(stray)
    folders = await _remove_orphan_folders(context, folder_min_age_seconds)
    report = RepairReport(reembedded, orphans, folders, scored)
    logger.info(
        "Repair: %d chunks re-embedded, %d scored, %d orphan points and %d orphan folders removed",
        reembedded,
        scored,
        orphans,
        folders,
    )
    return report


async def _score_unscored(context: IngestContext, batch_size: int) -> int:
    """Backfill injection scores of chunks stored before they were scored (migration 8)."""
    done = 0
    while batch := await context.documents.unscored_chunks(batch_size):
        # As at ingest: a chunk's score is its text's or its document title's, the higher.
        titles = sorted({title for _, _, title in batch})
        texts = [text for _, text, _ in batch]
        risks = await asyncio.to_thread(injection_risks, [*titles, *texts])
        title_risk = dict(zip(titles, risks[: len(titles)], strict=True))
        chunk_risks = risks[len(titles) :]
        await context.documents.set_injection_scores(
            [
                (point, max(risk, title_risk[title]))
                for (point, _, title), risk in zip(batch, chunk_risks, strict=True)
            ]
        )
        done += len(batch)
    return done


async def _reembed_pending(context: IngestContext, batch_size: int) -> int:
    done = 0
    while batch := await context.documents.pending_chunks(batch_size):
        await _reembed(context, batch)
        done += len(batch)
    return done


async def reembed_all(
    context: IngestContext,
    *,
    batch_size: int = 64,
    progress: Callable[[int], None] | None = None,
    only: Container[DocumentId] | None = None,
) -> int:
    """Embed every stored chunk (of the documents in `only`, when given) again with the current
    model and overwrite its point (ids are deterministic); `progress(n)` after each batch.
    Chunks still pending end indexed."""
    done, after = 0, 0
    while True:
        page, after = await context.documents.chunk_page(after, batch_size)
        if not page:
            return done
        batch = page if only is None else [c for c in page if c.document_id in only]
        if batch:
            await _reembed(context, batch)
        done += len(batch)
        if progress is not None:
            progress(len(batch))


async def _reembed(context: IngestContext, batch: Sequence[ChunkRecord]) -> None:
    texts = [embedding_text(c.document_title, c.heading_path, c.text) for c in batch]
    vectors = await context.embedder.embed_passages(texts)
    sparse = await lexical_vectors(context.lexical, texts)
    by_collection: dict[Collection, list[VectorPoint]] = {}
    for record, terms, dense in zip(batch, sparse, vectors, strict=True):
        point = make_point(
            record.point_id,
            document_id=record.document_id,
            owner_id=record.owner_id,
            chunk_index=record.chunk_index,
            dense=dense,
            sparse=terms,
        )
        by_collection.setdefault(record.collection, []).append(point)
    pending = [record.point_id for record in batch if record.vector_status == "pending"]
    async with context.documents.writing():  # a backup sees all of a batch or none
        for collection, points in by_collection.items():
            await context.index.upsert(collection, points)
        await context.documents.mark_indexed(pending)


async def _remove_orphan_folders(context: IngestContext, min_age_seconds: float) -> int:
    on_disk = await context.originals.stored_documents()
    known = await context.documents.document_ids()
    cutoff = time.time() - min_age_seconds
    removed = 0
    for document_id, folder in on_disk.items():
        if document_id not in known and folder.stat().st_mtime <= cutoff:
            await context.originals.remove_folder(folder)
            removed += 1
    return removed
