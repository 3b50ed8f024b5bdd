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
  mid-swap is repaired at the next open (`_recover`).
* A shard directory is locked through its WAL; a second opener (another process,
  or this one) gets "Can't init WAL: Kind(WouldBlock)", which becomes
  `StoreLockedError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
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

__all__ = ["EdgeVectorStore", "StoreLockedError", "edge_config", "spec_from_json"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

RRF_K = 60
_SCROLL_PAGE = 1_000
_FULL_SCAN_THRESHOLD_KB = 10_000
_LOCKED_MARKERS = ("WouldBlock", "Can't init WAL")
_SIZE_MISMATCH_MARKER = "expected vector size"
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_BUILD_PREFIX = ".build-"  # a copy whose index a child process builds
_OLD_PREFIX = ".old-"  # the live shard set aside during a swap


class StoreLockedError(VectorStoreError):
    """Another process (or another store in this one) holds the shard directory open."""


@dataclass(slots=True)
class _Shard:
    """An open shard and what this process knows about it."""

    spec: CollectionSpec
    engine: qe.EdgeShard
    path: Path
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


class EdgeVectorStore:
    """`VectorStore` on qdrant-edge shards under `root`; use as an async context manager."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._shards: dict[str, _Shard] = {}
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
                if shard.build is not None:
                    shard.build.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await shard.build
                await self._call(name, "close", partial(_flush_and_close, shard.engine))

            def remove() -> None:
                _recover(self._root, name)
                shutil.rmtree(self._root / name, ignore_errors=True)

            await asyncio.to_thread(remove)
        logger.info("dropped edge collection %s", name)

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points; past the collection's threshold an HNSW index is built
        in the background (`wait_for_index_builds` awaits it)."""
        if not points:
            return
        shard = self._shard(collection)
        operation = qe.UpdateOperation.upsert_points([_to_edge_point(p) for p in points])
        await self._write(shard, "upsert", operation)
        shard.writes_since_optimize += len(points)
        self._maybe_optimize(shard)

    async def delete_points(self, collection: str, ids: Sequence[PointId]) -> None:
        """Delete points by id; unknown ids are ignored."""
        if not ids:
            return
        shard = self._shard(collection)
        await self._write(shard, "delete_points", qe.UpdateOperation.delete_points(list(ids)))

    async def delete_where(self, collection: str, conditions: Sequence[Condition]) -> None:
        """Delete every point matching all conditions."""
        if not conditions:
            raise VectorStoreError(f"delete_where on {collection!r} needs at least one condition")
        shard = self._shard(collection)
        operation = qe.UpdateOperation.delete_points_by_filter(_to_filter(conditions))
        await self._write(shard, "delete_where", operation)

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
        _require_tenant_match(shard.spec, conditions)
        request = _query_request(dense, sparse, limit, conditions)
        hits = await self._use(shard, "search", lambda engine: engine.query(request))
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
        hits = await self._use(shard, "search_lexical", lambda engine: engine.query(request))
        return [_scored(hit, with_dense=with_dense) for hit in hits]

    async def count(self, collection: str, conditions: Sequence[Condition] = ()) -> int:
        """Exact number of points matching all conditions."""
        shard = self._shard(collection)
        request = qe.CountRequest(exact=True, filter=_to_filter(conditions) if conditions else None)
        return await self._use(shard, "count", lambda engine: engine.count(request))

    async def point_ids(self, collection: str) -> set[PointId]:
        """Every point id in the collection, scrolled page by page."""
        shard = self._shard(collection)
        ids: set[PointId] = set()
        offset: Any = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=_SCROLL_PAGE, with_payload=False, with_vector=False
            )
            records, offset = await self._use(shard, "point_ids", partial(_scroll, request))
            ids.update(_point_id(record.id) for record in records)
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
                await self._use(shard, "flush", lambda engine: engine.flush())
                await asyncio.to_thread(
                    shutil.copytree, shard.path, target / name, dirs_exist_ok=True
                )
        return True

    async def close(self) -> None:
        """Flush and close every shard; the store can be reopened with `ensure_collection`."""
        async with self._open_lock:
            shards, self._shards = self._shards, {}
            for shard in shards.values():
                if shard.build is not None:
                    shard.build.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await shard.build
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
        config = edge_config(spec)

        def load() -> qe.EdgeShard:
            _recover(self._root, spec.name)
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
        shard = _Shard(spec=spec, engine=engine, path=path)
        # Points left unindexed by an earlier run (e.g. a crash before a build finished).
        shard.writes_since_optimize = _optimize_every(spec)
        self._maybe_optimize(shard)
        return shard

    async def _reconcile_indexes(self, shard: _Shard) -> None:
        name = shard.spec.name
        info = await self._use(shard, "ensure_collection", lambda engine: engine.info())
        existing = set(info.payload_schema)
        for field_name, params in _wanted_indexes(shard.spec):
            if field_name in existing:
                continue
            operation = qe.UpdateOperation.create_field_index(field_name, params)
            await self._write(shard, "create_field_index", operation)
            logger.info("created payload index %s.%s", name, field_name)

    async def _use(self, shard: _Shard, operation: str, fn: Callable[[qe.EdgeShard], T]) -> T:
        """Run one engine call in a thread, never while a swap replaces the engine."""
        await shard.available.wait()
        shard.in_flight += 1
        shard.idle.clear()
        try:
            return await self._call(shard.spec.name, operation, partial(fn, shard.engine))
        finally:
            shard.in_flight -= 1
            if shard.in_flight == 0:
                shard.idle.set()

    async def _write(self, shard: _Shard, operation: str, update: Any) -> None:
        """Apply one update; while a build runs, also keep it for the built copy."""
        async with shard.write_lock:
            await self._use(shard, operation, lambda engine: engine.update(update))
            if shard.journal is not None:
                shard.journal.append(update)

    def _maybe_optimize(self, shard: _Shard) -> None:
        """Start a background index build when enough was written since the last one."""
        if shard.build is not None or shard.writes_since_optimize < _optimize_every(shard.spec):
            return
        shard.writes_since_optimize = 0
        shard.build = asyncio.create_task(
            self._build_index(shard), name=f"index-build-{shard.spec.name}"
        )
        shard.build.add_done_callback(partial(_build_done, shard))

    async def _build_index(self, shard: _Shard) -> None:
        name = shard.spec.name
        points = await self._use(shard, "count", lambda engine: engine.count(qe.CountRequest()))
        if points < shard.spec.hnsw_threshold:
            return
        copy = self._root / f"{_BUILD_PREFIX}{name}"
        async with shard.write_lock:
            await self._use(shard, "flush", lambda engine: engine.flush())
            await asyncio.to_thread(_copy_shard, shard.path, copy)
            shard.journal = []
        try:
            logger.info("building the index of edge collection %s (%d points)", name, points)
            async with _time(f"index build of {name}"):
                await _run_builder(copy, shard.spec)
            swap = asyncio.ensure_future(self._swap(shard, copy))
            try:
                await asyncio.shield(swap)
            except asyncio.CancelledError:
                await swap  # a swap half-done would leave a closed engine: finish it first
                raise
        except BaseException:
            shard.journal = None
            await asyncio.shield(asyncio.to_thread(shutil.rmtree, copy, True))
            raise

    async def _swap(self, shard: _Shard, copy: Path) -> None:
        """Bring the built copy up to date and put it in the live shard's place."""
        config = edge_config(shard.spec)
        async with shard.write_lock:
            journal, shard.journal = shard.journal or [], None
            await self._call(shard.spec.name, "catch up", partial(_catch_up, copy, config, journal))
            shard.available.clear()
            try:
                await shard.idle.wait()
                shard.engine = await self._call(
                    shard.spec.name,
                    "swap",
                    partial(_swap_directories, shard.engine, shard.path, copy, config),
                )
            finally:
                shard.available.set()
        logger.info(
            "swapped in the indexed edge collection %s (%d writes caught up)",
            shard.spec.name,
            len(journal),
        )

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


def edge_config(spec: CollectionSpec) -> qe.EdgeConfig:
    """The engine configuration of a collection (also used by `storage.edge_index_build`)."""
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


def _scroll(request: qe.ScrollRequest, engine: qe.EdgeShard) -> tuple[Any, Any]:
    return engine.scroll(request)


def _flush_and_close(engine: qe.EdgeShard) -> None:
    engine.flush()
    engine.close()


def spec_to_json(spec: CollectionSpec) -> str:
    """A spec as JSON, for the index build's command line."""
    return json.dumps(asdict(spec))


def spec_from_json(text: str) -> CollectionSpec:
    """The spec `spec_to_json` wrote."""
    raw: dict[str, Any] = json.loads(text)
    return CollectionSpec(
        name=str(raw["name"]),
        dense_size=int(raw["dense_size"]),
        tenant_field=raw["tenant_field"],
        keyword_fields=tuple(raw["keyword_fields"]),
        integer_fields=tuple(raw["integer_fields"]),
        hnsw_threshold=int(raw["hnsw_threshold"]),
    )


def _build_done(shard: _Shard, task: asyncio.Task[None]) -> None:
    shard.build = None
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        # The live shard has every write; the next writes start another build.
        logger.warning("index build of edge collection %s failed: %s", shard.spec.name, error)


@contextlib.asynccontextmanager
async def _time(what: str) -> AsyncIterator[None]:
    started = asyncio.get_running_loop().time()
    yield
    logger.info("%s took %.1fs", what, asyncio.get_running_loop().time() - started)


async def _run_builder(copy: Path, spec: CollectionSpec) -> None:
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


def _copy_shard(live: Path, copy: Path) -> None:
    """Copy a flushed shard directory (writes are held meanwhile)."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(live, copy)


def _catch_up(copy: Path, config: qe.EdgeConfig, journal: list[Any]) -> None:
    """Apply the writes made during the build to the built copy, flush and close it."""
    engine = qe.EdgeShard.load(str(copy), config)
    try:
        for update in journal:
            engine.update(update)
        engine.flush()
    finally:
        engine.close()


def _swap_directories(
    live_engine: qe.EdgeShard, live: Path, copy: Path, config: qe.EdgeConfig
) -> qe.EdgeShard:
    """Close the live shard, put the copy in its place and open it. On failure the live
    shard is put back and reopened, so the store keeps every point."""
    old = live.parent / f"{_OLD_PREFIX}{live.name}"
    _flush_and_close(live_engine)
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


def _recover(root: Path, name: str) -> None:
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
    shutil.rmtree(root / f"{_BUILD_PREFIX}{name}", ignore_errors=True)
