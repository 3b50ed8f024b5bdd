"""The longest event-loop stall while the embedded engine builds an HNSW index.

One run, side by side on the same random points (`--points`, 384-d, the threshold at
half of them):

- before: the old way, `optimize()` on the live shard in a worker thread
  (`asyncio.to_thread`); qdrant-edge holds the GIL for the whole build, so the loop stops;
- after: `EdgeVectorStore` as Lore runs it: the build happens in a child process on a
  copy of the shard, then the copy is swapped in.

Meanwhile a heartbeat task sleeps 10 ms at a time and records how late it wakes (the
longest stall), and a client searches the collection in a loop (searches answered during
the build, and the slowest). Printed: build wall time, longest stall, searches answered,
slowest search, and the stall ratio after/before.

    .venv/bin/python -m benchmarks.index_freeze [--points 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import qdrant_edge as qe

from storage.edge_requests import edge_config
from storage.edge_store import EdgeVectorStore
from storage.vectors import DENSE, CollectionSpec, VectorPoint

DIM = 384
TICK = 0.01
BATCH = 1000


@dataclass
class Stalls:
    longest: float = 0.0
    searches: int = 0
    slowest_search: float = 0.0


async def _heartbeat(stalls: Stalls, stop: asyncio.Event) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(TICK)
        stalls.longest = max(stalls.longest, time.perf_counter() - before - TICK)


async def _searcher(
    search: Callable[[list[float]], Awaitable[object]], stalls: Stalls, stop: asyncio.Event
) -> None:
    rng = np.random.default_rng(7)
    while not stop.is_set():
        query = rng.normal(size=DIM).tolist()
        started = time.perf_counter()
        await search(query)
        stalls.slowest_search = max(stalls.slowest_search, time.perf_counter() - started)
        stalls.searches += 1
        await asyncio.sleep(0.05)


async def _watch(
    build: Awaitable[None], search: Callable[[list[float]], Awaitable[object]]
) -> tuple[float, Stalls]:
    stalls, stop = Stalls(), asyncio.Event()
    watchers = [
        asyncio.create_task(_heartbeat(stalls, stop)),
        asyncio.create_task(_searcher(search, stalls, stop)),
    ]
    await asyncio.sleep(0.1)  # the heartbeat is asleep when the build starts
    started = time.perf_counter()
    await build
    elapsed = time.perf_counter() - started
    stop.set()
    await asyncio.gather(*watchers)
    return elapsed, stalls


def _vectors(points: int) -> np.ndarray:
    return np.random.default_rng(3).normal(size=(points, DIM)).astype(np.float32)


async def before(root: Path, vectors: np.ndarray, spec: CollectionSpec) -> tuple[float, Stalls]:
    path = root / "before"
    path.mkdir()
    engine = qe.EdgeShard.load(str(path), edge_config(spec))
    for start in range(0, len(vectors), BATCH):
        points = [
            qe.Point(str(uuid.uuid4()), {DENSE: vector.tolist()}, {})
            for vector in vectors[start : start + BATCH]
        ]
        engine.update(qe.UpdateOperation.upsert_points(points))

    async def search(query: list[float]) -> object:
        request = qe.QueryRequest(limit=10, query=qe.Query.Nearest(query, using=DENSE))
        return await asyncio.to_thread(engine.query, request)

    try:
        return await _watch(asyncio.to_thread(engine.optimize), search)
    finally:
        engine.close()


async def after(root: Path, vectors: np.ndarray, spec: CollectionSpec) -> tuple[float, Stalls]:
    async with EdgeVectorStore(root / "after") as store:
        await store.ensure_collection(replace(spec, hnsw_threshold=10 * len(vectors)))
        for start in range(0, len(vectors), BATCH):
            points = [
                VectorPoint(str(uuid.uuid4()), vector.tolist())
                for vector in vectors[start : start + BATCH]
            ]
            await store.upsert(spec.name, points)
    store = EdgeVectorStore(root / "after")
    opened = asyncio.Event()

    async def build() -> None:
        await store.ensure_collection(spec)  # past the threshold now: the build starts
        opened.set()
        await store.wait_for_index_builds()

    async def search(query: list[float]) -> object:
        await opened.wait()
        return await store.search(spec.name, query, limit=10)

    try:
        return await _watch(build(), search)
    finally:
        await store.close()


def _row(label: str, elapsed: float, stalls: Stalls) -> str:
    return (
        f"{label:<8} build {elapsed:7.2f} s   longest loop stall {stalls.longest:7.3f} s   "
        f"searches answered {stalls.searches:5d}   slowest search {stalls.slowest_search:7.3f} s"
    )


async def run(points: int) -> None:
    vectors = _vectors(points)
    spec = CollectionSpec(name="docs", dense_size=DIM, hnsw_threshold=max(points // 2, 1))
    with tempfile.TemporaryDirectory(prefix="lore-index-freeze-") as tmp:
        root = Path(tmp)
        old = await before(root, vectors, spec)
        print(_row("before", *old), flush=True)
        new = await after(root, vectors, spec)
        print(_row("after", *new), flush=True)
    ratio = new[1].longest / max(old[1].longest, 1e-9)
    print(
        f"{points} points: longest stall {old[1].longest:.2f} s -> {new[1].longest:.2f} s "
        f"({ratio:.3f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=20_000)
    args = parser.parse_args()
    asyncio.run(run(args.points))


if __name__ == "__main__":
    main()
