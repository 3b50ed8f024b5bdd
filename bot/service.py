"""The `Bot` service: the one platform-free API every edge (CLI, chat adapters, jobs) calls.

Knowledge (ingest, search, repair) is implemented here; conversations, approvals and
invites are delegated to `bot.conversation.Conversations`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.conversation import Conversations, DecisionResult
from bot.errors import IngestRefusedError
from bot.events import ChatRef, Identity, TurnEvent
from bot.notifications import Notifier, Notifiers
from graphs.ingest.context import IngestContext
from graphs.ingest.errors import IngestError
from graphs.ingest.graph import IngestGraph, ingest
from graphs.ingest.repair import RepairReport, repair_index
from graphs.ingest.state import IngestProgress, IngestRequest, IngestResult
from graphs.retrieval import RetrievedPassage, Retriever
from storage.budget import BudgetLedger
from storage.documents import Collection, DocumentRecord, DocumentRepository
from storage.ids import DocumentId, TurnId, UserId
from storage.knowledge_index import KnowledgeIndex
from storage.turns import TurnRepository, UnansweredQuestion
from storage.users import Role, User, UserRepository

__all__ = ["Bot", "BudgetReport", "Stats"]

logger = logging.getLogger(__name__)

CONSOLE_PLATFORM = "console"


@dataclass(frozen=True, slots=True)
class BudgetReport:
    """Today's spending against the daily cap."""

    day: str
    spent_usd: float
    cap_usd: float


@dataclass(frozen=True, slots=True)
class Stats:
    """What `lore stats` shows."""

    users: int
    shared_documents: int
    private_documents: int
    chunks: int
    pending_chunks: int
    knowledge_points: int
    private_points: int
    embedding_model: str
    vector_engine: str


