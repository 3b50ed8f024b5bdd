"""What owners look at: today's spending against the cap and the questions the knowledge
could not answer (owners only; the check is made here, whatever edge asks), and the counts
`lore stats` prints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.events import Identity
from bot.people import People
from storage.budget import BudgetLedger
from storage.documents import Collection, DocumentRepository
from storage.knowledge_index import KnowledgeIndex
from storage.money import Money
from storage.turns import TurnRepository, UnansweredQuestion

__all__ = ["BudgetReport", "Reports", "Stats"]


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


@dataclass(frozen=True, slots=True)
class BudgetReport:
    """Today's spending against the daily cap."""

    day: str
    spent: Money
    cap: Money

    @property
    def spent_usd(self) -> float:
        """Spent today, in dollars."""
        return self.spent.dollars

    @property
    def cap_usd(self) -> float:
        """The daily cap, in dollars."""
        return self.cap.dollars


class Reports:
    """Owner reports."""

    def __init__(
        self,
        *,
        people: People,
        budget: BudgetLedger,
        cap: Money,
        budget_day: Callable[[], str],
        turns: TurnRepository,
        documents: DocumentRepository,
        index: KnowledgeIndex,
        engines: tuple[str, str],
    ) -> None:
        self._documents = documents
        self._index = index
        self._embedding_model, self._vector_engine = engines
        self._people = people
        self._budget = budget
        self._cap = cap
        self._budget_day = budget_day
        self._turns = turns

    async def budget(self, identity: Identity) -> BudgetReport:
        """Today's spend against the cap (owners only)."""
        await self._people.owner(identity, "/budget")
        day = self._budget_day()
        return BudgetReport(day, await self._budget.spent(day), self._cap)

    async def unanswered(self, identity: Identity, *, limit: int = 20) -> list[UnansweredQuestion]:
        """Questions the knowledge could not answer, oldest first (owners only: they are
        other people's questions)."""
        await self._people.owner(identity, "/unanswered")
        return await self._turns.unanswered(limit=limit)

    async def stats(self) -> Stats:
        """Counts across SQLite and Qdrant: aggregates only, no one's content."""
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
