"""Retrieval: a question in, ranked passages out, each hydrated from SQLite and citable.

Shared knowledge and one user's private documents are searched separately (the
private search always filters on the user id given here, which callers take from the
authenticated identity) and merged by score. Hits SQLite does not know are dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from storage.documents import DocumentRepository, Passage
from storage.ids import UserId
from storage.knowledge_index import KnowledgeIndex
from storage.vectors import ScoredPoint, SparseVector

__all__ = ["QueryEncoder", "RetrievedPassage", "Retriever"]


class QueryEncoder(Protocol):
    """Turns a question into the vectors the index is searched with."""

    async def embed_query(self, text: str) -> list[float]:
        """The dense query vector."""


class LexicalQueryEncoder(Protocol):
    """Sparse query vectors for hybrid search."""

    def encode_query(self, text: str) -> SparseVector:
        """Query term weights."""


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    """A passage with its retrieval score and where it was found."""

    passage: Passage
    score: float
    private: bool


class Retriever:
    """Searches the knowledge index for passages."""

    def __init__(
        self,
        *,
        index: KnowledgeIndex,
        documents: DocumentRepository,
        embedder: QueryEncoder,
        lexical: LexicalQueryEncoder | None,
    ) -> None:
        self._index = index
        self._documents = documents
        self._embedder = embedder
        self._lexical = lexical

    async def search(
        self,
        query: str,
        *,
        user_id: UserId | None,
        include_shared: bool = True,
        limit: int = 8,
    ) -> list[RetrievedPassage]:
        """Best passages for `query` from the shared knowledge and, with a user id, that
        user's private documents (never anyone else's)."""
        dense = await self._embedder.embed_query(query)
        sparse = self._lexical.encode_query(query) if self._lexical is not None else None
        searches = []
        if include_shared:
            searches.append(self._index.search_shared(dense, sparse=sparse, limit=limit))
        if user_id is not None:
            searches.append(
                self._index.search_private(dense, user_id=user_id, sparse=sparse, limit=limit)
            )
        results = await asyncio.gather(*searches)
        hits: list[tuple[ScoredPoint, bool]] = []
        for position, points in enumerate(results):
            private = user_id is not None and position == len(results) - 1
            hits.extend((point, private) for point in points)
        return await self._hydrate(hits, user_id, limit)

    async def _hydrate(
        self, hits: Sequence[tuple[ScoredPoint, bool]], user_id: UserId | None, limit: int
    ) -> list[RetrievedPassage]:
        passages = await self._documents.passages([point.id for point, _ in hits])
        found: list[RetrievedPassage] = []
        for point, private in sorted(hits, key=lambda hit: hit[0].score, reverse=True):
            passage = passages.get(point.id)
            if passage is None:
                continue  # a point SQLite does not know: never shown
            if passage.owner_id is not None and passage.owner_id != user_id:
                continue  # defence in depth: another user's document
            found.append(RetrievedPassage(passage, point.score, private))
        return found[:limit]
