"""Retrieval: a question in, ranked passages out, each hydrated from SQLite and citable.

Shared knowledge and one user's private documents are searched separately (the
private search always filters on the user id given here, which callers take from the
authenticated identity) and merged by score. Hits SQLite does not know are dropped.

Ranking is dense, or hybrid (dense + lexical fused with RRF). Fused scores are ranks,
not relevance, so every hit also carries `relevance`: the cosine similarity of query
and passage from the dense search (0.0 when only the lexical side found it). Callers
that decide "is this good enough to answer from" use `relevance`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from storage.documents import DocumentRepository, Passage
from storage.ids import PointId, UserId
from storage.knowledge_index import KnowledgeIndex
from storage.vectors import ScoredPoint, SparseVector

__all__ = ["QueryEncoder", "RetrievedPassage", "Retriever"]

Search = Callable[[SparseVector | None, int], Awaitable[list[ScoredPoint]]]


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
    """A passage with its ranking score, its cosine relevance, and where it was found."""

    passage: Passage
    score: float
    private: bool
    relevance: float


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
        """With `lexical`, ranking is hybrid (dense + lexical, RRF); without, dense only."""
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
        scopes: list[tuple[bool, Search]] = []
        if include_shared:
            scopes.append((False, self._shared_search(dense)))
        if user_id is not None:
            scopes.append((True, self._private_search(dense, user_id)))
        ranked = await asyncio.gather(*(self._rank(search, sparse, limit) for _, search in scopes))
        hits = [
            _Hit(point, private, relevance.get(point.id, 0.0))
            for (private, _), (points, relevance) in zip(scopes, ranked, strict=True)
            for point in points
        ]
        return await self._hydrate(hits, user_id, limit)

    def _shared_search(self, dense: Sequence[float]) -> Search:
        async def run(sparse: SparseVector | None, limit: int) -> list[ScoredPoint]:
            return await self._index.search_shared(dense, sparse=sparse, limit=limit)

        return run

    def _private_search(self, dense: Sequence[float], user_id: UserId) -> Search:
        async def run(sparse: SparseVector | None, limit: int) -> list[ScoredPoint]:
            return await self._index.search_private(
                dense, user_id=user_id, sparse=sparse, limit=limit
            )

        return run

    @staticmethod
    async def _rank(
        search: Search, sparse: SparseVector | None, limit: int
    ) -> tuple[list[ScoredPoint], dict[PointId, float]]:
        """Ranked points and the dense cosine of each point the dense search found."""
        if sparse is None:
            points = await search(None, limit)
            return points, {point.id: point.score for point in points}
        # A wider dense search, so that most fused hits get their cosine too.
        fused, dense_only = await asyncio.gather(search(sparse, limit), search(None, 4 * limit))
        return fused, {point.id: point.score for point in dense_only}

    async def _hydrate(
        self, hits: Sequence[_Hit], user_id: UserId | None, limit: int
    ) -> list[RetrievedPassage]:
        passages = await self._documents.passages([hit.point.id for hit in hits])
        found: list[RetrievedPassage] = []
        for hit in sorted(hits, key=lambda hit: hit.point.score, reverse=True):
            passage = passages.get(hit.point.id)
            if passage is None:
                continue  # a point SQLite does not know: never shown
            if passage.owner_id is not None and passage.owner_id != user_id:
                continue  # defence in depth: another user's document
            found.append(RetrievedPassage(passage, hit.point.score, hit.private, hit.relevance))
        return found[:limit]


@dataclass(frozen=True, slots=True)
class _Hit:
    point: ScoredPoint
    private: bool
    relevance: float
