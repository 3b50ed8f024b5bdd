"""Try fusion settings on a cached corpus in seconds: tune on train/dev, check on held-out and test.

Scores come from `fusion_sim` (exact cosine and BM25 over the cached chunk vectors, the
candidate lists the engine would return); each setting ranks documents and is scored
with nDCG@10 / Recall@10 on every split. Splits: SciFact's train queries are cut in two
by a hash of the query id (tune: 2/3, held-out: 1/3); NFCorpus tunes on train and holds
out dev. Test is printed for reference and never used to choose.

    .venv/bin/python benchmarks/fusion_tuning.py [--cache DIR] [--model KEY] [--grid NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import beir
import numpy as np
import retrieval_cache as rc
from fusion_sim import Lexical, top
from numpy.typing import NDArray
from qdrant_edge import Bm25Config

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO.parent / "shared" / "datasets"
F32 = NDArray[np.float32]


def split_queries(dataset: Path) -> dict[str, beir.Qrels]:
    """tune / held-out / test qrels of a dataset (see the module docstring)."""
    test = beir.qrels(dataset, "test")
    train = beir.qrels(dataset, "train")
    dev = beir.qrels(dataset, "dev")
    if dev:
        return {"tune": train, "held-out": dev, "test": test}
    tune = {q: r for q, r in train.items() if _bucket(q) < 2}
    held = {q: r for q, r in train.items() if _bucket(q) == 2}
    return {"tune": tune, "held-out": held, "test": test}


def _bucket(query_id: str) -> int:
    return hashlib.sha256(query_id.encode()).digest()[0] % 3


@dataclass(frozen=True, slots=True)
class Candidates:
    """One query's candidate chunks: dense cosine and BM25 (NaN where a list missed it)."""

    chunks: NDArray[np.int64]
    dense: F32
    lexical: F32
    dense_rank: NDArray[np.int64]  # 0-based rank in the dense list, large if absent
    lexical_rank: NDArray[np.int64]


@dataclass(slots=True)
class Corpus:
    """A cached corpus with everything a setting needs to rank documents."""

    chunks: rc.Chunks
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


# --- scorers ---------------------------------------------------------------------------


def dense_only(c: Candidates) -> F32:
    return np.where(np.isnan(c.dense), -1.0, c.dense).astype(np.float32)


def lexical_only(c: Candidates) -> F32:
    return np.where(np.isnan(c.lexical), 0.0, c.lexical).astype(np.float32)


def rrf(k: float, weight: float) -> Scorer:
    def score(c: Candidates) -> F32:
        return (weight / (k + 1 + c.dense_rank) + (1 - weight) / (k + 1 + c.lexical_rank)).astype(
            np.float32
        )

    return score


def _minmax(values: F32) -> F32:
    present = values[~np.isnan(values)]
    if len(present) == 0:
        return np.zeros_like(values)
    low, high = float(present.min()), float(present.max())
    scaled = (values - low) / (high - low) if high > low else np.ones_like(values)
    return np.where(np.isnan(values), 0.0, scaled).astype(np.float32)


def _zscore(values: F32) -> F32:
    present = values[~np.isnan(values)]
    if len(present) < 2:
        return np.zeros_like(values)
    mean, std = float(present.mean()), float(present.std()) or 1.0
    low = mean - 3 * std  # DBSF: mean +- 3 sigma mapped onto [0, 1]
    scaled = np.clip((values - low) / (6 * std), 0, 1)
    return np.where(np.isnan(values), 0.0, scaled).astype(np.float32)


def _topmax(values: F32) -> F32:
    present = values[~np.isnan(values)]
    if len(present) == 0:
        return np.zeros_like(values)
    return np.where(np.isnan(values), 0.0, values / max(float(present.max()), 1e-9)).astype(
        np.float32
    )


NORMALISERS: Mapping[str, Callable[[F32], F32]] = {
    "minmax": _minmax,
    "zscore": _zscore,
    "max": _topmax,
}


def weighted(norm: str, weight: float) -> Scorer:
    normalise = NORMALISERS[norm]

    def score(c: Candidates) -> F32:
        return (weight * normalise(c.dense) + (1 - weight) * normalise(c.lexical)).astype(
            np.float32
        )

    return score


# --- grids -------------------------------------------------------------------------------


def settings_grid(name: str) -> Iterator[tuple[str, Scorer, float]]:
    if name in {"baseline", "all"}:
        yield "dense", dense_only, 0.0
        yield "bm25", lexical_only, 0.0
        yield "rrf60", rrf(60, 0.5), 0.0
    if name in {"rrf", "all"}:
        for k, w in itertools.product((1, 5, 10, 20, 40, 60, 100), (0.4, 0.5, 0.6, 0.7)):
            yield f"rrf k={k} w={w}", rrf(k, w), 0.0
    if name in {"weighted", "all"}:
        for norm, w, agg in itertools.product(
            NORMALISERS, (0.3, 0.4, 0.5, 0.6, 0.7), (0.0, 0.1, 0.2, 0.3)
        ):
            yield f"{norm} w={w} agg={agg}", weighted(norm, w), agg


async def load_corpus(cache: Path, dataset: Path, model: str) -> Corpus:
    entry = await rc.ensure_entry(cache, dataset, model, 256, 48)
    texts = beir.queries(dataset)
    vectors = await rc.query_vectors(entry, texts, model)
    return Corpus(rc.load_chunks(entry), texts, vectors, split_queries(dataset))


def bm25_config(spec: str) -> Bm25Config | None:
    """'default', 'stored', or 'k=1.2,b=0.75,avg_len=256'."""
    if spec in {"default", "stored"}:
        return None
    values = dict(part.split("=") for part in spec.split(","))
    return Bm25Config(
        language="english",
        k=float(values.get("k", 1.2)),
        b=float(values.get("b", 0.75)),
        avg_len=float(values.get("avg_len", 256)),
    )


def report(name: str, results: Mapping[str, tuple[float, float]], splits: Sequence[str]) -> None:
    cells = " ".join(f"{results[s][0]:>8.3f} {results[s][1]:>6.3f}" for s in splits)
    print(f"{name:<34} {cells}", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=REPO.parent / "cache" / "retrieval")
    parser.add_argument("--model", default="minilm-l6-int8")
    parser.add_argument("--datasets", nargs="+", default=["scifact", "nfcorpus"])
    parser.add_argument("--grid", default="all")
    parser.add_argument("--bm25", nargs="+", default=["stored"])
    parser.add_argument("--depth", type=int, nargs="+", default=[400])
    args = parser.parse_args()
    for name in args.datasets:
        dataset = Path(name) if "/" in name else DATASETS / name
        corpus = await load_corpus(args.cache, dataset, args.model)
        splits = list(corpus.splits)
        for spec, depth in itertools.product(args.bm25, args.depth):
            started = time.perf_counter()
            lexical = (
                Lexical.stored(corpus.chunks)
                if spec == "stored"
                else Lexical.build(corpus.chunks.texts, bm25_config(spec))
            )
            corpus.prepare(lexical, depth)
            print(f"\n{name} bm25={spec} depth={depth} ({time.perf_counter() - started:.0f} s)")
            print(f"{'':<34} " + " ".join(f"{s:>15}" for s in splits))
            print(f"{'setting':<34} " + " ".join(f"{'nDCG@10':>8} {'R@10':>6}" for _ in splits))
            for label, scorer, agg in settings_grid(args.grid):
                report(label, evaluate(corpus, scorer, agg), splits)


if __name__ == "__main__":
    asyncio.run(main())
