"""`lore reindex --all`: rebuild every vector with the embedding model Lore loads now.

Lore refuses to start on vectors made by another model (`storage.index_identity`); this is
the way forward after changing EMBEDDING_MODEL. Every chunk stored in SQLite is embedded
again and its point overwritten (ids are deterministic), with a progress bar; conversation
memory is rebuilt from the turn log. The identity file is written last, so a rebuild cut
short leaves the old identity and the next start refuses again until it is run to the end.
Chunks keep the cut they were stored with: after a change of CHUNK_TOKENS or
CHUNK_OVERLAP_TOKENS only documents ingested again are cut the new way (the command says so).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import TYPE_CHECKING

from tqdm import tqdm

from bot.settings import Settings
from storage.index_identity import IndexIdentity, read_identity, write_identity

if TYPE_CHECKING:
    from bot.app import Lore
    from storage.embeddings import Embedder

__all__ = ["current_identity", "reindex_all"]

logger = logging.getLogger(__name__)


def current_identity(settings: Settings, embedder: Embedder) -> IndexIdentity:
    """The identity of the vectors this process makes."""
    return IndexIdentity(
        model=embedder.model_name,
        model_sha256=embedder.model_sha256,
        dimension=embedder.dimension,
        chunk_tokens=settings.chunk_tokens,
        chunk_overlap_tokens=settings.chunk_overlap_tokens,
    )


async def reindex_all(lore: Lore, *, show_progress: bool = True) -> str:
    """Rebuild every vector, record the model, and say what was done (one line or two)."""
    data_dir = lore.settings.data_dir
    stored = await asyncio.to_thread(read_identity, data_dir)
    current = current_identity(lore.settings, lore.embedder)
    total = await lore.bot.maintenance.chunk_count()
    with tqdm(
        total=total,
        unit="chunk",
        desc="Re-embedding",
        disable=not show_progress,
        file=sys.stderr,
    ) as bar:

        def advance(chunks: int) -> None:
            bar.update(chunks)

        report = await lore.bot.maintenance.reindex_all(progress=advance)
    # The chunks were not cut again: keep recording the settings they were cut with.
    recorded = current
    if stored is not None:
        recorded = IndexIdentity(
            model=current.model,
            model_sha256=current.model_sha256,
            dimension=current.dimension,
            chunk_tokens=stored.chunk_tokens,
            chunk_overlap_tokens=stored.chunk_overlap_tokens,
        )
    await asyncio.to_thread(write_identity, data_dir, recorded)
    logger.info("Rebuilt every vector with %s", current.model)
    message = (
        f"Re-embedded {report.chunks} chunks and {report.memory_exchanges} remembered"
        f" exchanges with {current.model}."
    )
    if not recorded.same_chunks(current):
        message += (
            "\nCHUNK_TOKENS or CHUNK_OVERLAP_TOKENS changed since the chunks were cut;"
            " documents keep their chunks until they are ingested again."
        )
    return message
