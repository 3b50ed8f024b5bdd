"""One open qdrant-edge shard and what this process knows about it: its engine calls run in a
thread and wait out a swap, its writes are one at a time (and journalled while an index
build runs), and past its collection's threshold its HNSW index is built on a copy in a
child process and swapped in (`storage.edge_store` explains why; the files on disk are
`storage.edge_shard_files`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe

from storage.edge_requests import edge_config
from storage.edge_shard_files import (
    BUILD_PREFIX,
    catch_up,
    copy_shard,
    flush_and_close,
    run_builder,
    swap_directories,
    timed,
)
from storage.vectors import CollectionSpec, VectorStoreError

__all__ = ["OpenShard", "call"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


async def call(collection: str, operation: str, fn: Callable[[], T]) -> T:
    """Run one engine call in a thread; its failure becomes a `VectorStoreError`."""
    try:
        return await asyncio.to_thread(fn)
    except Exception as exc:
        raise VectorStoreError(f"{operation} on collection {collection!r} failed: {exc}") from exc


def _optimize_every(spec: CollectionSpec) -> int:
    return max(spec.hnsw_threshold // 10, 1)


@dataclass(slots=True)
class OpenShard:
    """An open shard under `root`, the folder its builds copy it into."""

    spec: CollectionSpec
    engine: qe.EdgeShard
    path: Path
    root: Path
    writes_since_optimize: int = 0
    #: Held by every write, and by a build while it copies the shard and swaps it in.
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Cleared while a swap replaces `engine`; every engine call waits for it.
    available: asyncio.Event = field(default_factory=asyncio.Event)
    #: Set when no engine call is running.
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    in_flight: int = 0
    #: Writes since the copy a running build works on (None: no build running).
    journal: list[Any] | None = None
    build: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self.available.set()
        self.idle.set()

    async def use(self, operation: str, fn: Callable[[qe.EdgeShard], T]) -> T:
        """Run one engine call in a thread, never while a swap replaces the engine."""
        await self.available.wait()
        self.in_flight += 1
        self.idle.clear()
        try:
            return await call(self.spec.name, operation, partial(fn, self.engine))
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self.idle.set()

    async def write(self, operation: str, update: Any) -> None:
        """Apply one update; while a build runs, also keep it for the built copy."""
        async with self.write_lock:
            await self.use(operation, lambda engine: engine.update(update))
            if self.journal is not None:
                self.journal.append(update)

    def written(self, points: int) -> None:
        """Count written points; enough of them start a background index build."""
        self.writes_since_optimize += points
        self.maybe_optimize()

    def maybe_optimize(self, *, unindexed: bool = False) -> None:
        """Start a background index build when enough was written since the last one
        (`unindexed`: at open, whatever an earlier run left unindexed)."""
        if unindexed:
            self.writes_since_optimize = _optimize_every(self.spec)
        if self.build is not None or self.writes_since_optimize < _optimize_every(self.spec):
            return
        self.writes_since_optimize = 0
        self.build = asyncio.create_task(self._build_index(), name=f"index-build-{self.spec.name}")
        self.build.add_done_callback(self._build_done)

    async def stop_build(self) -> None:
        """Cancel a running build (the live shard has every write)."""
        if self.build is not None:
            self.build.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.build

    async def close(self) -> None:
        """Flush and close the engine."""
        await call(self.spec.name, "close", partial(flush_and_close, self.engine))

    def _build_done(self, task: asyncio.Task[None]) -> None:
        self.build = None
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            # The live shard has every write; the next writes start another build.
            logger.warning("index build of edge collection %s failed: %s", self.spec.name, error)

    async def _build_index(self) -> None:
        name = self.spec.name
        points = await self.use("count", lambda engine: engine.count(qe.CountRequest()))
        if points < self.spec.hnsw_threshold:
            return
        copy = self.root / f"{BUILD_PREFIX}{name}"
        async with self.write_lock:
            await self.use("flush", lambda engine: engine.flush())
            await asyncio.to_thread(copy_shard, self.path, copy)
            self.journal = []
        try:
            logger.info("building the index of edge collection %s (%d points)", name, points)
            async with timed(f"index build of {name}"):
                await run_builder(copy, self.spec)
            swap = asyncio.ensure_future(self._swap(copy))
            try:
                await asyncio.shield(swap)
            except asyncio.CancelledError:
                await swap  # a swap half-done would leave a closed engine: finish it first
                raise
        except BaseException:
            self.journal = None
            await asyncio.shield(asyncio.to_thread(shutil.rmtree, copy, True))
            raise

    async def _swap(self, copy: Path) -> None:
        """Bring the built copy up to date and put it in the live shard's place."""
        config = edge_config(self.spec)
        name = self.spec.name
        async with self.write_lock:
            journal, self.journal = self.journal or [], None
            await call(name, "catch up", partial(catch_up, copy, config, journal))
            self.available.clear()
            try:
                await self.idle.wait()
                self.engine = await call(
                    name, "swap", partial(swap_directories, self.engine, self.path, copy, config)
                )
            finally:
                self.available.set()
        logger.info(
            "swapped in the indexed edge collection %s (%d writes caught up)", name, len(journal)
        )
