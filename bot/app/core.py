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
from bot.app.models import chat_model, extractive_model, meter, reranker, utc_now
from bot.app.settings_limits import (
    agent_limits,
    extraction_limits,
    fusion,
    ingest_context,
    lookup_limits,
    open_fetcher,
)
from bot.app.stored_model import with_stored_model
from bot.app.stores import open_stores
from bot.approvals import Approvals
from bot.backups import BackupLayout, Backups
from bot.commands import COMMANDS
from bot.conversation import Conversations
from bot.digest_summary import DigestSummariser
from bot.digests import Digests
from bot.forgetting import Forgetting
from bot.knowledge import Knowledge
from bot.limits import Limits
from bot.lookups import Lookups
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
from graphs.agent.context import AgentContext
from graphs.agent.graph import build_agent_graph
from graphs.agent.state import checkpoint_types
from graphs.fair_embedding import FairEmbedder
from graphs.guards import prepare_guards
from graphs.ingest.extract_pool import ExtractionPool
from graphs.ingest.graph import build_ingest_graph, ingest
from graphs.ingest.state import IngestRequest, IngestResult
from graphs.ingest.url_safety import Address
from graphs.memory_recall import MemoryRecall
from graphs.query_batching import QueryBatcher
from graphs.retrieval import Retriever
from storage.approvals import ApprovalRepository
from storage.attempts import AttemptLog
from storage.budget import BudgetLedger
from storage.checkpoints import open_checkpointer
from storage.database import Database
from storage.digests import DigestRepository
from storage.embeddings import Embedder
from storage.heap import limit_arenas
from storage.incidents import IncidentRepository
from storage.invites import InviteRepository
from storage.knowledge_index import KnowledgeIndex
from storage.lexical import LexicalEncoder
from storage.link_codes import LinkCodeRepository
from storage.mcp_tokens import McpTokenRepository
from storage.private_files import secure_data_dir
from storage.speech_models import ensure_speech_model
from storage.turns import TurnRepository
from storage.users import UserRepository
from storage.vectors import VectorStore
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
        stores = await open_stores(settings, stack, rebuild_vectors=rebuild_vectors)
        database = stores.database
        fetcher = await open_fetcher(settings, stack, fetch_allowed_addresses)
        lexical = stores.lexical
        speech = functools.partial(ensure_speech_model, settings.models_dir, settings.speech_model)
        extractor = await stack.enter_async_context(
            ExtractionPool(extraction_limits(settings), speech_model=speech)
        )
        # One model for everyone: questions go first, documents take it a slice at a time.
        embedding = FairEmbedder(stores.embedder)
        context = ingest_context(
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
            fusion=fusion(settings) if settings.search_mode == "hybrid" else None,
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
            limits=agent_limits(settings),
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
                limits=lookup_limits(settings),
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
