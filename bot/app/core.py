"""Composition root, the core: build every long-lived component from `Settings`, stacked in
one exit stack, and the `Bot` over them. Only `bot.app` and `bot.cli` construct concrete
objects and read settings; lower layers get plain values."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

from bot.accounts import Accounts
from bot.actions import ApprovedActions
from bot.app.models import chat_model, extractive_model, meter, reranker, utc_now, vector_store
from bot.app.stored_model import current_identity, with_stored_model
from bot.approvals import Approvals
from bot.backups import BackupLayout, Backups
from bot.commands import COMMANDS
from bot.conversation import Conversations
from bot.digest_summary import DigestSummariser
from bot.digests import Digests
from bot.errors import StartupError, StoreBusyError
from bot.forgetting import Forgetting
from bot.knowledge import Knowledge
from bot.limits import Limits
from bot.lookups import LookupLimits, Lookups
from bot.mcp_tokens import McpTokens
from bot.memory import ConversationMemory
from bot.notifications import Notifiers
from bot.parts import BotParts
from bot.people import LOCAL_OWNER, People
from bot.politeness import WatchPolicy
from bot.reports import Reports
from bot.service import Bot
from bot.settings import Settings
from bot.sources import PendingChoices
from bot.thread_locks import ThreadLocks
from bot.watching import Watching
from graphs.agent.context import AgentContext, AgentLimits
from graphs.agent.graph import build_agent_graph
from graphs.agent.state import checkpoint_types
from graphs.fair_embedding import FairEmbedder
from graphs.fusion import Fusion
from graphs.guards import prepare_guards
from graphs.ingest.context import IngestContext, IngestLimits
from graphs.ingest.extract_pool import ExtractionLimits, ExtractionPool
from graphs.ingest.extract_protocol import MediaLimits
from graphs.ingest.graph import build_ingest_graph, ingest
from graphs.ingest.state import IngestRequest, IngestResult
from graphs.ingest.url_fetch import FetchLimits, SafeFetcher
from graphs.ingest.url_safety import Address
from graphs.memory_recall import MemoryRecall
from graphs.query_batching import QueryBatcher
from graphs.retrieval import Retriever
from storage.approvals import ApprovalRepository
from storage.attempts import AttemptLog
from storage.budget import BudgetLedger
from storage.checkpoints import open_checkpointer
from storage.data_lock import DataDirBusyError, DataDirLock
from storage.database import Database, DatabaseError
from storage.digests import DigestRepository
from storage.documents import DocumentRepository
from storage.embeddings import Embedder
from storage.heap import limit_arenas
from storage.incidents import IncidentRepository
from storage.index_identity import (
    IndexIdentity,
    IndexIdentityError,
    ModelChangedError,
    check_identity,
    read_identity,
    write_identity,
)
from storage.invites import InviteRepository
from storage.knowledge_index import KnowledgeIndex
from storage.lexical import DEFAULT_LEXICAL_SCHEME, LexicalEncoder, LexicalScheme
from storage.link_codes import LinkCodeRepository
from storage.mcp_tokens import McpTokenRepository
from storage.memory_index import MemoryIndex
from storage.model_files import ModelFilesError, ensure_model_dir, model_choice
from storage.originals import OriginalStore
from storage.private_files import secure_data_dir
from storage.speech_models import ensure_speech_model
from storage.turns import TurnRepository
from storage.users import UserRepository
from storage.vectors import VectorStore, VectorStoreError
from storage.watched_sources import WatchedSourceRepository

__all__ = ["Lore", "backup_layout", "open_lore", "vector_engine_name"]

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
    embedding: FairEmbedder
    """The embedder as everything in the core shares it (questions first, documents in slices)."""
    lexical: LexicalEncoder


def vector_engine_name(settings: Settings) -> str:
    """The vector engine as `lore stats` and backup manifests name it."""
    return "qdrant server" if settings.qdrant_url else "embedded qdrant-edge"


def backup_layout(settings: Settings) -> BackupLayout:
    """Where this deployment's state lives, for backups and restores."""
    return BackupLayout(
        data_dir=settings.data_dir,
        database_path=settings.database_path,
        uploads_dir=settings.uploads_dir,
        embedding_model=settings.embedding_model,
        vector_engine=vector_engine_name(settings),
    )


