"""Fuse a dense and a lexical candidate list into one ranking of passages.

Each side's scores are divided by the best score on that side (cosine and BM25 both
start at 0, so this maps them onto [0, 1] with 0 meaning "no match"; for an embedding
model whose unrelated texts sit well above 0, the dense side is scaled from that floor
instead, `dense_floor`, with the model's own weight: the convex
combination with theoretical-minimum normalisation of Bruch et al., "An Analysis of
Fusion Functions for Hybrid Retrieval", 2023). A candidate only the dense search
returned scores 0 on the lexical side; one only the lexical search returned still has its
true cosine (the `Retriever` computes it from the stored vector), which measurably beats
treating it as 0. The fused score is the weighted sum.

Chosen on the train splits of BEIR SciFact and NFCorpus (`benchmarks/fusion_tuning.py`):
this beat RRF with any k and weight, min-max and z-score (DBSF) normalisation, adding a
share of the scores of a passage's sibling passages (document aggregation), Rocchio
feedback on the query vector, other BM25 k / b / average lengths, title-field variants
and a learned linear fusion; `benchmarks/retrieval.py` reports the test and held-out splits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storage.ids import PointId

__all__ = ["Candidate", "Fusion"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A passage one of the searches returned: its cosine and, if found lexically, BM25."""

    id: PointId
    private: bool
    dense: float | None
    lexical: float | None


@dataclass(frozen=True, slots=True)
class Fusion:
    """Weighted fusion of max-scaled dense and lexical scores."""

    dense_weight: float = 0.6
    depth: int = 100
    """Candidates asked from each search (at least the number of passages wanted)."""
    dense_floor: float = 0.0
    """The cosine that means "unrelated" to the embedding model: dense scores are scaled
    from it to the best one. 0 for all-MiniLM-L6-v2; multilingual-e5-small gives unrelated
    text about 0.7, and scaled from 0 its scores would all look alike beside BM25's."""

    def rank(self, candidates: Sequence[Candidate]) -> list[tuple[Candidate, float]]:
        """Candidates with their fused scores in [0, 1], best first (ties by id)."""
        dense_top = max((c.dense for c in candidates if c.dense is not None), default=0.0)
        lexical_top = max((c.lexical for c in candidates if c.lexical is not None), default=0.0)
        lexical_weight = 1.0 - self.dense_weight
        scored = [
            (
                c,
                self.dense_weight * _scaled(c.dense, dense_top, self.dense_floor)
                + lexical_weight * _scaled(c.lexical, lexical_top, 0.0),
            )
            for c in candidates
        ]
        scored.sort(key=lambda pair: (-pair[1], pair[0].id))
        return scored


def _scaled(score: float | None, top: float, floor: float) -> float:
    if score is None or top <= floor:
        return 0.0
    return max(score - floor, 0.0) / (top - floor)
