"""A learned fusion: a linear model over each candidate's scores, trained on the tune split only.

Features of a candidate chunk (all known to the `Retriever` at search time): its dense and
BM25 scores scaled by the best of their list, the raw cosine, reciprocal ranks in both
lists, whether both lists found it, and the scaled scores summed over the other
candidates of its document. Training is pairwise logistic regression (RankNet with a
linear scorer): each relevant candidate against sampled non-relevant ones of the same
query, plain gradient descent on standardised features with an L2 penalty.
"""

from __future__ import annotations

import numpy as np
from fusion_sim import F32, Candidates, Corpus, Scorer
from numpy.typing import NDArray

NAMES = (
    "dense/top",
    "bm25/top",
    "cosine",
    "1/(10+dense rank)",
    "1/(10+bm25 rank)",
    "both lists",
    "doc: other dense/top",
    "doc: other bm25/top",
)


def features(found: Candidates, doc_of_chunk: NDArray[np.int64]) -> NDArray[np.float64]:
    dense = np.nan_to_num(found.dense, nan=0.0).astype(np.float64)
    lexical = np.nan_to_num(found.lexical, nan=0.0).astype(np.float64)
    dense_scaled = dense / max(float(dense.max()), 1e-9)
    lexical_scaled = lexical / max(float(lexical.max()), 1e-9)
    docs = doc_of_chunk[found.chunks]
    _, inverse = np.unique(docs, return_inverse=True)
    dense_doc = np.bincount(inverse, weights=dense_scaled)[inverse] - dense_scaled
    lexical_doc = np.bincount(inverse, weights=lexical_scaled)[inverse] - lexical_scaled
    both = (~np.isnan(found.dense) & ~np.isnan(found.lexical)).astype(np.float64)
    return np.column_stack(
        [
            dense_scaled,
            lexical_scaled,
            dense,
            1.0 / (10 + found.dense_rank),
            1.0 / (10 + found.lexical_rank),
            both,
            dense_doc,
            lexical_doc,
        ]
    )


def train(corpus: Corpus, split: str, *, seed: int = 0, negatives: int = 30) -> NDArray[np.float64]:
    """Weights (on raw features) learned from the queries of `split`."""
    rng = np.random.default_rng(seed)
    doc_of_chunk = corpus.chunks.doc_of_chunk
    wins: list[NDArray[np.float64]] = []
    for query, relevant in corpus.splits[split].items():
        found = corpus.candidates[query]
        matrix = features(found, doc_of_chunk)
        labels = np.asarray(
            [
                max((relevant.get(d, 0) for d in corpus.chunks.doc_ids[int(doc)]), default=0)
                for doc in doc_of_chunk[found.chunks]
            ]
        )
        good, bad = np.flatnonzero(labels > 0), np.flatnonzero(labels == 0)
        if len(good) == 0 or len(bad) == 0:
            continue
        for g in good:
            picked = rng.choice(bad, size=min(negatives, len(bad)), replace=False)
            wins.append(matrix[g] - matrix[picked])
    differences = np.vstack(wins)
    scale = differences.std(axis=0)
    scale[scale == 0] = 1.0
    x = differences / scale
    weights = np.zeros(x.shape[1])
    for _ in range(400):
        margin = x @ weights
        gradient = -(x * (1.0 / (1.0 + np.exp(margin)))[:, None]).mean(axis=0) + 1e-4 * weights
        weights -= 2.0 * gradient
    learned: NDArray[np.float64] = weights / scale
    return learned


def scorer(weights: NDArray[np.float64], doc_of_chunk: NDArray[np.int64]) -> Scorer:
    def score(found: Candidates) -> F32:
        return (features(found, doc_of_chunk) @ weights).astype(np.float32)

    return score
