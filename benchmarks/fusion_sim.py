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
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from qdrant_edge import Bm25, Bm25Config
from retrieval_cache import Chunks

Ranking = Callable[[int], list[str]]


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
