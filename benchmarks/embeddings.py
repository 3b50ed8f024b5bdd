"""Benchmark the embedding models side by side: passages/s, queries/s, peak RSS, agreement.

Every (model, threads) configuration runs in a fresh child process, so each peak RSS is
its own (sampled from the parent with psutil); rounds interleave the configurations so
that noise from a busy neighbour core spreads over all of them. Passages are 200-token
windows cut from the SciFact corpus; queries are SciFact-length claims (their first 20
tokens). Cosines compare each model's passage vectors with the fp32 conversion.

    .venv/bin/python benchmarks/embeddings.py [--passages 128] [--rounds 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil

from storage.embeddings import Embedder
from storage.model_files import ensure_model_dir, model_choice

__all__ = ["main"]

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO / "../shared/datasets/scifact/corpus.jsonl"
MODELS = (
    "minilm-l6-int8",
    "minilm-l6-int8-local",
    "minilm-l6-fp32-local",
    "multilingual-e5-small-q4",
    "use-multilingual-v3",
)
REFERENCE = "minilm-l6-fp32-local"
PASSAGE_TOKENS = 200
QUERY_TOKENS = 20


@dataclass(frozen=True, slots=True)
class Run:
    """One child's measurements."""

    model: str
    threads: int
    load_s: float
    passages_per_s: float
    queries_per_s: float
    peak_rss_mb: float


def _windows(embedder: Embedder, corpus: Path, count: int, tokens: int) -> list[str]:
    texts: list[str] = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            text = f"{record.get('title', '')}. {record['text']}"
            spans = embedder.token_spans(text)
            for start in range(0, len(spans) - tokens + 1, tokens):
                texts.append(text[spans[start][0] : spans[start + tokens - 1][1]])
                if len(texts) == count:
                    return texts
    return texts


async def _child(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    embedder = await Embedder.load(Path(args.model_dir), threads=args.threads)
    load_s = time.perf_counter() - started
    passages = _windows(embedder, Path(args.corpus), args.passages, PASSAGE_TOKENS)
    queries = [q[:200] for q in _windows(embedder, Path(args.corpus), args.queries, QUERY_TOKENS)]
    await embedder.embed_passages(passages[:32])  # warm-up
    started = time.perf_counter()
    vectors = await embedder.embed_passages(passages)
    passages_s = time.perf_counter() - started
    started = time.perf_counter()
    for query in queries:
        await embedder.embed_query(query)
    queries_s = time.perf_counter() - started
    np.save(args.vectors_out, np.asarray(vectors, dtype=np.float32))
    result = {
        "load_s": load_s,
        "passages_per_s": len(passages) / passages_s,
        "queries_per_s": len(queries) / queries_s,
    }
    print(json.dumps(result), flush=True)


def _run_child(model_dir: Path, threads: int, args: argparse.Namespace, out: Path) -> Run:
    command = [
        sys.executable,
        __file__,
        "--child",
        f"--model-dir={model_dir}",
        f"--threads={threads}",
        f"--corpus={args.corpus}",
        f"--passages={args.passages}",
        f"--queries={args.queries}",
        f"--vectors-out={out}",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child:  # noqa: S603
        process = psutil.Process(child.pid)
        peak = 0
        while child.poll() is None:
            try:
                peak = max(peak, process.memory_info().rss)
            except psutil.NoSuchProcess:
                break
            time.sleep(0.02)
        stdout = child.stdout.read() if child.stdout else ""
    if child.returncode != 0:
        raise SystemExit(f"child for {model_dir.name} threads={threads} failed")
    result = json.loads(stdout.strip().splitlines()[-1])
    return Run(model=model_dir.name, threads=threads, peak_rss_mb=peak / 2**20, **result)


def _cosines(vectors: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    cos = (vectors * reference).sum(axis=1)
    return float(cos.mean()), float(cos.min())


async def _assemble(models_dir: Path, models: Sequence[str]) -> dict[str, Path]:
    dirs: dict[str, Path] = {}
    for key in models:
        started = time.perf_counter()
        dirs[key] = await ensure_model_dir(models_dir, model_choice(key))
        print(f"assembled {key:24} in {time.perf_counter() - started:5.1f}s")
    return dirs


def _parent(args: argparse.Namespace) -> None:
    threads_options: Sequence[int] = args.threads_options
    with tempfile.TemporaryDirectory() as scratch:
        models_dir = Path(args.models_dir) if args.models_dir else Path(scratch) / "models"
        dirs = asyncio.run(_assemble(models_dir, args.models))
        runs: dict[tuple[str, int], list[Run]] = {}
        vectors: dict[str, np.ndarray] = {}
        for _ in range(args.rounds):
            for key in args.models:
                for threads in threads_options:
                    out = Path(scratch) / f"{key}-{threads}.npy"
                    runs.setdefault((key, threads), []).append(
                        _run_child(dirs[key], threads, args, out)
                    )
                    vectors[key] = np.load(out)
    _report(runs, vectors, threads_options, args.models)


def _report(
    runs: dict[tuple[str, int], list[Run]],
    vectors: dict[str, np.ndarray],
    threads_options: Sequence[int],
    models: Sequence[str],
) -> None:
    print(
        f"\n{'model':22} {'thr':>3} {'load s':>7} {'passages/s':>11} {'queries/s':>10} "
        f"{'peak RSS MB':>12} {'cos vs fp32 mean/min':>22}"
    )
    for (key, threads), measured in runs.items():
        same = REFERENCE in vectors and key.startswith("minilm")
        mean, low = _cosines(vectors[key], vectors[REFERENCE]) if same else (math.nan, math.nan)
        print(
            f"{key:22} {threads:3d} {statistics.median(r.load_s for r in measured):7.2f} "
            f"{statistics.median(r.passages_per_s for r in measured):11.1f} "
            f"{statistics.median(r.queries_per_s for r in measured):10.1f} "
            f"{max(r.peak_rss_mb for r in measured):12.0f} {mean:15.4f} / {low:.4f}"
        )
    base = models[0]
    print(f"\npassages/s ratios against {base} (same thread count):")
    for threads in threads_options:
        reference = _rate(runs[(base, threads)])
        ratios = ", ".join(
            f"{key} {_rate(runs[(key, threads)]) / reference:.2f}x" for key in models[1:]
        )
        print(f"  threads={threads}: {ratios}")
    if len(threads_options) > 1:
        print("threads ratio (last / first option), passages/s:")
        for key in models:
            first = _rate(runs[(key, threads_options[0])])
            last = _rate(runs[(key, threads_options[-1])])
            print(f"  {key}: {last / first:.2f}x")


def _rate(measured: Sequence[Run]) -> float:
    return statistics.median(r.passages_per_s for r in measured)


def main() -> None:
    """Parse arguments; run as the parent (default) or as one measuring child."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    parser.add_argument("--passages", type=int, default=128)
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads-options", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--models-dir", default=None, help="reuse assembled models here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--vectors-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(_child(args))
    else:
        _parent(args)


if __name__ == "__main__":
    main()
