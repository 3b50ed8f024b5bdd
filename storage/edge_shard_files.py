"""A qdrant-edge shard's directory while its index is built elsewhere: the child process that
builds a copy's index, copying a flushed shard, catching the built copy up with the writes
made meanwhile, swapping it in for the live one, and repairing a swap a crash cut short
(`storage.edge_store` explains the whole build)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from storage.edge_requests import spec_to_json
from storage.vectors import CollectionSpec, VectorStoreError

__all__ = [
    "BUILD_PREFIX",
    "catch_up",
    "copy_shard",
    "flush_and_close",
    "recover",
    "run_builder",
    "swap_directories",
    "timed",
]

logger = logging.getLogger(__name__)

BUILD_PREFIX = ".build-"  # a copy whose index a child process builds
_OLD_PREFIX = ".old-"  # the live shard set aside during a swap


def flush_and_close(engine: qe.EdgeShard) -> None:
    engine.flush()
    engine.close()


@contextlib.asynccontextmanager
async def timed(what: str) -> AsyncIterator[None]:
    started = asyncio.get_running_loop().time()
    yield
    logger.info("%s took %.1fs", what, asyncio.get_running_loop().time() - started)


async def run_builder(copy: Path, spec: CollectionSpec) -> None:
    """Build the copy's index in a child process; the loop keeps running meanwhile."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "storage.edge_index_build",
        str(copy),
        spec_to_json(spec),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await child.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        await child.wait()
        raise
    if child.returncode != 0:
        detail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise VectorStoreError(
            f"the index build of {spec.name!r} exited with {child.returncode}: {detail[0]}"
        )
    logger.debug("index build of %s: %s", spec.name, out.decode().strip())


def copy_shard(live: Path, copy: Path) -> None:
    """Copy a flushed shard directory (writes are held meanwhile)."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(live, copy)


def catch_up(copy: Path, config: qe.EdgeConfig, journal: list[Any]) -> None:
    """Apply the writes made during the build to the built copy, flush and close it."""
    engine = qe.EdgeShard.load(str(copy), config)
    try:
        for update in journal:
            engine.update(update)
        engine.flush()
    finally:
        engine.close()


def swap_directories(
    live_engine: qe.EdgeShard, live: Path, copy: Path, config: qe.EdgeConfig
) -> qe.EdgeShard:
    """Close the live shard, put the copy in its place and open it. On failure the live
    shard is put back and reopened, so the store keeps every point."""
    old = live.parent / f"{_OLD_PREFIX}{live.name}"
    flush_and_close(live_engine)
    shutil.rmtree(old, ignore_errors=True)
    live.rename(old)
    try:
        copy.rename(live)
        engine = qe.EdgeShard.load(str(live), config)
    except Exception:
        logger.exception("the indexed copy of %s could not be opened; keeping the old one", live)
        shutil.rmtree(live, ignore_errors=True)
        old.rename(live)
        return qe.EdgeShard.load(str(live), config)
    shutil.rmtree(old, ignore_errors=True)
    return engine


def recover(root: Path, name: str) -> None:
    """Finish or undo a swap a crash interrupted, and drop a build's leftover copy.

    The copy is renamed into place only once it holds every write, so: no live directory
    but a set-aside one means the swap stopped half-way (put the old one back); both
    means it completed (drop the old one)."""
    live, old = root / name, root / f"{_OLD_PREFIX}{name}"
    if old.exists():
        if live.exists():
            shutil.rmtree(old)
        else:
            old.rename(live)
    shutil.rmtree(root / f"{BUILD_PREFIX}{name}", ignore_errors=True)
