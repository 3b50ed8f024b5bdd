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
  `spec.hnsw_threshold` and call `optimize()` only once a collection is past it,
  so small collections are always searched exactly and fresh points are visible
  at once.
* A shard directory is locked through its WAL; a second opener (another process,
  or this one) gets "Can't init WAL: Kind(WouldBlock)", which becomes
  `StoreLockedError`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar, cast

import qdrant_edge as qe

from storage.ids import PointId
from storage.vectors import (
    DENSE,
    SPARSE,
    CollectionSpec,
    Condition,
    FieldMatch,
    IntRange,
    PayloadValue,
    ScoredPoint,
    SparseVector,
    TenantFilterMissingError,
    VectorPoint,
    VectorStoreError,
)

__all__ = ["EdgeVectorStore", "StoreLockedError"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

RRF_K = 60
_SCROLL_PAGE = 1_000
_FULL_SCAN_THRESHOLD_KB = 10_000
_LOCKED_MARKERS = ("WouldBlock", "Can't init WAL")
_SIZE_MISMATCH_MARKER = "expected vector size"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


class StoreLockedError(VectorStoreError):
    """Another process (or another store in this one) holds the shard directory open."""


@dataclass(slots=True)
class _Shard:
    """An open shard and what this process knows about it."""

    spec: CollectionSpec
    engine: qe.EdgeShard
    writes_since_optimize: int = 0


class EdgeVectorStore:
    """`VectorStore` on qdrant-edge shards under `root`; use as an async context manager."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._shards: dict[str, _Shard] = {}
        self._open_lock = asyncio.Lock()
        # Writes and snapshots exclude each other (a copy never holds half a write).
        self._write_lock = asyncio.Lock()

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

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points; builds HNSW once the collection passes its threshold."""
        if not points:
            return
        shard = self._shard(collection)
        operation = qe.UpdateOperation.upsert_points([_to_edge_point(p) for p in points])
        async with self._write_lock:
            await self._call(collection, "upsert", lambda: shard.engine.update(operation))
            shard.writes_since_optimize += len(points)
            await self._maybe_optimize(shard)

    async def delete_points(self, collection: str, ids: Sequence[PointId]) -> None:
        """Delete points by id; unknown ids are ignored."""
        if not ids:
            return
        shard = self._shard(collection)
        operation = qe.UpdateOperation.delete_points(list(ids))
        async with self._write_lock:
            await self._call(collection, "delete_points", lambda: shard.engine.update(operation))

    async def delete_where(self, collection: str, conditions: Sequence[Condition]) -> None:
        """Delete every point matching all conditions."""
        if not conditions:
            raise VectorStoreError(f"delete_where on {collection!r} needs at least one condition")
        shard = self._shard(collection)
        operation = qe.UpdateOperation.delete_points_by_filter(_to_filter(conditions))
        async with self._write_lock:
            await self._call(collection, "delete_where", lambda: shard.engine.update(operation))

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
        _require_tenant_match(shard.spec, conditions)
        request = _query_request(dense, sparse, limit, conditions)
        hits = await self._call(collection, "search", lambda: shard.engine.query(request))
        return [_scored(hit, with_dense=False) for hit in hits]

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
        _require_tenant_match(shard.spec, conditions)
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(_to_edge_sparse(sparse), using=SPARSE),
            filter=_to_filter(conditions) if conditions else None,
            with_payload=True,
            with_vector=[DENSE] if with_dense else None,
        )
        hits = await self._call(collection, "search_lexical", lambda: shard.engine.query(request))
        return [_scored(hit, with_dense=with_dense) for hit in hits]

    async def count(self, collection: str, conditions: Sequence[Condition] = ()) -> int:
        """Exact number of points matching all conditions."""
        shard = self._shard(collection)
        request = qe.CountRequest(exact=True, filter=_to_filter(conditions) if conditions else None)
        return await self._call(collection, "count", lambda: shard.engine.count(request))

    async def point_ids(self, collection: str) -> set[PointId]:
        """Every point id in the collection, scrolled page by page."""
        shard = self._shard(collection)
        ids: set[PointId] = set()
        offset: Any = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=_SCROLL_PAGE, with_payload=False, with_vector=False
            )
            records, offset = await self._call(
                collection, "point_ids", partial(shard.engine.scroll, request)
            )
            ids.update(_point_id(record.id) for record in records)
            if offset is None:
                return ids

    async def snapshot(self, target: Path) -> bool:
        """Flush every open shard and copy its directory to `target/<collection>`; writes
        wait meanwhile, so the copy opens (`ensure_collection` on `target`) with every point
        written before and none after."""
        async with self._open_lock, self._write_lock:
            for name, shard in self._shards.items():
                await self._call(name, "flush", shard.engine.flush)
                source, copy = self._root / name, target / name
                await asyncio.to_thread(shutil.copytree, source, copy, dirs_exist_ok=True)
        return True

    async def close(self) -> None:
        """Flush and close every shard; the store can be reopened with `ensure_collection`."""
        async with self._open_lock:
            shards, self._shards = self._shards, {}
            failures: list[VectorStoreError] = []
            for name, shard in shards.items():
                try:
                    await self._call(name, "close", partial(_flush_and_close, shard.engine))
                except VectorStoreError as exc:
                    failures.append(exc)
            if failures:
                raise failures[0]

    async def _open(self, spec: CollectionSpec) -> _Shard:
        path = self._root / spec.name
        config = _edge_config(spec)

        def load() -> qe.EdgeShard:
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
        shard = _Shard(spec=spec, engine=engine)
        # Points left unindexed by an earlier run (e.g. a crash before optimize).
        shard.writes_since_optimize = _optimize_every(spec)
        await self._maybe_optimize(shard)
        return shard

    async def _reconcile_indexes(self, shard: _Shard) -> None:
        name = shard.spec.name
        info = await self._call(name, "ensure_collection", shard.engine.info)
        existing = set(info.payload_schema)
        for field_name, params in _wanted_indexes(shard.spec):
            if field_name in existing:
                continue
            operation = qe.UpdateOperation.create_field_index(field_name, params)
            await self._call(name, "create_field_index", partial(shard.engine.update, operation))
            logger.info("created payload index %s.%s", name, field_name)

    async def _maybe_optimize(self, shard: _Shard) -> None:
        if shard.writes_since_optimize < _optimize_every(shard.spec):
            return
        name = shard.spec.name
        points = await self._call(name, "count", lambda: shard.engine.count(qe.CountRequest()))
        if points < shard.spec.hnsw_threshold:
            return
        shard.writes_since_optimize = 0
        logger.info("optimizing edge collection %s (%d points)", name, points)
        await self._call(name, "optimize", shard.engine.optimize)

    def _shard(self, collection: str) -> _Shard:
        shard = self._shards.get(collection)
        if shard is None:
            raise VectorStoreError(
                f"collection {collection!r} is not open: call ensure_collection first"
            )
        return shard

    async def _call(self, collection: str, operation: str, fn: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(fn)
        except Exception as exc:
            raise VectorStoreError(
                f"{operation} on collection {collection!r} failed: {exc}"
            ) from exc


def _require_tenant_match(spec: CollectionSpec, conditions: Sequence[Condition]) -> None:
    tenant = spec.tenant_field
    if tenant is None:
        return
    if not any(isinstance(c, FieldMatch) and c.field == tenant for c in conditions):
        raise TenantFilterMissingError(
            f"search on {spec.name!r} must match on its tenant field {tenant!r}"
        )


def _model_changed(collection: str, dense_size: int) -> VectorStoreError:
    return VectorStoreError(
        f"collection {collection!r} holds vectors of another size than {dense_size}: the"
        " embedding model changed, so the collection must be rebuilt (re-index its documents)"
    )


def _optimize_every(spec: CollectionSpec) -> int:
    return max(spec.hnsw_threshold // 10, 1)


def _edge_config(spec: CollectionSpec) -> qe.EdgeConfig:
    # Dense storage is what crosses the threshold first: float32 per dimension.
    threshold_kb = max(spec.hnsw_threshold * spec.dense_size * 4 // 1024, 1)
    tenant = spec.tenant_field is not None
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=spec.dense_size, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        # Tenant collections are always searched within one tenant: build per-tenant
        # graphs (payload_m) instead of one global graph (m=0), as Qdrant recommends.
        hnsw_config=qe.HnswIndexConfig(
            m=0 if tenant else 16,
            ef_construct=100,
            full_scan_threshold=_FULL_SCAN_THRESHOLD_KB,
            payload_m=16 if tenant else None,
        ),
        optimizers=qe.EdgeOptimizersConfig(
            indexing_threshold=threshold_kb, prevent_unoptimized=False
        ),
    )


def _wanted_indexes(spec: CollectionSpec) -> list[tuple[str, Any]]:
    wanted: list[tuple[str, Any]] = []
    if spec.tenant_field is not None:
        wanted.append((spec.tenant_field, qe.KeywordIndexParams(is_tenant=True)))
    wanted.extend((f, qe.KeywordIndexParams()) for f in spec.keyword_fields)
    wanted.extend((f, qe.IntegerIndexParams(lookup=True, range=True)) for f in spec.integer_fields)
    return wanted


def _to_edge_point(point: VectorPoint) -> qe.Point:
    vectors: dict[str, Any] = {DENSE: list(point.dense)}
    if point.sparse is not None:
        vectors[SPARSE] = _to_edge_sparse(point.sparse)
    return qe.Point(point.id, vectors, dict(point.payload))


def _to_edge_sparse(sparse: SparseVector) -> qe.SparseVector:
    return qe.SparseVector(list(sparse.indices), list(sparse.values))


def _to_filter(conditions: Sequence[Condition]) -> qe.Filter:
    must: list[Any] = []
    for condition in conditions:
        if isinstance(condition, FieldMatch):
            must.append(qe.FieldCondition(condition.field, match=qe.MatchValue(condition.value)))
        elif isinstance(condition, IntRange):
            bounds = qe.RangeFloat(gte=condition.gte, lte=condition.lte)
            must.append(qe.FieldCondition(condition.field, range=bounds))
        else:
            raise TypeError(f"unknown condition {condition!r}")
    return qe.Filter(must=must)


def _query_request(
    dense: Sequence[float],
    sparse: SparseVector | None,
    limit: int,
    conditions: Sequence[Condition],
) -> qe.QueryRequest:
    query_filter = _to_filter(conditions) if conditions else None
    dense_query = qe.Query.Nearest(list(dense), using=DENSE)
    if sparse is None:
        return qe.QueryRequest(
            limit=limit, query=dense_query, filter=query_filter, with_payload=True
        )
    lexical = _to_edge_sparse(sparse)
    depth = max(limit * 4, 20)
    return qe.QueryRequest(
        limit=limit,
        prefetches=[
            qe.Prefetch(limit=depth, query=dense_query, filter=query_filter),
            qe.Prefetch(
                limit=depth, query=qe.Query.Nearest(lexical, using=SPARSE), filter=query_filter
            ),
        ],
        query=cast("qe.Fusion", qe.Fusion.Rrf(k=RRF_K)),  # the stub omits the nested class
        filter=query_filter,
        with_payload=True,
    )


def _point_id(raw: object) -> PointId:
    # The engine hands UUID ids back as `uuid.UUID`; ours are canonical UUID strings.
    return PointId(str(raw))


def _scored(hit: Any, *, with_dense: bool) -> ScoredPoint:
    vector = hit.vector.get(DENSE) if with_dense and isinstance(hit.vector, Mapping) else None
    return ScoredPoint(
        id=_point_id(hit.id),
        score=hit.score,
        payload=_payload(hit.payload),
        dense=list(vector) if vector is not None else None,
    )


def _payload(raw: Mapping[str, Any] | None) -> dict[str, PayloadValue]:
    return cast("dict[str, PayloadValue]", dict(raw or {}))


def _flush_and_close(engine: qe.EdgeShard) -> None:
    engine.flush()
    engine.close()
