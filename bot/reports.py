"""What owners look at: today's spending against the cap and the questions the knowledge
could not answer (owners only; the check is made here, whatever edge asks), and the counts
`lore stats` prints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bot.events import Identity
from bot.people import People
from graphs.llm.pricing import ModelPrice
from storage.budget import BudgetLedger
from storage.documents import Collection, DocumentRepository
from storage.knowledge_index import KnowledgeIndex
from storage.money import Money
from storage.turns import TurnRepository, UnansweredQuestion

__all__ = ["BudgetReport", "ModelPricing", "Reports", "Stats"]


@dataclass(frozen=True, slots=True)
class ModelPricing:
    """What the model's calls are charged at, and why: from the price table (LLM_PRICES or
    the built-in list prices), free because the offline answerer or a model on a local
    address answers, or an assumed high rate because no price is known."""

    model: str
    price: ModelPrice
    basis: Literal["table", "offline", "local", "assumed"]

    def note(self) -> str:
        """One line for the operator about this pricing ("" when there is nothing to say)."""
        if self.basis == "local":
            return (
                f"The model {self.model} runs on a local address and has no price, so it is "
                "counted as free (set LLM_PRICES to charge it)."
            )
        if self.basis == "assumed":
            rate = self.price
            return (
                f"The model {self.model} has no price configured, so its calls are charged at "
                f"an assumed ${rate.input_per_million:g} input / ${rate.cached_input_per_million:g}"
                f" cached / ${rate.output_per_million:g} output per million tokens; set "
                f"LLM_PRICES={self.model}=INPUT/CACHED/OUTPUT to its real prices."
            )
        return ""


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
    pricing_note: str = ""

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
        pricing: ModelPricing | None = None,
    ) -> None:
        self._pricing_note = pricing.note() if pricing is not None else ""
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
        return BudgetReport(day, await self._budget.spent(day), self._cap, self._pricing_note)

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
