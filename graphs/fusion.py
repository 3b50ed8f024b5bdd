"""Fuse a dense and a lexical candidate list into one ranking of passages.

Each side's scores are divided by the best score on that side (cosine and BM25 both
start at 0, so this maps them onto [0, 1] with 0 meaning "no match", the convex
combination of Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval",
2023); a candidate one side did not return scores 0 there. The fused score is the
weighted sum. A passage then gains `document_weight` times the fused scores of the other
candidates from its document: a document that matches in several places ranks above
one lucky passage. Settings were chosen on train splits only (`benchmarks/fusion_tuning.py`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from storage.ids import PointId

__all__ = ["Candidate", "Fusion"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A passage one of the searches returned, with the score each side gave it."""

    id: PointId
    document: str
    private: bool
    dense: float | None = None
    lexical: float | None = None

    def with_lexical(self, score: float) -> Candidate:
        """The same candidate, also found by the lexical search."""
        return replace(self, lexical=score)


@dataclass(frozen=True, slots=True)
class Fusion:
    """Weighted, score-normalised fusion with document aggregation."""

    dense_weight: float = 0.5
    document_weight: float = 0.2
    depth: int = 100
    """Candidates asked from each search (at least the number of passages wanted)."""

    def rank(self, candidates: Sequence[Candidate]) -> list[tuple[Candidate, float]]:
        """Candidates with their fused scores, best first (ties by id, so stable)."""
        dense_top = max((c.dense for c in candidates if c.dense is not None), default=0.0)
        lexical_top = max((c.lexical for c in candidates if c.lexical is not None), default=0.0)
        fused: dict[PointId, float] = {}
        for c in candidates:
            fused[c.id] = self.dense_weight * _scaled(c.dense, dense_top) + (
                1 - self.dense_weight
            ) * _scaled(c.lexical, lexical_top)
        totals: dict[str, float] = defaultdict(float)
        for c in candidates:
            totals[c.document] += fused[c.id]
        scored = [
            (c, fused[c.id] + self.document_weight * (totals[c.document] - fused[c.id]))
            for c in candidates
        ]
        scored.sort(key=lambda pair: (-pair[1], pair[0].id))
        return scored


def _scaled(score: float | None, top: float) -> float:
    if score is None or top <= 0:
        return 0.0
    return max(score, 0.0) / top
