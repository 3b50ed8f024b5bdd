"""Lore's vector-store types as qdrant-client's models, and back: payload indexes, points,
filters, the prefetches of a hybrid query and scored hits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from qdrant_client import models

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

__all__ = ["prefetches", "scored", "to_filter", "to_point_struct", "wanted_indexes"]

_IndexParams = models.KeywordIndexParams | models.IntegerIndexParams


def wanted_indexes(spec: CollectionSpec) -> list[tuple[str, _IndexParams]]:
    wanted: list[tuple[str, _IndexParams]] = []
    if spec.tenant_field is not None:
        wanted.append(
            (
                spec.tenant_field,
                models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True),
            )
        )
    wanted.extend(
        (f, models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD))
        for f in spec.keyword_fields
    )
    wanted.extend(
        (
            f,
            models.IntegerIndexParams(
                type=models.IntegerIndexType.INTEGER, lookup=True, range=True
            ),
        )
        for f in spec.integer_fields
    )
    return wanted


def to_point_struct(point: VectorPoint) -> models.PointStruct:
    vector: dict[str, Any] = {DENSE: list(point.dense)}
    if point.sparse is not None:
        vector[SPARSE] = models.SparseVector(
            indices=list(point.sparse.indices), values=list(point.sparse.values)
        )
    return models.PointStruct(id=point.id, vector=vector, payload=dict(point.payload))


def to_filter(conditions: Sequence[Condition]) -> models.Filter:
    must: list[models.Condition] = []
    for condition in conditions:
        if isinstance(condition, FieldMatch):
            match = models.MatchValue(value=condition.value)
            must.append(models.FieldCondition(key=condition.field, match=match))
        elif isinstance(condition, IntRange):
            bounds = models.Range(gte=condition.gte, lte=condition.lte)
            must.append(models.FieldCondition(key=condition.field, range=bounds))
        else:
            raise TypeError(f"unknown condition {condition!r}")
    return models.Filter(must=must)


def prefetches(
    dense: Sequence[float],
    sparse: SparseVector,
    limit: int,
    query_filter: models.Filter | None,
) -> list[models.Prefetch]:
    depth = max(limit * 4, 20)
    lexical = models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
    return [
        models.Prefetch(query=list(dense), using=DENSE, filter=query_filter, limit=depth),
        models.Prefetch(query=lexical, using=SPARSE, filter=query_filter, limit=depth),
    ]


def scored(hit: models.ScoredPoint) -> ScoredPoint:
    vector = hit.vector.get(DENSE) if isinstance(hit.vector, dict) else None
    return ScoredPoint(
        id=PointId(str(hit.id)),
        score=hit.score,
        payload=cast("dict[str, PayloadValue]", dict(hit.payload or {})),
        dense=cast("list[float]", vector) if isinstance(vector, list) else None,
    )
