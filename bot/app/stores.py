"""The stores under the core, opened in order and checked: the data directory's lock, SQLite,
the vector store, the embedding model and the record of which model made the stored vectors
(`vector-index.json`), and the two vector indexes. A wrong or unreadable one stops Lore
with one line (`StartupError`)."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from dataclasses import dataclass

from bot.app.models import vector_store
from bot.app.stored_model import current_identity
from bot.errors import StartupError, StoreBusyError
from bot.settings import Settings
from storage.data_lock import DataDirBusyError, DataDirLock
from storage.database import Database, DatabaseError
from storage.embeddings import Embedder
from storage.index_identity import (
    IndexIdentity,
    IndexIdentityError,
    ModelChangedError,
    check_identity,
    read_identity,
    write_identity,
)
from storage.knowledge_index import KnowledgeIndex
from storage.lexical import DEFAULT_LEXICAL_SCHEME, LexicalEncoder, LexicalScheme
from storage.memory_index import MemoryIndex
from storage.model_files import ModelFilesError, ensure_model_dir, model_choice
from storage.vectors import VectorStore, VectorStoreError

__all__ = ["Stores", "check_vectors_model", "open_stores"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Stores:
    database: Database
    store: VectorStore
    embedder: Embedder
    lexical: LexicalEncoder
    index: KnowledgeIndex
    memory_index: MemoryIndex


async def open_stores(
    settings: Settings, stack: AsyncExitStack, *, rebuild_vectors: bool = False
) -> Stores:
    lock = DataDirLock(settings.data_dir)
    try:
        lock.acquire()
    except DataDirBusyError as exc:
        raise StoreBusyError(str(exc)) from exc
    stack.callback(lock.release)
    try:
        database = await stack.enter_async_context(Database(settings.database_path))
        store = vector_store(settings)
        stack.push_async_callback(store.close)
        model_dir = await ensure_model_dir(
            settings.models_dir, model_choice(settings.embedding_model)
        )
        embedder = await Embedder.load(
            model_dir,
            threads=settings.embedding_threads,
            batch_tokens=settings.embedding_batch_tokens,
            memory_arena=settings.embedding_memory_arena,
        )
        current = current_identity(settings, embedder, DEFAULT_LEXICAL_SCHEME)
        stored = await asyncio.to_thread(read_identity, settings.data_dir)
        scheme = await asyncio.to_thread(check_vectors_model, settings, current, rebuild_vectors)
        sizes = {"dense_size": embedder.dimension, "hnsw_threshold": settings.hnsw_threshold}
        index = KnowledgeIndex(store, **sizes)
        memory_index = MemoryIndex(store, **sizes)
        if rebuild_vectors and stored is not None and stored.dimension != embedder.dimension:
            # Vectors of another size fit no collection of this one: every vector is made
            # again from SQLite and the turn log (`lore reindex --all`).
            logger.info(
                "dropping the vector collections to rebuild them at %d dimensions",
                embedder.dimension,
            )
            await index.drop()
            await memory_index.drop()
        await index.ensure()
        await memory_index.ensure()
    except (DatabaseError, ModelFilesError, VectorStoreError, IndexIdentityError) as exc:
        raise StartupError(f"Lore cannot start: {exc}") from exc
    except ModelChangedError as exc:
        raise StartupError(str(exc)) from exc
    lexical = LexicalEncoder(scheme=scheme)
    return Stores(database, store, embedder, lexical, index, memory_index)


def check_vectors_model(settings: Settings, current: IndexIdentity, rebuild: bool) -> LexicalScheme:
    """Refuse vectors of another model (`lore reindex --all` passes `rebuild`); record the
    model on a first start (or the first start of a data directory from before the record).
    The lexical scheme to use: the stored vectors' (`current`'s when rebuilding or new)."""
    stored = read_identity(settings.data_dir)
    if stored is None:
        write_identity(settings.data_dir, current)
        return current.lexical
    if rebuild:
        return current.lexical
    check_identity(stored, current)
    if not stored.same_chunks(current):
        logger.warning(
            "The stored chunks were cut with CHUNK_TOKENS=%d and CHUNK_OVERLAP_TOKENS=%d, but"
            " the settings now say %d and %d; run `lore reindex --all` to cut every document"
            " again (until then only new and changed sources are cut the new way)",
            stored.chunk_tokens,
            stored.chunk_overlap_tokens,
            current.chunk_tokens,
            current.chunk_overlap_tokens,
        )
    if stored.lexical != current.lexical:
        logger.info(
            "The stored lexical vectors were made with the %s scheme; Lore keeps it until"
            " `lore reindex --all` moves them to %s (each text stemmed in its own language)",
            stored.lexical,
            current.lexical,
        )
    return stored.lexical
