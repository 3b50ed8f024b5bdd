"""Lore's vector-store types as qdrant-edge's, and back: a collection's engine configuration
and payload indexes, points, filters, dense and hybrid (RRF) queries, scored hits, and a
collection spec as JSON for the index build's child process."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, cast

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
    VectorPoint,
)

__all__ = [
    "RRF_K",
    "edge_config",
    "point_id",
    "query_request",
    "scored",
    "spec_from_json",
    "spec_to_json",
    "to_edge_point",
    "to_edge_sparse",
    "to_filter",
    "wanted_indexes",
]

RRF_K = 60
_FULL_SCAN_THRESHOLD_KB = 10_000


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


def wanted_indexes(spec: CollectionSpec) -> list[tuple[str, Any]]:
    wanted: list[tuple[str, Any]] = []
    if spec.tenant_field is not None:
        wanted.append((spec.tenant_field, qe.KeywordIndexParams(is_tenant=True)))
    wanted.extend((f, qe.KeywordIndexParams()) for f in spec.keyword_fields)
    wanted.extend((f, qe.IntegerIndexParams(lookup=True, range=True)) for f in spec.integer_fields)
    return wanted


def to_edge_point(point: VectorPoint) -> qe.Point:
    vectors: dict[str, Any] = {DENSE: list(point.dense)}
    if point.sparse is not None:
        vectors[SPARSE] = to_edge_sparse(point.sparse)
    return qe.Point(point.id, vectors, dict(point.payload))


def to_edge_sparse(sparse: SparseVector) -> qe.SparseVector:
    return qe.SparseVector(list(sparse.indices), list(sparse.values))


def to_filter(conditions: Sequence[Condition]) -> qe.Filter:
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


def query_request(
    dense: Sequence[float],
    sparse: SparseVector | None,
    limit: int,
    conditions: Sequence[Condition],
) -> qe.QueryRequest:
    query_filter = to_filter(conditions) if conditions else None
    dense_query = qe.Query.Nearest(list(dense), using=DENSE)
    if sparse is None:
        return qe.QueryRequest(
            limit=limit, query=dense_query, filter=query_filter, with_payload=True
        )
    lexical = to_edge_sparse(sparse)
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


def point_id(raw: object) -> PointId:
    # The engine hands UUID ids back as `uuid.UUID`; ours are canonical UUID strings.
    return PointId(str(raw))


def scored(hit: Any, *, with_dense: bool) -> ScoredPoint:
    vector = hit.vector.get(DENSE) if with_dense and isinstance(hit.vector, Mapping) else None
    return ScoredPoint(
        id=point_id(hit.id),
        score=hit.score,
        payload=_payload(hit.payload),
        dense=list(vector) if vector is not None else None,
    )


def _payload(raw: Mapping[str, Any] | None) -> dict[str, PayloadValue]:
    return cast("dict[str, PayloadValue]", dict(raw or {}))


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
