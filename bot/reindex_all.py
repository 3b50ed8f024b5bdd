"""`lore reindex --all`: rebuild every vector with the embedding model Lore loads now.

Lore refuses to start on vectors made by another model (`storage.index_identity`); this is
the way forward after changing EMBEDDING_MODEL. Every chunk stored in SQLite is embedded
again and its point overwritten (ids are deterministic), with a progress bar; conversation
memory is rebuilt from the turn log; the lexical vectors are made with the current scheme
(`storage.lexical`). The identity file is written last, so a rebuild cut
short leaves the old identity and the next start refuses again until it is run to the end.
When CHUNK_TOKENS or CHUNK_OVERLAP_TOKENS differ from the settings the chunks were cut
with, every document is first cut again from its kept original (`graphs.ingest.rechunk`);
the new settings are recorded only when every document could be.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from tqdm import tqdm

from bot.app.stored_model import current_identity
from storage.index_identity import read_identity, write_identity

if TYPE_CHECKING:
    from bot.app import Lore

__all__ = ["reindex_all"]

logger = logging.getLogger(__name__)


async def reindex_all(lore: Lore, *, show_progress: bool = True) -> str:
    """Rebuild every vector (and cut every document again when the chunk settings changed),
    record the model and the chunk settings, and say what was done (a line or two)."""
    data_dir = lore.settings.data_dir
    stored = await asyncio.to_thread(read_identity, data_dir)
    current = current_identity(lore.settings, lore.embedder, lore.lexical.scheme)
    maintenance = lore.bot.maintenance
    rechunk = stored is not None and not stored.same_chunks(current)
    if rechunk:
        total, unit, what = await maintenance.document_count(), "document", "Re-chunking"
    else:
        total, unit, what = await maintenance.chunk_count(), "chunk", "Re-embedding"
    with tqdm(total=total, unit=unit, desc=what, disable=not show_progress, file=sys.stderr) as bar:

        def advance(done: int) -> None:
            bar.update(done)

        report = await maintenance.reindex_all(progress=advance, rechunk=rechunk)
    recorded = current
    cut = report.rechunked
    if stored is not None and (cut is None or cut.kept):
        # Some chunks keep the old cut: keep recording the settings they were cut with.
        recorded = replace(
            current,
            chunk_tokens=stored.chunk_tokens,
            chunk_overlap_tokens=stored.chunk_overlap_tokens,
        )
    await asyncio.to_thread(write_identity, data_dir, recorded)
    logger.info("Rebuilt every vector with %s", current.model)
    remembered = f"{report.memory_exchanges} remembered exchanges with {current.model}."
    if cut is None:
        return f"Re-embedded {report.chunks} chunks and {remembered}"
    message = (
        f"Re-chunked {cut.documents} documents into {cut.chunks_after} chunks"
        f" ({cut.chunks_before} before) with CHUNK_TOKENS={current.chunk_tokens} and"
        f" CHUNK_OVERLAP_TOKENS={current.chunk_overlap_tokens}; re-embedded"
        f" {report.chunks} chunks and {remembered}"
    )
    if cut.kept:
        handles = ", ".join(kept.handle for kept in cut.kept)
        message += (
            f"\n{len(cut.kept)} documents kept their chunks because their originals cannot be"
            f" cut again ({handles}; the log says why): ingest them again, or delete them with"
            " `lore delete HANDLE`."
        )
    return message
