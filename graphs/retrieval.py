"""Retrieval: a question in, ranked passages out, each hydrated from SQLite and citable.

Shared knowledge and one user's private documents are searched separately (the
private search always filters on the user id given here, which callers take from the
authenticated identity) and ranked together. Hits SQLite does not know are dropped.

Ranking is one of: dense only; hybrid (the default): a dense and a lexical candidate
list per scope, fused by `graphs.fusion` (max-scaled scores, weighted); or hybrid-rrf:
the engine fuses the two lists with RRF (the ranking before fusion was tuned). An
optional reranker (a cross-encoder) then re-orders the best candidates by its own score.

Fused and reranked scores say nothing absolute, so every hit also carries `relevance`:
the cosine similarity of query and passage from the dense search (0.0 when only the
lexical side found it, as the offline answerer's thresholds were calibrated). Hybrid
ranking itself scores such a hit by its true cosine, computed from the stored vector the
lexical search returns. Reranking changes order and `score`, never `relevance`. Callers
that decide "is this good enough to answer from" use `relevance`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from graphs.fusion import Candidate, Fusion
from graphs.ingest.points import embedding_text
from storage.documents import DocumentRepository, Passage
from storage.ids import PointId, UserId
from storage.knowledge_index import KnowledgeIndex
from storage.vectors import ScoredPoint, SparseVector

__all__ = [
    "LexicalQueryEncoder",
    "PassageReranker",
    "QueryEncoder",
    "RetrievedPassage",
    "Retriever",
]

#: Fused candidates the reranker reads (it costs a model run per candidate).
RERANK_CANDIDATES = 20


class QueryEncoder(Protocol):
    """Turns a question into the vectors the index is searched with."""

    async def embed_query(self, text: str) -> list[float]:
        """The dense query vector."""


class LexicalQueryEncoder(Protocol):
    """Sparse query vectors for hybrid search."""

    def encode_query(self, text: str) -> SparseVector:
        """Query term weights."""


class PassageReranker(Protocol):
    """Scores how well each passage answers a question (a cross-encoder)."""

    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in order; higher is better."""


@dataclass(frozen=True, slots=True)
class RetrievedPassage:
    """A passage with its ranking score, its cosine relevance, and where it was found."""

    passage: Passage
    score: float
    private: bool
    relevance: float


@dataclass(frozen=True, slots=True)
class _Hit:
    id: PointId
    score: float
    private: bool
    relevance: float


@dataclass(frozen=True, slots=True)
class _Scope:
    private: bool
    user_id: UserId | None