@dataclass(frozen=True, slots=True)
class _Stores:
    database: Database
    store: VectorStore
    embedder: Embedder
    lexical: LexicalEncoder
    index: KnowledgeIndex
    memory_index: MemoryIndex


async def _open_stores(
    settings: Settings, stack: AsyncExitStack, *, rebuild_vectors: bool = False
) -> _Stores:
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
        scheme = await asyncio.to_thread(_check_vectors_model, settings, current, rebuild_vectors)
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
    return _Stores(database, store, embedder, lexical, index, memory_index)


def _check_vectors_model(
    settings: Settings, current: IndexIdentity, rebuild: bool
) -> LexicalScheme:
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


def _fusion(settings: Settings) -> Fusion:
    """Hybrid ranking with the embedding model's own dense weight and cosine floor."""
    choice = model_choice(settings.embedding_model)
    return Fusion(dense_weight=choice.dense_weight, dense_floor=choice.cosine_floor)


def _agent_limits(settings: Settings) -> AgentLimits:
    return AgentLimits(
        rate_limit_turns=settings.rate_limit_turns,
        rate_limit_window=timedelta(minutes=settings.rate_limit_minutes),
        max_message_chars=settings.max_message_chars,
        max_answer_tokens=settings.max_answer_tokens,
        tool_timeout_seconds=settings.tool_timeout_seconds,
        approval_ttl=timedelta(hours=settings.approval_ttl_hours),
    )


def _lookup_limits(settings: Settings) -> LookupLimits:
    return LookupLimits(
        rate_limit_turns=settings.rate_limit_turns,
        rate_limit_window=timedelta(minutes=settings.rate_limit_minutes),
        max_query_chars=settings.max_message_chars,
    )


async def _fetcher(
    settings: Settings, stack: AsyncExitStack, allowed: frozenset[Address]
) -> SafeFetcher:
    limits = FetchLimits(
        max_bytes=settings.fetch_max_bytes,
        max_redirects=settings.fetch_max_redirects,
        timeout_seconds=settings.fetch_timeout_seconds,
    )
    return await stack.enter_async_context(SafeFetcher(limits, allowed_addresses=allowed))


def _extraction_limits(settings: Settings) -> ExtractionLimits:
    return ExtractionLimits(
        cpu_seconds=settings.extract_cpu_seconds,
        memory_mb=settings.extract_memory_mb,
        workers=settings.extract_workers,
        media=MediaLimits(
            max_image_pixels=settings.max_image_pixels,
            max_ocr_pages=settings.max_ocr_pages,
            ocr_cpu_seconds_per_page=settings.ocr_cpu_seconds_per_page,
            max_audio_seconds=settings.max_audio_seconds,
            speech_cpu_seconds_per_minute=settings.speech_cpu_seconds_per_minute,
            speech_beam_size=settings.speech_beam_size,
            threads=settings.media_threads,
        ),
    )


def _ingest_context(
    settings: Settings,
    stores: _Stores,
    *,
    fetcher: SafeFetcher,
    lexical: LexicalEncoder,
    extractor: ExtractionPool,
    embedding: FairEmbedder,
) -> IngestContext:
    return IngestContext(
        documents=DocumentRepository(stores.database),
        originals=OriginalStore(settings.uploads_dir),
        index=stores.index,
        embedder=embedding,
        lexical=lexical,
        fetcher=fetcher,
        extractor=extractor,
        limits=IngestLimits(
            max_file_bytes=settings.max_file_bytes,
            max_decompressed_bytes=settings.max_decompressed_bytes,
            chunk_tokens=settings.chunk_tokens,
            overlap_tokens=settings.chunk_overlap_tokens,
            max_chunks=settings.max_chunks_per_document,
            max_audio_seconds=settings.max_audio_seconds,
        ),
    )


