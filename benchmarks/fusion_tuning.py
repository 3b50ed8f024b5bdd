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
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import beir
import fusion_learned
import numpy as np
import retrieval_cache as rc
from fusion_sim import F32, Candidates, Corpus, Lexical, Scorer, evaluate
from qdrant_edge import Bm25Config

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO.parent / "shared" / "datasets"


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
    return Corpus(rc.load_chunks(entry), texts, vectors, beir.splits(dataset))


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
    parser.add_argument("--depth", type=int, nargs="+", default=[100])
    parser.add_argument("--learned", action="store_true", help="also train a learned fusion")
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
            if args.learned:
                weights = fusion_learned.train(corpus, "tune")
                named = ", ".join(
                    f"{n} {w:+.3f}" for n, w in zip(fusion_learned.NAMES, weights, strict=True)
                )
                print(f"learned weights: {named}")
                learned = fusion_learned.scorer(weights, corpus.chunks.doc_of_chunk)
                report("learned (linear, pairwise)", evaluate(corpus, learned, 0.0), splits)


if __name__ == "__main__":
    asyncio.run(main())
