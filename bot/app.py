"""Composition root: build every long-lived component from `Settings`, stacked in one exit stack.

The only module (with `bot.cli`) that constructs concrete objects and reads settings.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

from bot.errors import StartupError, StoreBusyError
from bot.service import Bot
from bot.settings import Settings
from graphs.ingest.context import IngestContext, IngestLimits
from graphs.ingest.graph import build_ingest_graph
from graphs.ingest.url_fetch import FetchLimits, SafeFetcher
from graphs.ingest.url_safety import Address
from graphs.retrieval import Retriever
from storage.data_lock import DataDirBusyError, DataDirLock
from storage.database import Database, DatabaseError
from storage.documents import DocumentRepository
from storage.edge_store import EdgeVectorStore
from storage.embeddings import Embedder, LexicalEncoder
from storage.knowledge_index import KnowledgeIndex
from storage.model_files import ModelFilesError, ensure_model_dir, model_choice
from storage.originals import OriginalStore
from storage.server_store import ServerVectorStore
from storage.users import UserRepository
from storage.vectors import VectorStore, VectorStoreError

__all__ = ["Lore", "open_lore"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Lore:
    """The running core: the `Bot` service plus what edges and jobs need beside it."""

    bot: Bot
    settings: Settings
    database: Database
    index: KnowledgeIndex
    vector_store: VectorStore
    embedder: Embedder


@asynccontextmanager
async def open_lore(
    settings: Settings, *, fetch_allowed_addresses: frozenset[Address] = frozenset()
) -> AsyncIterator[Lore]:
    """Open everything in dependency order; close it in reverse, whatever happens.

    `fetch_allowed_addresses` exists for tests only (a page served on 127.0.0.1);
    no setting reaches it, so a deployment cannot turn the SSRF guard off.
    """
    async with AsyncExitStack() as stack:
        lock = DataDirLock(settings.data_dir)
        try:
            lock.acquire()
        except DataDirBusyError as exc:
            raise StoreBusyError(str(exc)) from exc
        stack.callback(lock.release)
        try:
            database = await stack.enter_async_context(Database(settings.database_path))
            store = _vector_store(settings)
            stack.push_async_callback(store.close)
            choice = model_choice(settings.embedding_model)
            model_dir = await ensure_model_dir(settings.models_dir, choice)
            embedder = await Embedder.load(model_dir, threads=settings.embedding_threads)
            index = KnowledgeIndex(
                store, dense_size=embedder.dimension, hnsw_threshold=settings.hnsw_threshold
            )
            await index.ensure()
        except (DatabaseError, ModelFilesError, VectorStoreError) as exc:
            raise StartupError(f"Lore cannot start: {exc}") from exc
        lexical = LexicalEncoder()
        fetcher = await stack.enter_async_context(
            SafeFetcher(
                FetchLimits(
                    max_bytes=settings.fetch_max_bytes,
                    max_redirects=settings.fetch_max_redirects,
                    timeout_seconds=settings.fetch_timeout_seconds,
                ),
                allowed_addresses=fetch_allowed_addresses,
            )
        )
        documents = DocumentRepository(database)
        context = IngestContext(
            documents=documents,
            originals=OriginalStore(settings.uploads_dir),
            index=index,
            embedder=embedder,
            lexical=lexical,
            fetcher=fetcher,
            limits=IngestLimits(
                max_file_bytes=settings.max_file_bytes,
                max_decompressed_bytes=settings.max_decompressed_bytes,
                chunk_tokens=settings.chunk_tokens,
                overlap_tokens=settings.chunk_overlap_tokens,
            ),
        )
        bot = Bot(
            users=UserRepository(database),
            documents=documents,
            index=index,
            retriever=Retriever(
                index=index,
                documents=documents,
                embedder=embedder,
                lexical=lexical if settings.search_mode == "hybrid" else None,
            ),
            ingest_graph=build_ingest_graph(),
            ingest_context=context,
            embedding_model=settings.embedding_model,
            vector_engine="qdrant server" if settings.qdrant_url else "embedded qdrant-edge",
        )
        logger.info(
            "Lore core ready (data: %s, vectors: %s, model: %s)",
            settings.data_dir,
            "server" if settings.qdrant_url else "embedded",
            settings.embedding_model,
        )
        yield Lore(
            bot=bot,
            settings=settings,
            database=database,
            index=index,
            vector_store=store,
            embedder=embedder,
        )


def _vector_store(settings: Settings) -> VectorStore:
    if settings.qdrant_url:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return ServerVectorStore.connect(
            settings.qdrant_url, api_key, settings.qdrant_timeout_seconds
        )
    return EdgeVectorStore(settings.qdrant_dir)
