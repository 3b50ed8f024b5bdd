"""The `Bot` service: the one platform-free API every edge (CLI, chat adapters, jobs) calls.

Knowledge (ingest, search, repair) is implemented here; conversations, approvals and
invites are delegated to `bot.conversation.Conversations`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.actions import ApprovedActions
from bot.conversation import Conversations, DecisionResult
from bot.digests import DigestRun, Digests, parse_timezone
from bot.errors import DigestError, IngestRefusedError, ShareRefusedError
from bot.events import ChatRef, Identity, TurnEvent
from bot.memory import ConversationMemory, MemoryReport
from bot.notifications import Notifier, Notifiers
from bot.watching import ScanReport, WatchAdded, Watching
from graphs.ingest.context import IngestContext
from graphs.ingest.errors import IngestError
from graphs.ingest.graph import IngestGraph, ingest
from graphs.ingest.repair import RepairReport, repair_index
from graphs.ingest.state import IngestProgress, IngestRequest, IngestResult
from graphs.retrieval import RetrievedPassage, Retriever
from storage.budget import BudgetLedger
from storage.digests import DigestSchedule
from storage.documents import Collection, DocumentRecord, DocumentRepository
from storage.ids import DocumentId, TurnId, UserId
from storage.knowledge_index import KnowledgeIndex
from storage.link_codes import LinkCode, LinkResult
from storage.turns import TurnRepository, UnansweredQuestion
from storage.users import Role, User, UserRepository
from storage.watched_sources import WatchedSource

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
        digests: Digests | None = None,
        watching: Watching | None = None,
        memory: ConversationMemory | None = None,
        actions: ApprovedActions | None = None,
    ) -> None:
        self._actions = actions
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
        self._watching = watching
        self._memory = memory
        self._digests = digests

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
        """Delete every private document of a user: rows first, then vectors and originals;
        with conversation memory, also their turn log (what memory is rebuilt from, so a
        later memory run cannot bring it back) and then their memory points."""
        removed = await self._documents.delete_for_owner(user_id)
        for collection, point_ids in removed:
            await self._index.delete_points(collection, point_ids)
        await self._ingest_context.originals.remove_owner(user_id)
        if self._memory is not None:
            if self._turns is not None:
                await self._turns.delete_for_user(user_id)
            await self._memory.forget(user_id)
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
            parse_timezone(timezone)
        except DigestError:
            return False
        await self._users.set_timezone(user_id, timezone)
        return True

    async def set_digest(
        self,
        identity: Identity,
        chat: ChatRef,
        local_time: str,
        timezone: str,
        *,
        quiet_days: bool = False,
    ) -> DigestSchedule:
        """Send a morning digest at `local_time` (HH:MM) in `timezone` into this private chat;
        raises `DigestError` with a polite reason (bad time, unknown timezone, group chat)."""
        digests, user = await self._digest_user(identity)
        return await digests.set(user, chat, local_time, timezone, quiet_days=quiet_days)

    async def digest_off(self, identity: Identity) -> bool:
        """Stop the morning digest; False if it was not on."""
        digests, user = await self._digest_user(identity)
        return await digests.off(user)

    async def digest_now(self, identity: Identity, chat: ChatRef) -> str:
        """Send a digest into this chat now; the platform's message id (or `DigestError`)."""
        digests, user = await self._digest_user(identity)
        return await digests.now(user, chat)

    async def send_due_digests(self, now: datetime) -> DigestRun:
        """Send every digest due at `now` (the digest job, each minute)."""
        if self._digests is None:
            raise RuntimeError("This Bot was built without digests")
        return await self._digests.send_due(now)

    async def _digest_user(self, identity: Identity) -> tuple[Digests, User]:
        if self._digests is None:
            raise RuntimeError("This Bot was built without digests")
        user = await self.conversations.user_for(identity)
        if user is None:
            raise DigestError("I only send digests to people the owner has invited.")
        return self._digests, user

    async def watch(self, identity: Identity, url: str) -> WatchAdded:
        """An owner watches a feed or page (fetched once now, through the SSRF-safe fetcher);
        raises `WatchRefusedError` with a polite reason."""
        return await self._require_watching().watch(await self._user_for(identity), url)

    async def unwatch(self, identity: Identity, url_or_id: str) -> WatchedSource | None:
        """An owner stops watching a source (by number or URL); None if there is none."""
        watching = self._require_watching()
        return await watching.unwatch(await self._user_for(identity), url_or_id)

    async def watches(self) -> list[WatchedSource]:
        """Every watched source, oldest first (/watches)."""
        return await self._require_watching().watches()

    async def scan_watched_sources(self, now: datetime) -> ScanReport:
        """Take what is new from every due watched source (the job that runs before digests)."""
        return await self._require_watching().scan(now)

    def _require_watching(self) -> Watching:
        if self._watching is None:
            raise RuntimeError("This Bot was built without watched sources")
        return self._watching

    async def _user_for(self, identity: Identity) -> User | None:
        if self._conversations is not None:
            return await self._conversations.user_for(identity)
        return await self._users.by_identity(identity.platform, identity.platform_user_id)

    async def create_link_code(self, identity: Identity) -> LinkCode | None:
        """/link: a one-time code that links another chat account to this person (None for
        someone not registered)."""
        return await self.conversations.create_link_code(identity)

    async def link_identity(self, identity: Identity, code: str) -> LinkResult:
        """/link CODE: make `identity` another account of the code's user (see `LINK_REPLIES`)."""
        return await self.conversations.link_identity(identity, code)

    async def share_document(self, identity: Identity, document_id: str) -> str:
        """An owner publishes one of their private documents to the shared knowledge (the
        private copy stays); its title. Raises `ShareRefusedError` with a polite reason."""
        if self._actions is None:
            raise RuntimeError("This Bot was built without approved actions")
        user = await self._user_for(identity)
        if user is None or user.role is not Role.OWNER:
            raise ShareRefusedError("Only an owner can add documents to the shared knowledge.")
        try:
            title = await self._actions.share_document(user.id, document_id)
        except PermissionError as exc:
            raise ShareRefusedError("That is not one of your private documents.") from exc
        except OSError as exc:
            logger.warning("Share of document %s: original unreadable: %s", document_id, exc)
            raise ShareRefusedError("I no longer have the original of that document.") from exc
        except IngestError as exc:
            raise ShareRefusedError(str(exc)) from exc
        logger.info("Owner %s shared document %s", user.id, document_id)
        return title

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

    async def build_memory(self, now: datetime) -> MemoryReport:
        """Embed the recent answered exchanges into conversation memory (the job, every 30
        minutes; reads a wider window, so a missed run heals; idempotent)."""
        if self._memory is None:
            raise RuntimeError("This Bot was built without conversation memory")
        return await self._memory.build(now)

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
