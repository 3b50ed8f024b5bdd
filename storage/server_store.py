"""The vector store on a Qdrant server (or cluster) through qdrant-client's async API.

Every qdrant-client or httpx error is translated into `VectorStoreError` at this
boundary, with a message that names the collection and the operation and never
contains the API key. qdrant-client's local mode (`AsyncQdrantClient(location=":memory:")`)
implements the same API in-process, which is how the contract tests run this code
without a server.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from storage.ids import PointId
from storage.server_requests import prefetches, scored, to_filter, to_point_struct, wanted_indexes
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

__all__ = ["ServerVectorStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

RRF_K = 60
_SCROLL_PAGE = 1_000
_FULL_SCAN_THRESHOLD_KB = 10_000
_MAX_DETAIL = 300
_ALREADY_EXISTS = 409


class ServerVectorStore:
    """`VectorStore` on a Qdrant server; use as an async context manager.

    A client passed in stays the caller's to close; one made by `connect` is closed
    by `close()`. `redact` is a secret (the API key) that must never appear in an
    error message; `connect` passes it for you.
    """

    def __init__(self, client: AsyncQdrantClient, *, redact: str | None = None) -> None:
        self._client = client
        self._redact = redact or None
        self._owns_client = False
        self._specs: dict[str, CollectionSpec] = {}

    @classmethod
    def connect(cls, url: str, api_key: str | None, timeout: float) -> ServerVectorStore:
        """Build a store on the server at `url` (no request is made until first use)."""
        client = AsyncQdrantClient(
            url=url,
            api_key=api_key,
            timeout=max(math.ceil(timeout), 1),
            check_compatibility=False,
        )
        store = cls(client, redact=api_key)
        store._owns_client = True
        return store

    async def __aenter__(self) -> ServerVectorStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def ensure_collection(self, spec: CollectionSpec) -> None:
        """Create the collection if missing, check its dense size, create missing indexes."""
        name = spec.name
        exists = await self._call(name, "ensure_collection", self._client.collection_exists(name))
        if not exists:
            await self._create(spec)
        info = await self._call(name, "ensure_collection", self._client.get_collection(name))
        _check_dense_size(spec, info)
        present = set(info.payload_schema or {})
        for field_name, schema in wanted_indexes(spec):
            if field_name in present:
                continue
            await self._call(
                name,
                "create_payload_index",
                self._client.create_payload_index(name, field_name, field_schema=schema, wait=True),
            )
            logger.info("created payload index %s.%s", name, field_name)
        self._specs[name] = spec

    async def drop_collection(self, name: str) -> None:
        """Delete the collection on the server, if it exists."""
        exists = await self._call(name, "drop_collection", self._client.collection_exists(name))
        if exists:
            await self._call(name, "drop_collection", self._client.delete_collection(name))
        self._specs.pop(name, None)
        logger.info("dropped collection %s", name)

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points (waits until the server applied them)."""
        if not points:
            return
        self._spec(collection)
        structs = [to_point_struct(p) for p in points]
        await self._call(
            collection, "upsert", self._client.upsert(collection, points=structs, wait=True)
        )

    async def delete_points(self, collection: str, ids: Sequence[PointId]) -> None:
        """Delete points by id; unknown ids are ignored."""
        if not ids:
            return
        self._spec(collection)
        selector = models.PointIdsList(points=list(ids))
        await self._call(
            collection,
            "delete_points",
            self._client.delete(collection, points_selector=selector, wait=True),
        )

    async def delete_where(self, collection: str, conditions: Sequence[Condition]) -> None:
        """Delete every point matching all conditions."""
        if not conditions:
            raise VectorStoreError(f"delete_where on {collection!r} needs at least one condition")
        self._spec(collection)
        selector = models.FilterSelector(filter=to_filter(conditions))
        await self._call(
            collection,
            "delete_where",
            self._client.delete(collection, points_selector=selector, wait=True),
        )

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
        require_tenant_match(self._spec(collection), conditions)
        query_filter = to_filter(conditions) if conditions else None
        if sparse is None:
            request = self._client.query_points(
                collection,
                query=list(dense),
                using=DENSE,
                query_filter=query_filter,
                limit=limit,
                with_payload=True,
            )
        else:
            request = self._client.query_points(
                collection,
                prefetch=prefetches(dense, sparse, limit, query_filter),
                query=models.RrfQuery(rrf=models.Rrf(k=RRF_K)),
                query_filter=query_filter,
                limit=limit,
                with_payload=True,
            )
        response = await self._call(collection, "search", request)
        return [scored(hit) for hit in response.points]

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
        require_tenant_match(self._spec(collection), conditions)
        request = self._client.query_points(
            collection,
            query=models.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
            using=SPARSE,
            query_filter=to_filter(conditions) if conditions else None,
            limit=limit,
            with_payload=True,
            with_vectors=[DENSE] if with_dense else False,
        )
        response = await self._call(collection, "search_lexical", request)
        return [scored(hit) for hit in response.points]

    async def count(self, collection: str, conditions: Sequence[Condition] = ()) -> int:
        """Exact number of points matching all conditions."""
        self._spec(collection)
        count_filter = to_filter(conditions) if conditions else None
        result = await self._call(
            collection,
            "count",
            self._client.count(collection, count_filter=count_filter, exact=True),
        )
        return result.count

    async def point_ids(self, collection: str) -> set[PointId]:
        """Every point id in the collection, scrolled page by page."""
        self._spec(collection)
        ids: set[PointId] = set()
        offset: Any = None
        while True:
            records, offset = await self._call(
                collection,
                "point_ids",
                self._client.scroll(
                    collection,
                    limit=_SCROLL_PAGE,
                    offset=offset,
                    with_payload=False,
                    with_vectors=False,
                ),
            )
            ids.update(PointId(str(record.id)) for record in records)
            if offset is None:
                return ids

    async def snapshot(self, target: Path) -> bool:
        """A server keeps its files to itself: a restore re-embeds from SQLite instead."""
        del target
        return False

    async def close(self) -> None:
        """Forget opened collections; close the client if `connect` made it."""
        self._specs.clear()
        if self._owns_client:
            await self._call("*", "close", self._client.close())

    async def _create(self, spec: CollectionSpec) -> None:
        tenant = spec.tenant_field is not None
        create = self._client.create_collection(
            spec.name,
            vectors_config={
                DENSE: models.VectorParams(size=spec.dense_size, distance=models.Distance.COSINE)
            },
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            # Tenant collections are always searched within one tenant: per-tenant graphs
            # (payload_m) instead of one global graph (m=0), as Qdrant recommends.
            hnsw_config=models.HnswConfigDiff(
                m=0 if tenant else 16,
                payload_m=16 if tenant else None,
                full_scan_threshold=_FULL_SCAN_THRESHOLD_KB,
            ),
            # Below the threshold segments stay plain, so searches are exact.
            optimizers_config=models.OptimizersConfigDiff(
                indexing_threshold=max(spec.hnsw_threshold * spec.dense_size * 4 // 1024, 1)
            ),
            # Payload holds only filter fields, all indexed in RAM; the rest can stay on disk.
            on_disk_payload=True,
        )
        try:
            await create
        except UnexpectedResponse as exc:
            if exc.status_code != _ALREADY_EXISTS:  # else: another process created it first
                raise self._error(spec.name, "create_collection", exc) from exc
        except Exception as exc:
            raise self._error(spec.name, "create_collection", exc) from exc
        else:
            logger.info("created collection %s", spec.name)

    def _spec(self, collection: str) -> CollectionSpec:
        spec = self._specs.get(collection)
        if spec is None:
            raise VectorStoreError(
                f"collection {collection!r} is not open: call ensure_collection first"
            )
        return spec

    async def _call(self, collection: str, operation: str, request: Awaitable[T]) -> T:
        try:
            return await request
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise self._error(collection, operation, exc) from exc

    def _error(self, collection: str, operation: str, exc: Exception) -> VectorStoreError:
        detail = _describe(exc)
        if self._redact:
            detail = detail.replace(self._redact, "***")
        return VectorStoreError(f"{operation} on collection {collection!r} failed: {detail}")


def _describe(exc: Exception) -> str:
    if isinstance(exc, UnexpectedResponse):
        body = exc.content[:_MAX_DETAIL].decode("utf-8", errors="replace")
        return f"Qdrant answered {exc.status_code} {exc.reason_phrase}: {body}"
    if isinstance(exc, ResponseHandlingException):
        return f"no usable answer from Qdrant ({type(exc.source).__name__}: {exc.source})"
    return f"{type(exc).__name__}: {exc}"[:_MAX_DETAIL]


def _check_dense_size(spec: CollectionSpec, info: models.CollectionInfo) -> None:
    vectors = info.config.params.vectors
    params = vectors.get(DENSE) if isinstance(vectors, dict) else None
    if params is None:
        raise VectorStoreError(f"collection {spec.name!r} has no dense vector named {DENSE!r}")
    if params.size != spec.dense_size:
        raise VectorStoreError(
            f"collection {spec.name!r} holds {params.size}-d vectors, not {spec.dense_size}-d:"
            " the embedding model changed, so the collection must be rebuilt"
            " (re-index its documents)"
        )