class Retriever:
    """Searches the knowledge index for passages."""

    def __init__(
        self,
        *,
        index: KnowledgeIndex,
        documents: DocumentRepository,
        embedder: QueryEncoder,
        lexical: LexicalQueryEncoder | None,
        fusion: Fusion | None = None,
        reranker: PassageReranker | None = None,
        rerank_candidates: int = RERANK_CANDIDATES,
    ) -> None:
        """Without `lexical`, ranking is dense only. With it, `fusion` fuses the dense and
        lexical lists here (hybrid); `fusion=None` lets the engine fuse them with RRF
        (hybrid-rrf). A `reranker` re-orders the best `rerank_candidates` hits."""
        self._index = index
        self._documents = documents
        self._embedder = embedder
        self._lexical = lexical
        self._fusion = fusion
        self._reranker = reranker
        self._rerank_candidates = rerank_candidates

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
        scopes: list[_Scope] = []
        if include_shared:
            scopes.append(_Scope(private=False, user_id=None))
        if user_id is not None:
            scopes.append(_Scope(private=True, user_id=user_id))
        wanted = max(limit, self._rerank_candidates) if self._reranker is not None else limit
        if self._lexical is None:
            hits = await self._dense_hits(scopes, dense, wanted)
        elif self._fusion is None:
            hits = await self._rrf_hits(scopes, dense, self._lexical.encode_query(query), wanted)
        else:
            sparse = self._lexical.encode_query(query)
            hits = await self._fused_hits(scopes, dense, sparse, self._fusion, wanted)
        found = await self._hydrate(hits, user_id)
        if self._reranker is not None:
            found = await _rerank(self._reranker, query, found)
        return found[:limit]

    async def _dense(self, scope: _Scope, dense: Sequence[float], limit: int) -> list[ScoredPoint]:
        if scope.user_id is None:
            return await self._index.search_shared(dense, limit=limit)
        return await self._index.search_private(dense, user_id=scope.user_id, limit=limit)

    async def _lexical_points(
        self, scope: _Scope, sparse: SparseVector, limit: int
    ) -> list[ScoredPoint]:
        """Lexical hits with their dense vectors, so that every candidate gets its cosine."""
        if scope.user_id is None:
            return await self._index.lexical_shared(sparse, limit=limit, with_dense=True)
        return await self._index.lexical_private(
            sparse, user_id=scope.user_id, limit=limit, with_dense=True
        )

    async def _rrf(
        self, scope: _Scope, dense: Sequence[float], sparse: SparseVector, limit: int
    ) -> list[ScoredPoint]:
        if scope.user_id is None:
            return await self._index.search_shared(dense, sparse=sparse, limit=limit)
        return await self._index.search_private(
            dense, user_id=scope.user_id, sparse=sparse, limit=limit
        )

    async def _dense_hits(
        self, scopes: Sequence[_Scope], dense: Sequence[float], limit: int
    ) -> list[_Hit]:
        found = await asyncio.gather(*(self._dense(scope, dense, limit) for scope in scopes))
        return [
            _Hit(point.id, point.score, scope.private, point.score)
            for scope, points in zip(scopes, found, strict=True)
            for point in points
        ]

    async def _rrf_hits(
        self, scopes: Sequence[_Scope], dense: Sequence[float], sparse: SparseVector, limit: int
    ) -> list[_Hit]:
        # A wider dense search, so that most fused hits get their cosine too.
        fused, wide = await asyncio.gather(
            asyncio.gather(*(self._rrf(scope, dense, sparse, limit) for scope in scopes)),
            asyncio.gather(*(self._dense(scope, dense, 4 * limit) for scope in scopes)),
        )
        cosine = {point.id: point.score for points in wide for point in points}
        return [
            _Hit(point.id, point.score, scope.private, cosine.get(point.id, 0.0))
            for scope, points in zip(scopes, fused, strict=True)
            for point in points
        ]

    async def _fused_hits(
        self,
        scopes: Sequence[_Scope],
        dense: Sequence[float],
        sparse: SparseVector,
        fusion: Fusion,
        limit: int,
    ) -> list[_Hit]:
        depth = max(limit, fusion.depth)
        dense_lists, lexical_lists = await asyncio.gather(
            asyncio.gather(*(self._dense(scope, dense, depth) for scope in scopes)),
            asyncio.gather(*(self._lexical_points(scope, sparse, depth) for scope in scopes)),
        )
        # `relevance` stays what the offline answerer was calibrated on: the cosine of a
        # passage the dense search returned, 0.0 for one only the lexical search found.
        relevance = {point.id: point.score for points in dense_lists for point in points}
        # A hit only the lexical search found is ranked by its true cosine all the same.
        cosine = {
            **_cosines(dense, [p for ps in lexical_lists for p in ps if p.id not in relevance]),
            **relevance,
        }
        candidates: dict[PointId, Candidate] = {}
        for scope, points in zip(scopes, dense_lists, strict=True):
            for point in points:
                candidates[point.id] = Candidate(point.id, scope.private, point.score, None)
        for scope, points in zip(scopes, lexical_lists, strict=True):
            for point in points:
                known = cosine.get(point.id)
                candidates[point.id] = Candidate(point.id, scope.private, known, point.score)
        return [
            _Hit(item.id, score, item.private, relevance.get(item.id, 0.0))
            for item, score in fusion.rank(list(candidates.values()))[:limit]
        ]

    async def _hydrate(
        self, hits: Sequence[_Hit], user_id: UserId | None
    ) -> list[RetrievedPassage]:
        passages = await self._documents.passages([hit.id for hit in hits])
        found: list[RetrievedPassage] = []
        for hit in sorted(hits, key=lambda hit: hit.score, reverse=True):
            passage = passages.get(hit.id)
            if passage is None:
                continue  # a point SQLite does not know: never shown
            if passage.owner_id is not None and passage.owner_id != user_id:
                continue  # defence in depth: another user's document
            found.append(RetrievedPassage(passage, hit.score, hit.private, hit.relevance))
        return found


async def _rerank(
    reranker: PassageReranker, query: str, found: Sequence[RetrievedPassage]
) -> list[RetrievedPassage]:
    """Order by the reranker's score (which becomes `score`); `relevance` is kept."""
    texts = [
        embedding_text(hit.passage.document_title, hit.passage.heading_path, hit.passage.text)
        for hit in found
    ]
    scores = await reranker.score(query, texts)
    rescored = [
        RetrievedPassage(hit.passage, score, hit.private, hit.relevance)
        for hit, score in zip(found, scores, strict=True)
    ]
    return sorted(rescored, key=lambda hit: hit.score, reverse=True)


def _cosines(query: Sequence[float], points: Sequence[ScoredPoint]) -> dict[PointId, float]:
    """Cosine of the query and each point's stored dense vector, in one matrix product."""
    found = [point for point in points if point.dense is not None]
    if not found:
        return {}
    matrix = np.asarray([point.dense for point in found], dtype=np.float32)
    vector = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(vector))
    scores = (matrix @ vector) / np.where(norms > 0, norms, 1.0)
    return {point.id: float(score) for point, score in zip(found, scores, strict=True)}
