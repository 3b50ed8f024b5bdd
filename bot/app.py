"""Composition root: build every long-lived component from `Settings`, stacked in one exit stack.

The only module (with `bot.cli`) that constructs concrete objects and reads settings.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.actions import ApprovedActions
from bot.conversation import Conversations
from bot.digest_summary import DigestSummariser
from bot.digests import Digests
from bot.errors import StartupError, StoreBusyError
from bot.memory import ConversationMemory
from bot.notifications import Notifiers
from bot.politeness import WatchPolicy
from bot.service import Bot
from bot.settings import Settings
from bot.watching import Watching
from graphs.agent.context import AgentContext, AgentLimits
from graphs.agent.graph import build_agent_graph
from graphs.agent.state import checkpoint_types
from graphs.fusion import Fusion
from graphs.ingest.context import IngestContext, IngestLimits
from graphs.ingest.graph import build_ingest_graph, ingest
from graphs.ingest.state import IngestRequest, IngestResult
from graphs.ingest.url_fetch import FetchLimits, SafeFetcher
from graphs.ingest.url_safety import Address
from graphs.llm.offline import OfflineModel
from graphs.llm.openai_compat import OpenAICompatibleModel
from graphs.llm.pricing import DEFAULT_PRICES, ModelPrice, parse_price_table, price_for
from graphs.llm.types import ChatModel
from graphs.memory_recall import MemoryRecall
from graphs.retrieval import Retriever
from storage.approvals import ApprovalRepository
from storage.budget import BudgetLedger
from storage.budget import budget_day as ledger_day
from storage.checkpoints import open_checkpointer
from storage.data_lock import DataDirBusyError, DataDirLock
from storage.database import Database, DatabaseError
from storage.digests import DigestRepository
from storage.documents import DocumentRepository
from storage.edge_store import EdgeVectorStore
from storage.embeddings import Embedder, LexicalEncoder
from storage.incidents import IncidentRepository
from storage.invites import InviteRepository
from storage.knowledge_index import KnowledgeIndex
from storage.link_codes import LinkCodeRepository
from storage.memory_index import MemoryIndex
from storage.model_files import ModelFilesError, ensure_model_dir, model_choice
from storage.originals import OriginalStore
from storage.reranker import CrossEncoder, RerankerError
from storage.server_store import ServerVectorStore
from storage.turns import TurnRepository
from storage.users import UserRepository
from storage.vectors import VectorStore, VectorStoreError
from storage.watched_sources import WatchedSourceRepository

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
            memory_index = MemoryIndex(
                store, dense_size=embedder.dimension, hnsw_threshold=settings.hnsw_threshold
            )
            await memory_index.ensure()
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
        originals = OriginalStore(settings.uploads_dir)
        context = IngestContext(
            documents=documents,
            originals=originals,
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
        retriever = Retriever(
            index=index,
            documents=documents,
            embedder=embedder,
            lexical=lexical if settings.search_mode != "dense" else None,
            fusion=Fusion() if settings.search_mode == "hybrid" else None,
            reranker=await _reranker(settings),
            rerank_candidates=settings.reranker_candidates,
        )
        ingest_graph = build_ingest_graph()
        users = UserRepository(database)
        notifiers = Notifiers()
        model, price = await _model(settings, stack)
        checkpointer = await stack.enter_async_context(
            open_checkpointer(settings.checkpoint_path, checkpoint_types())
        )
        turns, budget = TurnRepository(database), BudgetLedger(database)
        # Reservations a crashed process left open keep counting (fail closed), marked as such.
        await budget.abandon_stale(now=_utc_now())
        limits = _agent_limits(settings)

        def budget_day() -> str:
            return ledger_day(_utc_now(), settings.budget_timezone)

        async def ingest_shared(request: IngestRequest) -> IngestResult:
            return await ingest(ingest_graph, request, context)

        actions = ApprovedActions(
            users=users,
            documents=documents,
            originals=originals,
            notifiers=notifiers,
            owners=settings.owner_identities,
            ingest=ingest_shared,
        )
        agent_context = AgentContext(
            model=model,
            price=price,
            retriever=retriever,
            documents=documents,
            approvals=ApprovalRepository(database),
            incidents=IncidentRepository(database),
            turns=turns,
            budget=budget,
            actions=actions,
            limits=limits,
            clock=_utc_now,
            memory=MemoryRecall(index=memory_index, turns=turns, embedder=embedder),
        )
        conversations = Conversations(
            graph=build_agent_graph(checkpointer),
            context=agent_context,
            users=users,
            invites=InviteRepository(database),
            approvals=agent_context.approvals,
            incidents=agent_context.incidents,
            notifiers=notifiers,
            owners=settings.owner_identities,
            clock=_utc_now,
            link_codes=LinkCodeRepository(database),
        )
        watching = Watching(
            sources=WatchedSourceRepository(database),
            fetcher=fetcher,
            ingest=ingest_shared,
            clock=_utc_now,
            policy=WatchPolicy(
                check_interval=timedelta(minutes=settings.watch_interval_minutes),
                host_pacing_seconds=settings.watch_host_pacing_seconds,
                max_entries_per_scan=settings.watch_max_entries_per_scan,
            ),
        )
        bot = Bot(
            users=users,
            memory=ConversationMemory(
                turns=turns, users=users, index=memory_index, embedder=embedder
            ),
            watching=watching,
            documents=documents,
            index=index,
            retriever=retriever,
            ingest_graph=ingest_graph,
            ingest_context=context,
            embedding_model=settings.embedding_model,
            vector_engine="qdrant server" if settings.qdrant_url else "embedded qdrant-edge",
            conversations=conversations,
            actions=actions,
            notifiers=notifiers,
            turns=turns,
            budget=budget,
            budget_cap_usd=settings.daily_budget_usd,
            budget_day=budget_day,
            digests=Digests(
                schedules=DigestRepository(database),
                users=users,
                documents=documents,
                approvals=agent_context.approvals,
                turns=turns,
                budget=budget,
                notifiers=notifiers,
                budget_cap_usd=settings.daily_budget_usd,
                budget_timezone=settings.budget_timezone,
                clock=_utc_now,
                summariser=DigestSummariser(
                    model=model,
                    price=price,
                    budget=budget,
                    daily_budget_micros=limits.daily_budget_micros,
                    budget_day=budget_day,
                )
                if settings.llm_base_url  # the offline provider keeps the plain list
                else None,
            ),
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


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _agent_limits(settings: Settings) -> AgentLimits:
    return AgentLimits(
        daily_budget_micros=round(settings.daily_budget_usd * 1_000_000),
        budget_timezone=settings.budget_timezone,
        rate_limit_turns=settings.rate_limit_turns,
        rate_limit_window=timedelta(minutes=settings.rate_limit_minutes),
        max_message_chars=settings.max_message_chars,
        max_answer_tokens=settings.max_answer_tokens,
        approval_ttl=timedelta(hours=settings.approval_ttl_hours),
    )


# Charged for a model missing from the price table: high on purpose, so the cap still holds.
UNKNOWN_MODEL_PRICE = ModelPrice(10.0, 10.0, 30.0)
FREE = ModelPrice(0.0, 0.0, 0.0)


async def _model(settings: Settings, stack: AsyncExitStack) -> tuple[ChatModel, ModelPrice]:
    """The configured OpenAI-compatible model and its price, or the offline answerer."""
    if not settings.llm_base_url:
        return OfflineModel(), FREE
    try:
        table = {**DEFAULT_PRICES, **parse_price_table(settings.llm_prices)}
    except ValueError as exc:
        raise StartupError(f"LLM_PRICES: {exc}") from exc
    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    model = await stack.enter_async_context(
        OpenAICompatibleModel(
            base_url=settings.llm_base_url,
            api_key=api_key,
            model=settings.llm_model,
            read_timeout=settings.llm_timeout_seconds,
        )
    )
    return model, price_for(settings.llm_model, table, UNKNOWN_MODEL_PRICE)


def _vector_store(settings: Settings) -> VectorStore:
    if settings.qdrant_url:
        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return ServerVectorStore.connect(
            settings.qdrant_url, api_key, settings.qdrant_timeout_seconds
        )
    return EdgeVectorStore(settings.qdrant_dir)


async def _reranker(settings: Settings) -> CrossEncoder | None:
    """The operator's cross-encoder, if RERANKER_MODEL_DIR names one."""
    if settings.reranker_model_dir is None:
        return None
    try:
        return await CrossEncoder.load(
            settings.reranker_model_dir, threads=settings.embedding_threads
        )
    except RerankerError as exc:
        raise StartupError(f"Lore cannot start: RERANKER_MODEL_DIR: {exc}") from exc
