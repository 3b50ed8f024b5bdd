"""Conversation recall: a query and a day range in, one user's past exchanges out, from SQLite.

The memory index is searched with the user id given here (callers take it from the
authenticated identity, never from a model) and every hit is read back from `turn_log`;
a hit whose turn is gone (forgotten) or belongs to someone else is dropped. Citation
markers of the old answer ("[2]") are removed: they named that turn's sources, not ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from graphs.retrieval import QueryEncoder
from storage.ids import TurnId, UserId
from storage.memory_index import MemoryIndex
from storage.turns import TurnRepository

__all__ = ["MemoryRecall", "RecalledExchange", "strip_citations"]

_CITATION = re.compile(r"\s*\[(?:\d{1,3}|pinned)\]")


def strip_citations(text: str) -> str:
    """`text` without citation markers like "[3]" or "[pinned]"."""
    return _CITATION.sub("", text).strip()


@dataclass(frozen=True, slots=True)
class RecalledExchange:
    """One past question and answer of the user, with when and where it happened."""

    turn_id: TurnId
    chat_id: str
    created_at: datetime
    question: str
    answer: str
    relevance: float


class MemoryRecall:
    """Searches one user's remembered exchanges and reads them back from the turn log."""

    def __init__(self, *, index: MemoryIndex, turns: TurnRepository, embedder: QueryEncoder):
        self._index = index
        self._turns = turns
        self._embedder = embedder

    async def search(
        self,
        query: str,
        *,
        user_id: UserId,
        day_from: date | None = None,
        day_to: date | None = None,
        limit: int = 5,
    ) -> list[RecalledExchange]:
        """The user's exchanges best matching `query` on days in [day_from, day_to], oldest
        first."""
        dense = await self._embedder.embed_query(query)
        hits = await self._index.search_memory(
            dense, user_id=user_id, day_from=day_from, day_to=day_to, limit=limit
        )
        found: list[RecalledExchange] = []
        for hit in hits:
            record = await self._turns.get(hit.turn_id)
            if record is None or record.user_id != user_id:
                continue
            found.append(
                RecalledExchange(
                    turn_id=record.id,
                    chat_id=record.chat_id,
                    created_at=record.created_at.astimezone(UTC),
                    question=record.question,
                    answer=strip_citations(record.answer),
                    relevance=hit.score,
                )
            )
        return sorted(found, key=lambda exchange: exchange.created_at)