class Bot:
    """Ingest, search and maintenance for every edge; holds no platform detail."""

    def __init__(
        self,
        *,
        users: UserRepository,
        documents: DocumentRepository,
        index: KnowledgeIndex,
        retriever: Retriever,
        ingest_graph: IngestGraph,
        ingest_context: IngestContext,
        embedding_model: str,
        vector_engine: str,
        conversations: Conversations | None = None,
        notifiers: Notifiers | None = None,
        turns: TurnRepository | None = None,
        budget: BudgetLedger | None = None,
        budget_cap_usd: float = 0.0,
        budget_day: Callable[[], str] | None = None,
    ) -> None:
        self._users = users
        self._documents = documents
        self._index = index
        self._retriever = retriever
        self._ingest_graph = ingest_graph
        self._ingest_context = ingest_context
        self._embedding_model = embedding_model
        self._vector_engine = vector_engine
        self._conversations = conversations
        self._notifiers = notifiers or Notifiers()
        self._turns = turns
        self._budget = budget
        self._budget_cap_usd = budget_cap_usd
        self._budget_day = budget_day

    @property
    def conversations(self) -> Conversations:
        """Chat turns, approvals and invites (present whenever the agent is configured)."""
        if self._conversations is None:
            raise RuntimeError("This Bot was built without the agent")
        return self._conversations

    def register_notifier(self, platform: str, notifier: Notifier) -> None:
        """An edge announces how to reach people on its platform."""
        self._notifiers.register(platform, notifier)

    def handle_message(
        self, identity: Identity, chat: ChatRef, text: str
    ) -> AsyncIterator[TurnEvent]:
        """Answer one message; stream its turn events."""
        return self.conversations.handle_message(identity, chat, text)

    async def decide_approval(
        self, identity: Identity, approval_id: str, *, approve: bool
    ) -> DecisionResult:
        """An owner's Approve / Reject tap."""
        return await self.conversations.decide_approval(identity, approval_id, approve=approve)

    async def budget_report(self) -> BudgetReport:
        """Today's spend against the cap."""
        if self._budget is None or self._budget_day is None:
            raise RuntimeError("This Bot was built without a budget")
        day = self._budget_day()
        spent = await self._budget.spent(day)
        return BudgetReport(day, spent / 1_000_000, self._budget_cap_usd)

    async def unanswered(self, *, limit: int = 20) -> list[UnansweredQuestion]:
        """Questions the knowledge could not answer, newest last."""
        if self._turns is None:
            raise RuntimeError("This Bot was built without a turn log")
        return await self._turns.unanswered(limit=limit)

    async def record_feedback(self, identity: Identity, turn_id: str, value: int) -> bool:
        """A 👍 (+1) or 👎 (-1) on an answer; False for an unknown person or turn."""
        user = await self.conversations.user_for(identity)
        if user is None or self._turns is None or value not in (1, -1):
            return False
        return await self._turns.set_feedback(TurnId(turn_id), user.id, value)

    async def sources(self, user_id: UserId) -> list[DocumentRecord]:
        """A user's private documents, newest first (/sources)."""
        return await self._documents.list_for_owner(user_id)

    async def forget(self, user_id: UserId) -> int:
        """Delete every private document of a user: rows first, then vectors and originals."""
        removed = await self._documents.delete_for_owner(user_id)
        for collection, point_ids in removed:
            await self._index.delete_points(collection, point_ids)
        await self._ingest_context.originals.remove_owner(user_id)
        count = sum(len(ids) for _, ids in removed)
        logger.info("Forgot %d chunks of user %s", count, user_id)
        return count

    async def pin(self, user_id: UserId, document_id: str, *, pinned: bool = True) -> bool:
        """An owner pins a shared document into every system prompt; False if not allowed."""
        user = await self._users.get(user_id)
        if user is None or user.role is not Role.OWNER:
            return False
        return await self._documents.set_pinned(DocumentId(document_id), pinned)

    async def set_timezone(self, user_id: UserId, timezone: str) -> bool:
        """Store a user's timezone (IANA name); False if the name is unknown."""
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            return False
        await self._users.set_timezone(user_id, timezone)
        return True

    async def console_user(self, name: str, *, role: Role = Role.MEMBER) -> User:
        """The user behind a local (CLI / terminal) name, registered on first use."""
        return await self._users.register(CONSOLE_PLATFORM, name, name, role)

    async def ingest(
        self,
        request: IngestRequest,
        *,
        on_progress: Callable[[IngestProgress], None] | None = None,
    ) -> IngestResult:
        """Remember a note, file or URL; raises `IngestRefusedError` with a polite reason."""
        try:
            return await ingest(
                self._ingest_graph, request, self._ingest_context, on_progress=on_progress
            )
        except IngestError as exc:
            logger.info("Ingest refused: %s", type(exc).__name__)
            raise IngestRefusedError(str(exc)) from exc

    async def ingest_path(self, path: Path, *, owner_id: UserId | None) -> IngestResult:
        """Remember one local file."""
        return await self.ingest(IngestRequest(owner_id=owner_id, path=path))

    async def search(
        self, query: str, *, user_id: UserId | None, limit: int = 8
    ) -> list[RetrievedPassage]:
        """Ranked passages from the shared knowledge and, with a user, their private notes."""
        return await self._retriever.search(query, user_id=user_id, limit=limit)

    async def reindex(self, *, folder_min_age_seconds: float = 3600.0) -> RepairReport:
        """Re-embed pending chunks and remove orphans (the self-repair job)."""
        return await repair_index(
            self._ingest_context, folder_min_age_seconds=folder_min_age_seconds
        )

    async def stats(self) -> Stats:
        """Counts across SQLite and Qdrant."""
        counts = await self._documents.counts()
        return Stats(
            users=counts["users"],
            shared_documents=counts["shared_documents"],
            private_documents=counts["private_documents"],
            chunks=counts["chunks"],
            pending_chunks=counts["pending_chunks"],
            knowledge_points=await self._index.count(Collection.KNOWLEDGE),
            private_points=await self._index.count(Collection.PRIVATE),
            embedding_model=self._embedding_model,
            vector_engine=self._vector_engine,
        )
