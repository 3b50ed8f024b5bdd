"""Try fusion settings on a cached corpus in seconds: tune on train/dev, check on held-out and test.

Scores come from `fusion_sim` (exact cosine and BM25 over the cached chunk vectors, the
candidate lists the engine would return); each setting ranks documents and is scored
with nDCG@10 / Recall@10 on every split. Splits: SciFact's train queries are cut in two
by a hash of the query id (tune: 2/3, held-out: 1/3); NFCorpus tunes on train and holds
out dev. Test is printed for reference and never used to choose.

    .venv/bin/python benchmarks/fusion_tuning.py [--cache DIR] [--model KEY] [--grid NAME]

`--model` other than the default ranks the same chunks (as the default model's ingest
cut them) by that model's dense vectors (`benchmarks/retrieval_models.py` computes them).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import beir
import fusion_learned
import numpy as np
import retrieval_cache as rc
import retrieval_subset
from fusion_sim import F32, Candidates, Corpus, Lexical, Scorer, evaluate
from qdrant_edge import Bm25Config
from retrieval_models import DEFAULT_ENTRY_MODEL, dense_for

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


def feedback(vectors: F32, weight: float, top_m: int, beta: float, *, full: bool) -> Scorer:
    """Weighted max-scaled fusion; with `full`, cosine for every candidate (not only those
    the dense list returned); with `beta`, the query vector moves towards the mean of the
    `top_m` fused candidates (Rocchio) and the candidates are scored again."""

    def score(c: Candidates) -> F32:
        mine = vectors[c.chunks]
        known = ~np.isnan(c.dense)
        cosine = mine @ c.query
        dense = cosine if full else np.where(known, cosine, np.nan).astype(np.float32)
        fused = weight * _topmax(dense) + (1 - weight) * _topmax(c.lexical)
        if beta <= 0:
            return fused.astype(np.float32)
        best = np.argsort(-fused, kind="stable")[:top_m]
        moved = c.query + beta * mine[best].mean(axis=0)
        moved /= np.linalg.norm(moved)
        cosine = mine @ moved
        dense = cosine if full else np.where(known, cosine, np.nan).astype(np.float32)
        return (weight * _topmax(dense) + (1 - weight) * _topmax(c.lexical)).astype(np.float32)

    return score


# --- grids -------------------------------------------------------------------------------


Setting = tuple[str, Scorer, float]


def _baseline(_vectors: F32) -> Iterator[Setting]:
    yield "dense", dense_only, 0.0
    yield "bm25", lexical_only, 0.0
    yield "rrf60", rrf(60, 0.5), 0.0


def _short(vectors: F32) -> Iterator[Setting]:
    yield from _baseline(vectors)
    yield "rrf k=20 w=0.5", rrf(20, 0.5), 0.0
    for w in (0.4, 0.5, 0.6):
        yield f"max w={w}", weighted("max", w), 0.0
    for w, agg in itertools.product((0.4, 0.5, 0.6), (0.0, 0.05, 0.1)):
        yield f"max full w={w} agg={agg}", feedback(vectors, w, 3, 0.0, full=True), agg


def _production(vectors: F32) -> Iterator[Setting]:
    """The three rankings `SEARCH_MODE` offers, as the `Retriever` ranks them."""
    yield "dense", dense_only, 0.0
    yield "hybrid-rrf (rrf k=60)", rrf(60, 0.5), 0.0
    yield "hybrid (max full w=0.6)", feedback(vectors, 0.6, 3, 0.0, full=True), 0.0


def floored(vectors: F32, weight: float, floor: float) -> Scorer:
    """The production fusion (`graphs.fusion`): every candidate's true cosine, scaled from
    `floor` to the best, weighted against BM25 scaled by its best."""

    def score(c: Candidates) -> F32:
        cosine = vectors[c.chunks] @ c.query
        top = float(cosine.max()) if len(cosine) else 0.0
        dense = np.clip(cosine - floor, 0, None) / max(top - floor, 1e-9)
        return (weight * dense + (1 - weight) * _topmax(c.lexical)).astype(np.float32)

    return score


def _floor(vectors: F32) -> Iterator[Setting]:
    """Dense weight x cosine floor (`ModelChoice.dense_weight`, `cosine_floor`)."""
    yield "dense", dense_only, 0.0
    for floor, w in itertools.product((0.0, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8), (0.5, 0.6, 0.7, 0.8)):
        yield f"floor={floor} w={w}", floored(vectors, w, floor), 0.0


def _weight(vectors: F32) -> Iterator[Setting]:
    for w in (0.45, 0.5, 0.55, 0.6, 0.65):
        yield f"max full w={w}", feedback(vectors, w, 3, 0.0, full=True), 0.0


def _prf(vectors: F32) -> Iterator[Setting]:
    for full, beta, m, w in itertools.product(
        (False, True), (0.0, 0.5, 1.0, 2.0), (3, 10), (0.5, 0.6)
    ):
        if beta or m == 3:
            label = f"prf full={int(full)} b={beta} m={m} w={w}"
            yield label, feedback(vectors, w, m, beta, full=full), 0.0


def _rrf(_vectors: F32) -> Iterator[Setting]:
    for k, w in itertools.product((1, 5, 10, 20, 40, 60, 100), (0.4, 0.5, 0.6, 0.7)):
        yield f"rrf k={k} w={w}", rrf(k, w), 0.0


def _weighted(_vectors: F32) -> Iterator[Setting]:
    for norm, w, agg in itertools.product(
        NORMALISERS, (0.3, 0.4, 0.5, 0.6, 0.7), (0.0, 0.1, 0.2, 0.3)
    ):
        yield f"{norm} w={w} agg={agg}", weighted(norm, w), agg


def _all(vectors: F32) -> Iterator[Setting]:
    yield from _baseline(vectors)
    yield from _rrf(vectors)
    yield from _weighted(vectors)


GRIDS: Mapping[str, Callable[[F32], Iterator[Setting]]] = {
    "baseline": _baseline,
    "short": _short,
    "prf": _prf,
    "production": _production,
    "weight": _weight,
    "floor": _floor,
    "rrf": _rrf,
    "weighted": _weighted,
    "all": _all,
}


async def load_corpus(
    cache: Path, dataset: Path, model: str, subset: tuple[int, int] | None = None
) -> Corpus:
    """The corpus as the default model's ingest chunked it, with `model`'s dense vectors;
    with `subset` (documents, queries per split), a fixed part of it (`retrieval_subset`).

    `model` may name two models, "A+B@w": each chunk's and query's vector is then A's
    times sqrt(w) beside B's times sqrt(1 - w), so that a cosine is w x A's + (1 - w) x
    B's (both unit vectors): two dense models fused into one."""
    texts, splits, rows = beir.queries(dataset), beir.splits(dataset), None
    whole = cache / f"{dataset.name}-{DEFAULT_ENTRY_MODEL}-c256o48" / rc.ENTRY_FILE
    if subset is None or whole.is_file():
        entry = await rc.ensure_entry(cache, dataset, DEFAULT_ENTRY_MODEL, 256, 48)
        chunks = rc.load_chunks(entry)
        if subset is not None:  # cut from the whole cached corpus
            rows, splits = retrieval_subset.choose(
                chunks, splits, documents=subset[0], queries=subset[1]
            )
            chunks = retrieval_subset.restrict(chunks, rows)
    else:  # the subset's records alone, ingested into an entry of their own
        ids = [record.id for record in beir.corpus(dataset)]
        only, splits = retrieval_subset.choose_documents(
            ids, splits, documents=subset[0], queries=subset[1]
        )
        entry = await rc.ensure_entry(
            cache, dataset, DEFAULT_ENTRY_MODEL, 256, 48, only=frozenset(only)
        )
        chunks = rc.load_chunks(entry)
    if subset is not None:
        wanted = {q for judged in splits.values() for q in judged}
        texts = {q: text for q, text in texts.items() if q in wanted}
    if "+" not in model:
        vectors = await rc.query_vectors(entry, texts, model)
        dense = await dense_for(entry, model, rows)
        return Corpus(replace(chunks, dense=dense), texts, vectors, splits)
    pair, _, share = model.partition("@")
    first, second = pair.split("+")
    a, b = math.sqrt(float(share)), math.sqrt(1 - float(share))
    one = await rc.query_vectors(entry, texts, first)
    two = await rc.query_vectors(entry, texts, second)
    vectors = {q: np.concatenate([a * one[q], b * two[q]]).astype(np.float32) for q in one}
    dense = np.hstack(
        [a * await dense_for(entry, first, rows), b * await dense_for(entry, second, rows)]
    )
    return Corpus(replace(chunks, dense=dense.astype(np.float32)), texts, vectors, splits)


