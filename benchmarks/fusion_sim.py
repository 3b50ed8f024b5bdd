"""Rank a cached corpus in numpy: exact dense and BM25 scores, candidate lists, fusion.

This mirrors what the engine computes (exact cosine; BM25 document weights from
qdrant-edge's `Bm25` with the IDF modifier ln(1 + (N - n + 0.5) / (n + 0.5))), so that
fusion settings can be tried in seconds on the cached vectors. The fusion itself is the
production code (`graphs.fusion`), fed with the same candidate lists the `Retriever`
would get from the engine.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import beir
import numpy as np
from numpy.typing import NDArray
from qdrant_edge import Bm25, Bm25Config
from retrieval_cache import Chunks

F32 = NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class Lexical:
    """An inverted index of BM25 document weights over the chunks, and its query encoder."""

    postings: Mapping[int, tuple[NDArray[np.int64], NDArray[np.float32]]]
    size: int
    bm25: Bm25

    @classmethod
    def build(cls, texts: Sequence[str], config: Bm25Config | None = None) -> Lexical:
        bm25 = Bm25(config or Bm25Config(language="english"))
        rows: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for chunk, text in enumerate(texts):
            vector = bm25.embed_document(text)
            for index, value in zip(vector.indices, vector.values, strict=True):
                rows[int(index)].append((chunk, float(value)))
        postings = {
            term: (
                np.asarray([c for c, _ in entries], dtype=np.int64),
                np.asarray([v for _, v in entries], dtype=np.float32),
            )
            for term, entries in rows.items()
        }
        return cls(postings, len(texts), bm25)

    @classmethod
    def stored(cls, chunks: Chunks) -> Lexical:
        """The index of the lexical vectors the engine holds (as ingested)."""
        rows: dict[int, list[tuple[int, float]]] = defaultdict(list)
        for chunk, (indices, values) in enumerate(
            zip(chunks.sparse_indices, chunks.sparse_values, strict=True)
        ):
            for index, value in zip(indices.tolist(), values.tolist(), strict=True):
                rows[int(index)].append((chunk, float(value)))
        postings = {
            term: (
                np.asarray([c for c, _ in entries], dtype=np.int64),
                np.asarray([v for _, v in entries], dtype=np.float32),
            )
            for term, entries in rows.items()
        }
        return cls(postings, len(chunks.texts), Bm25(Bm25Config(language="english")))

    def scores(self, query: str) -> NDArray[np.float32]:
        """BM25 score of every chunk for `query` (query term weights 1.0, as the encoder)."""
        total = np.zeros(self.size, dtype=np.float32)
        for index in self.bm25.embed_query(query).indices:
            found = self.postings.get(int(index))
            if found is None:
                continue
            chunks, weights = found
            n = len(chunks)
            idf = math.log(1.0 + (self.size - n + 0.5) / (n + 0.5))
            total[chunks] += idf * weights
        return total


def top(scores: NDArray[np.float32], depth: int, positive: bool = False) -> list[int]:
    """Indices of the `depth` best scores, best first (only scores > 0 with `positive`)."""
    depth = min(depth, len(scores))
    best = np.argpartition(-scores, depth - 1)[:depth]
    ordered = best[np.argsort(-scores[best], kind="stable")]
    if positive:
        ordered = ordered[scores[ordered] > 0]
    return [int(i) for i in ordered]


def documents_in_order(chunks: Chunks, ranked_chunks: Iterable[int], k: int = 100) -> list[str]:
    """Corpus ids of the documents of ranked chunks, a document once, at its best chunk."""
    seen: set[int] = set()
    ranked: list[str] = []
    for chunk in ranked_chunks:
        doc = int(chunks.doc_of_chunk[chunk])
        if doc in seen:
            continue
        seen.add(doc)
        ranked.extend(chunks.doc_ids[doc])
        if len(ranked) >= k:
            break
    return ranked


@dataclass(frozen=True, slots=True)
class Candidates:
    """One query's candidate chunks: dense cosine and BM25 (NaN where a list missed it)."""

    chunks: NDArray[np.int64]
    dense: F32
    lexical: F32
    dense_rank: NDArray[np.int64]  # 0-based rank in the dense list, large if absent
    lexical_rank: NDArray[np.int64]
    query: F32  # the query's dense vector


@dataclass(slots=True)
class Corpus:
    """A cached corpus with everything a setting needs to rank documents."""

    chunks: Chunks
    queries: dict[str, str]
    vectors: dict[str, F32]
    splits: dict[str, beir.Qrels]
    candidates: dict[str, Candidates] = field(default_factory=dict)

    def prepare(self, lexical: Lexical, depth: int) -> None:
        """Candidate lists (dense top `depth`, lexical top `depth`) for every judged query."""
        wanted = {q for split in self.splits.values() for q in split}
        self.candidates = {}
        for query in wanted:
            dense_all = self.chunks.dense @ self.vectors[query]
            lexical_all = lexical.scores(self.queries[query])
            dense_top = top(dense_all, depth)
            lexical_top = top(lexical_all, depth, positive=True)
            chunks = np.asarray(sorted(set(dense_top) | set(lexical_top)), dtype=np.int64)
            dense_rank = np.full(len(chunks), 10**6, dtype=np.int64)
            lexical_rank = np.full(len(chunks), 10**6, dtype=np.int64)
            where = {c: i for i, c in enumerate(chunks.tolist())}
            for rank, c in enumerate(dense_top):
                dense_rank[where[c]] = rank
            for rank, c in enumerate(lexical_top):
                lexical_rank[where[c]] = rank
            self.candidates[query] = Candidates(
                chunks,
                np.where(dense_rank < 10**6, dense_all[chunks], np.nan).astype(np.float32),
                np.where(lexical_rank < 10**6, lexical_all[chunks], np.nan).astype(np.float32),
                dense_rank,
                lexical_rank,
                self.vectors[query],
            )


Scorer = Callable[[Candidates], F32]


def rank_documents(corpus: Corpus, query: str, scorer: Scorer, agg: float) -> list[str]:
    """Documents by max chunk score + `agg` x the sum of the document's other chunk scores."""
    found = corpus.candidates[query]
    scores = scorer(found)
    docs = corpus.chunks.doc_of_chunk[found.chunks]
    unique, inverse = np.unique(docs, return_inverse=True)
    best = np.full(len(unique), -np.inf)
    np.maximum.at(best, inverse, scores)
    if agg:
        total = np.zeros(len(unique))
        np.add.at(total, inverse, np.maximum(scores, 0))
        best = best + agg * (total - np.maximum(best, 0))
    order = np.argsort(-best, kind="stable")[:20]
    ranked: list[str] = []
    for doc in unique[order]:
        ranked.extend(corpus.chunks.doc_ids[int(doc)])
    return ranked


def evaluate(corpus: Corpus, scorer: Scorer, agg: float) -> dict[str, tuple[float, float]]:
    result = {}
    for name, judged in corpus.splits.items():
        runs = {q: rank_documents(corpus, q, scorer, agg) for q in judged}
        result[name] = beir.mean_scores(runs, judged)
    return result
