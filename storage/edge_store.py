"""The vector store on Qdrant's engine in-process (qdrant-edge): one shard per collection.

Each collection lives in its own `EdgeShard` under `root/<collection>/`. What we
found out about qdrant-edge-py 0.9.0 and rely on here:

* Every engine call holds the GIL for its whole duration (the bindings never
  release it), so calls from several threads run one after the other; the Rust
  shard itself guards its segments with locks, so no lock of ours is needed.
  `asyncio.to_thread` still keeps the event loop free between engine calls.
* Optimizers never run in the background: a plain (brute-force, exact) segment
  only becomes an HNSW segment when `optimize()` is called and the segment's
  dense storage exceeds `indexing_threshold` (in KB). We set that threshold from
  `spec.hnsw_threshold` and build only once a collection is past it, so small
  collections are always searched exactly and fresh points are visible at once.
* `optimize()` holds the GIL for the whole build (32.7 s at 20k points), so it never
  runs in this process. A build runs in the background: the flushed shard directory
  is copied (writes wait for the copy), a child process (`storage.edge_index_build`)
  builds the copy's index while the live shard keeps answering (exact search) and
  taking writes, which are also kept in a journal. Then, writes held again, the copy
  gets the journal, the live shard is closed, the directories are swapped and the
  copy is opened in its place; searches wait only for that swap. A failed build is
  discarded (the live shard has every write) and retried after more writes. A crash
  mid-swap is repaired at the next open (`recover`).
* A shard directory is locked through its WAL; a second opener (another process,
  or this one) gets "Can't init WAL: Kind(WouldBlock)", which becomes
  `StoreLockedError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import shutil
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import qdrant_edge as qe

from storage.edge_requests import (
    edge_config,
    point_id,
    query_request,
    scored,
    to_edge_point,
    to_edge_sparse,
    to_filter,
    wanted_indexes,
)
from storage.edge_shard import OpenShard
from storage.edge_shard_files import recover
from storage.ids import PointId
from storage.vectors import (
    DENSE,
    SPARSE,
    CollectionSpec,
    Condition,
    ScoredPoint,
    SparseVector,
    VectorPoint,
    VectorStoreError,
    require_tenant_match,
)

__all__ = ["EdgeVectorStore", "StoreLockedError"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SCROLL_PAGE = 1_000
_LOCKED_MARKERS = ("WouldBlock", "Can't init WAL")
_SIZE_MISMATCH_MARKER = "expected vector size"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


class StoreLockedError(VectorStoreError):
    """Another process (or another store in this one) holds the shard directory open."""


class EdgeVectorStore:
    """`VectorStore` on qdrant-edge shards under `root`; use as an async context manager."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._shards: dict[str, OpenShard] = {}
        self._open_lock = asyncio.Lock()

    async def __aenter__(self) -> EdgeVectorStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def ensure_collection(self, spec: CollectionSpec) -> None:
        """Open or create the shard, then create every payload index the spec names."""
        if not _SAFE_NAME.fullmatch(spec.name):
            raise VectorStoreError(f"collection name {spec.name!r} is not a safe directory name")
        async with self._open_lock:
            shard = self._shards.get(spec.name)
            if shard is None:
                shard = await self._open(spec)
                self._shards[spec.name] = shard
            elif shard.spec.dense_size != spec.dense_size:
                raise _model_changed(spec.name, spec.dense_size)
            shard.spec = spec
            await self._reconcile_indexes(shard)

    async def drop_collection(self, name: str) -> None:
        """Close the shard if open and delete its directory (and a crashed swap's leftovers)."""
        if not _SAFE_NAME.fullmatch(name):
            raise VectorStoreError(f"collection name {name!r} is not a safe directory name")
        async with self._open_lock:
            shard = self._shards.pop(name, None)
            if shard is not None:
                await shard.stop_build()
                await shard.close()

            def remove() -> None:
                recover(self._root, name)
                shutil.rmtree(self._root / name, ignore_errors=True)

            await asyncio.to_thread(remove)
        logger.info("dropped edge collection %s", name)

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points; past the collection's threshold an HNSW index is built
        in the background (`wait_for_index_builds` awaits it)."""
        if not points:
            return
        shard = self._shard(collection)
        operation = qe.UpdateOperation.upsert_points([to_edge_point(p) for p in points])
        await shard.write("upsert", operation)
        shard.written(len(points))

    async def delete_points(self, collection: str, ids: Sequence[PointId]) -> None:
        """Delete points by id; unknown ids are ignored."""
        if not ids:
            return
        shard = self._shard(collection)
        await shard.write("delete_points", qe.UpdateOperation.delete_points(list(ids)))

    async def delete_where(self, collection: str, conditions: Sequence[Condition]) -> None:
        """Delete every point matching all conditions."""
        if not conditions:
            raise VectorStoreError(f"delete_where on {collection!r} needs at least one condition")
        shard = self._shard(collection)
        operation = qe.UpdateOperation.delete_points_by_filter(to_filter(conditions))
        await shard.write("delete_where", operation)

    async def wait_for_index_builds(self) -> None:
        """Return once no index build is running (builds fail quietly: see the log)."""
        while builds := [s.build for s in self._shards.values() if s.build is not None]:
            await asyncio.wait(builds)

    async def search(
        self,
        collection: str,
        dense: Sequence[float],
        *,
        sparse: SparseVector | None = None,
        limit: int = 10,
        conditions: Sequence[Condition] = (),
    ) -> list[ScoredPoint]:
        """Dense search, or dense + sparse prefetches fused with RRF when `sparse` is given."""
        shard = self._shard(collection)
        require_tenant_match(shard.spec, conditions)
        request = query_request(dense, sparse, limit, conditions)
        hits = await shard.use("search", lambda engine: engine.query(request))
        return [scored(hit, with_dense=False) for hit in hits]

    async def search_lexical(
        self,
        collection: str,
        sparse: SparseVector,
        *,
        limit: int = 10,
        conditions: Sequence[Condition] = (),
        with_dense: bool = False,
    ) -> list[ScoredPoint]:
        """Sparse search alone, best BM25 score (with IDF) first."""
        shard = self._shard(collection)
        require_tenant_match(shard.spec, conditions)
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(to_edge_sparse(sparse), using=SPARSE),
            filter=to_filter(conditions) if conditions else None,
            with_payload=True,
            with_vector=[DENSE] if with_dense else None,
        )
        hits = await shard.use("search_lexical", lambda engine: engine.query(request))
        return [scored(hit, with_dense=with_dense) for hit in hits]

    async def count(self, collection: str, conditions: Sequence[Condition] = ()) -> int:
        """Exact number of points matching all conditions."""
        shard = self._shard(collection)
        request = qe.CountRequest(exact=True, filter=to_filter(conditions) if conditions else None)
        return await shard.use("count", lambda engine: engine.count(request))

    async def point_ids(self, collection: str) -> set[PointId]:
        """Every point id in the collection, scrolled page by page."""
        shard = self._shard(collection)
        ids: set[PointId] = set()
        offset: Any = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=_SCROLL_PAGE, with_payload=False, with_vector=False
            )
            records, offset = await shard.use("point_ids", partial(_scroll, request))
            ids.update(point_id(record.id) for record in records)
            if offset is None:
                return ids

    async def snapshot(self, target: Path) -> bool:
        """Flush every open shard and copy its directory to `target/<collection>`; writes
        wait meanwhile (each shard's write lock, which a swap also holds), so the copy opens
        (`ensure_collection` on `target`) with every point written before and none after."""
        async with self._open_lock, contextlib.AsyncExitStack() as held:
            shards = sorted(self._shards.items())
            for _, shard in shards:
                await held.enter_async_context(shard.write_lock)
            for name, shard in shards:
                await shard.use("flush", lambda engine: engine.flush())
                await asyncio.to_thread(
                    shutil.copytree, shard.path, target / name, dirs_exist_ok=True
                )
        return True

    async def close(self) -> None:
        """Flush and close every shard; the store can be reopened with `ensure_collection`."""
        async with self._open_lock:
            shards, self._shards = self._shards, {}
            for shard in shards.values():
                await shard.stop_build()
            failures: list[VectorStoreError] = []
            for shard in shards.values():
                try:
                    await shard.close()
                except VectorStoreError as exc:
                    failures.append(exc)
            if failures:
                raise failures[0]

    async def _open(self, spec: CollectionSpec) -> OpenShard:
        path = self._root / spec.name
        config = edge_config(spec)

        def load() -> qe.EdgeShard:
            recover(self._root, spec.name)
            path.mkdir(parents=True, exist_ok=True)
            return qe.EdgeShard.load(str(path), config)

        try:
            engine = await asyncio.to_thread(load)
        except Exception as exc:
            message = str(exc)
            if any(marker in message for marker in _LOCKED_MARKERS):
                raise StoreLockedError(
                    f"vector store at {path} is locked: another Lore process holds it open;"
                    " stop that process (or point this one at another data directory)"
                ) from exc
            if _SIZE_MISMATCH_MARKER in message:
                raise _model_changed(spec.name, spec.dense_size) from exc
            raise VectorStoreError(f"opening collection {spec.name!r} at {path} failed") from exc
        logger.info("opened edge collection %s at %s", spec.name, path)
        shard = OpenShard(spec=spec, engine=engine, path=path, root=self._root)
        # Points left unindexed by an earlier run (e.g. a crash before a build finished).
        shard.maybe_optimize(unindexed=True)
        return shard

    async def _reconcile_indexes(self, shard: OpenShard) -> None:
        name = shard.spec.name
        info = await shard.use("ensure_collection", lambda engine: engine.info())
        existing = set(info.payload_schema)
        for field_name, params in wanted_indexes(shard.spec):
            if field_name in existing:
                continue
            operation = qe.UpdateOperation.create_field_index(field_name, params)
            await shard.write("create_field_index", operation)
            logger.info("created payload index %s.%s", name, field_name)

    def _shard(self, collection: str) -> OpenShard:
        shard = self._shards.get(collection)
        if shard is None:
            raise VectorStoreError(
                f"collection {collection!r} is not open: call ensure_collection first"
            )
        return shard


def _model_changed(collection: str, dense_size: int) -> VectorStoreError:
    return VectorStoreError(
        f"collection {collection!r} holds vectors of another size than {dense_size}: the"
        " embedding model changed, so the collection must be rebuilt (re-index its documents)"
    )


def _scroll(request: qe.ScrollRequest, engine: qe.EdgeShard) -> tuple[Any, Any]:
    return engine.scroll(request)