@asynccontextmanager
async def open_lore(
    settings: Settings,
    *,
    fetch_allowed_addresses: frozenset[Address] = frozenset(),
    operator: bool = False,
    rebuild_vectors: bool = False,
) -> AsyncIterator[Lore]:
    """Open everything in dependency order; close it in reverse, whatever happens.

    `operator`: the CLI's maintenance commands, where the person at the terminal acts as an
    owner whatever OWNERS says (they can read the data directory anyway).
    `fetch_allowed_addresses` exists for tests only (a page served on 127.0.0.1); no
    setting reaches it, so a deployment cannot turn the SSRF guard off.
    `rebuild_vectors`: open on vectors of another embedding model (`lore reindex --all`).
    """
    # Owner-only on disk (invariant 13): DATA_DIR 0700, what is in it 0600, from here on.
    await asyncio.to_thread(secure_data_dir, settings.data_dir)
    settings = with_stored_model(settings, rebuild_vectors=rebuild_vectors, announce=True)
    limit_arenas(settings.malloc_arenas)  # before the threads below meet in malloc
    async with AsyncExitStack() as stack:
        stores = await _open_stores(settings, stack, rebuild_vectors=rebuild_vectors)
        database = stores.database
        fetcher = await _fetcher(settings, stack, fetch_allowed_addresses)
        lexical = stores.lexical
        speech = functools.partial(ensure_speech_model, settings.models_dir, settings.speech_model)
        extractor = await stack.enter_async_context(
            ExtractionPool(_extraction_limits(settings), speech_model=speech)
        )
        # One model for everyone: questions go first, documents take it a slice at a time.
        embedding = FairEmbedder(stores.embedder)
        context = _ingest_context(
            settings,
            stores,
            fetcher=fetcher,
            lexical=lexical,
            extractor=extractor,
            embedding=embedding,
        )
        documents, users = context.documents, UserRepository(database)
        owners = set(settings.owner_identities)
        if operator:
            owners.add((LOCAL_OWNER.platform, LOCAL_OWNER.platform_user_id))
        people = People(users, owners)
        notifiers, locks = Notifiers(), ThreadLocks()
        limits = Limits(AttemptLog(database), utc_now)
        model, pricing = await chat_model(settings, stack)
        checkpointer = await stack.enter_async_context(
            open_checkpointer(settings.checkpoint_path, checkpoint_types())
        )
        turns, budget = TurnRepository(database), BudgetLedger(database)
        # Reservations a crashed process left open keep counting (fail closed), marked as such.
        await budget.abandon_stale(now=utc_now())
        booking = meter(settings, budget, pricing.price)
        ingest_graph = build_ingest_graph()
        # The input guards' prescreens, built from the installed rules like the model
        # files and kept beside them: read (or built) here, off the event loop, rather than
        # inside the first message's turn.
        await asyncio.to_thread(prepare_guards, settings.models_dir)

        async def ingest_shared(request: IngestRequest) -> IngestResult:
            return await ingest(ingest_graph, request, context)

        actions = ApprovedActions(
            users=users,
            documents=documents,
            originals=context.originals,
            notifiers=notifiers,
            owners=frozenset(people.owner_identities),
            ingest=ingest_shared,
        )
        # Concurrent turns' questions are embedded in one model run; repeats come from a cache.
        queries = QueryBatcher(embedding.embed_queries)
        retriever = Retriever(
            index=stores.index,
            documents=documents,
            embedder=queries,
            lexical=lexical if settings.search_mode != "dense" else None,
            fusion=_fusion(settings) if settings.search_mode == "hybrid" else None,
            reranker=await reranker(settings),
            rerank_candidates=settings.reranker_candidates,
        )
        incidents = IncidentRepository(database)
        approval_rows = ApprovalRepository(database)
        recall = MemoryRecall(index=stores.memory_index, turns=turns, embedder=queries)
        agent_context = AgentContext(
            model=model,
            meter=booking,
            retriever=retriever,
            documents=documents,
            approvals=approval_rows,
            incidents=incidents,
            turns=turns,
            actions=actions,
            limits=_agent_limits(settings),
            clock=utc_now,
            memory=recall,
            fallback=None if pricing.basis == "offline" else extractive_model(settings),
            language=settings.language,
        )
        graph = build_agent_graph(checkpointer)
        approvals = Approvals(
            graph=graph,
            context=agent_context,
            people=people,
            approvals=approval_rows,
            notifiers=notifiers,
            locks=locks,
            clock=utc_now,
        )
        memory = ConversationMemory(
            turns=turns, users=users, index=stores.memory_index, embedder=embedding
        )
        tokens = McpTokens(
            people=people, users=users, tokens=McpTokenRepository(database), clock=utc_now
        )
        parts = BotParts(
            people=people,
            users=users,
            knowledge=Knowledge(
                people=people,
                documents=documents,
                retriever=retriever,
                ingest_graph=ingest_graph,
                ingest_context=context,
                actions=actions,
                pending=PendingChoices(),
                incidents=incidents,
                language=settings.language,
            ),
            forgetting=Forgetting(
                people=people,
                database=database,
                documents=documents,
                index=stores.index,
                originals=context.originals,
                turns=turns,
                approvals=approval_rows,
                incidents=incidents,
                memory=memory,
                graph=graph,
            ),
            accounts=Accounts(
                people=people,
                invites=InviteRepository(database),
                link_codes=LinkCodeRepository(database),
                limits=limits,
                clock=utc_now,
            ),
            approvals=approvals,
            conversations=Conversations(
                graph=graph,
                context=agent_context,
                people=people,
                approvals=approvals,
                incidents=incidents,
                locks=locks,
                clock=utc_now,
            ),
            digests=Digests(
                schedules=DigestRepository(database),
                users=users,
                documents=documents,
                approvals=approval_rows,
                turns=turns,
                budget=budget,
                notifiers=notifiers,
                budget_cap=booking.cap,
                budget_timezone=settings.budget_timezone,
                clock=utc_now,
                limits=limits,
                # The offline provider keeps the plain list.
                summariser=DigestSummariser(model=model, meter=booking, incidents=incidents)
                if settings.llm_base_url
                else None,
            ),
            watching=Watching(
                sources=WatchedSourceRepository(database),
                fetcher=fetcher,
                feeds=extractor,
                ingest=ingest_shared,
                clock=utc_now,
                policy=WatchPolicy(
                    check_interval=timedelta(minutes=settings.watch_interval_minutes),
                    host_pacing_seconds=settings.watch_host_pacing_seconds,
                    max_entries_per_scan=settings.watch_max_entries_per_scan,
                ),
            ),
            memory=memory,
            reports=Reports(
                people=people,
                budget=budget,
                cap=booking.cap,
                budget_day=booking.day,
                turns=turns,
                documents=documents,
                index=stores.index,
                engines=(settings.embedding_model, vector_engine_name(settings)),
                pricing=pricing,
            ),
            tokens=tokens,
            backups=Backups(
                layout=backup_layout(settings),
                database=database,
                store=stores.store,
                clock=utc_now,
            ),
            lookups=Lookups(
                access=tokens,
                retriever=retriever,
                memory=recall,
                documents=documents,
                turns=turns,
                incidents=incidents,
                limits=_lookup_limits(settings),
                clock=utc_now,
            ),
            notifiers=notifiers,
            limits=limits,
            commands=COMMANDS,
            turns=turns,
            ingest_context=context,
            clock=utc_now,
        )
        logger.info(
            "Lore core ready (data: %s, vectors: %s, model: %s)",
            settings.data_dir,
            "server" if settings.qdrant_url else "embedded",
            settings.embedding_model,
        )
        yield Lore(
            bot=Bot(parts),
            settings=settings,
            database=database,
            index=stores.index,
            vector_store=stores.store,
            embedder=stores.embedder,
            embedding=embedding,
            lexical=stores.lexical,
        )
