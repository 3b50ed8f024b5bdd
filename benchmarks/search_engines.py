"""Benchmark: search latency of the edge store at 10k and 100k points vs qdrant-client local mode.

Run with `.venv/bin/python -m benchmarks.search_engines`. Inserts random 384-d
points owned by 1,000 users, then times unfiltered and user-filtered searches
(p50/p95) side by side in one run and prints ratios against edge at 10k.
Numbers are only comparable within one run on one machine.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from qdrant_client import AsyncQdrantClient

from storage.edge_store import EdgeVectorStore
from storage.ids import PointId
from storage.server_store import ServerVectorStore
from storage.vectors import CollectionSpec, FieldMatch, VectorPoint, VectorStore

__all__ = ["main"]

DIM = 384
USERS = 1_000
QUERIES = 200
BATCH = 2_000
SEED = 42


async def _fill(store: VectorStore, spec: CollectionSpec, total: int) -> float:
    rng = np.random.default_rng(SEED)
    started = time.perf_counter()
    for start in range(0, total, BATCH):
        vectors = rng.normal(size=(BATCH, DIM)).astype(np.float32)
        owners = rng.integers(0, USERS, BATCH)
        await store.upsert(
            spec.name,
            [
                VectorPoint(
                    PointId(str(uuid.UUID(int=start + k + 1))),
                    vectors[k].tolist(),
                    payload={"user_id": f"u{owners[k]}"},
                )
                for k in range(BATCH)
            ],
        )
    return time.perf_counter() - started


async def _latencies(store: VectorStore, name: str, *, filtered: bool) -> tuple[float, float]:
    rng = np.random.default_rng(SEED + 1)
    timings: list[float] = []
    for _ in range(QUERIES):
        query = rng.normal(size=DIM).tolist()
        conditions = [FieldMatch("user_id", f"u{rng.integers(0, USERS)}")] if filtered else []
        started = time.perf_counter()
        await store.search(name, query, limit=10, conditions=conditions)
        timings.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(timings, n=100)
    return cuts[49], cuts[94]


async def _measure(label: str, store: VectorStore, total: int) -> dict[str, tuple[float, float]]:
    spec = CollectionSpec(name="bench", dense_size=DIM, keyword_fields=("user_id",))
    await store.ensure_collection(spec)
    seconds = await _fill(store, spec, total)
    print(f"{label}: inserted {total:,} points in {seconds:.1f} s")
    return {
        "unfiltered": await _latencies(store, spec.name, filtered=False),
        "filtered": await _latencies(store, spec.name, filtered=True),
    }


async def main() -> None:
    """Run every configuration and print p50/p95 in ms plus ratios to edge at 10k."""
    results: dict[str, dict[str, tuple[float, float]]] = {}
    for total in (10_000, 100_000):
        with tempfile.TemporaryDirectory() as root:
            async with EdgeVectorStore(Path(root)) as store:
                results[f"edge {total // 1000}k"] = await _measure("edge", store, total)
    client = AsyncQdrantClient(location=":memory:")
    try:
        async with ServerVectorStore(client) as local:
            results["local 10k"] = await _measure("local mode", local, 10_000)
    finally:
        await client.close()

    base = results["edge 10k"]
    print(f"\n{'engine':<12}{'query':<12}{'p50 ms':>9}{'p95 ms':>9}{'p50 x':>8}{'p95 x':>8}")
    for label, by_kind in results.items():
        for kind, (p50, p95) in by_kind.items():
            ratio50, ratio95 = p50 / base[kind][0], p95 / base[kind][1]
            print(f"{label:<12}{kind:<12}{p50:>9.2f}{p95:>9.2f}{ratio50:>8.1f}{ratio95:>8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