def lexical_index(chunks: rc.Chunks, spec: str) -> Lexical:
    """'stored' (the vectors ingest wrote), or e.g. 'k=1.2,b=0.75,avg_len=256,text=body'.

    `text` is what is encoded: `embedded` (title > headings, then the chunk: what ingest
    encodes), `body` (the chunk alone) or `title2` (the title trail twice, then the chunk).
    """
    if spec == "stored":
        return Lexical.stored(chunks)
    values = dict(part.split("=") for part in spec.split(",")) if spec != "default" else {}
    config = Bm25Config(
        language="english",
        k=float(values.get("k", 1.2)),
        b=float(values.get("b", 0.75)),
        avg_len=float(values.get("avg_len", 256)),
    )
    text = values.get("text", "embedded")
    texts = [_text(t, text) for t in chunks.texts]
    return Lexical.build(texts, config)


def _text(embedded: str, kind: str) -> str:
    trail, _, body = embedded.partition("\n\n")
    if kind == "body":
        return body
    if kind == "title2":
        return f"{trail}\n{trail}\n\n{body}"
    return embedded


def report(name: str, results: Mapping[str, tuple[float, float]], splits: Sequence[str]) -> None:
    cells = " ".join(f"{results[s][0]:>8.3f} {results[s][1]:>6.3f}" for s in splits)
    print(f"{name:<34} {cells}", flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=REPO.parent / "cache" / "retrieval")
    parser.add_argument("--model", default=DEFAULT_ENTRY_MODEL)
    parser.add_argument("--datasets", nargs="+", default=["scifact", "nfcorpus"])
    parser.add_argument("--grid", default="all", choices=sorted(GRIDS))
    parser.add_argument("--bm25", nargs="+", default=["stored"])
    parser.add_argument("--depth", type=int, nargs="+", default=[100])
    parser.add_argument("--learned", action="store_true", help="also train a learned fusion")
    parser.add_argument(
        "--subset", type=int, nargs=2, metavar=("DOCUMENTS", "QUERIES"), help="a fixed part"
    )
    args = parser.parse_args()
    for name in args.datasets:
        dataset = Path(name) if "/" in name else DATASETS / name
        subset = tuple(args.subset) if args.subset else None
        corpus = await load_corpus(args.cache, dataset, args.model, subset)
        splits = list(corpus.splits)
        for spec, depth in itertools.product(args.bm25, args.depth):
            started = time.perf_counter()
            lexical = lexical_index(corpus.chunks, spec)
            corpus.prepare(lexical, depth)
            print(f"\n{name} bm25={spec} depth={depth} ({time.perf_counter() - started:.0f} s)")
            print(f"{'':<34} " + " ".join(f"{s:>15}" for s in splits))
            print(f"{'setting':<34} " + " ".join(f"{'nDCG@10':>8} {'R@10':>6}" for _ in splits))
            for label, scorer, agg in GRIDS[args.grid](corpus.chunks.dense):
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
