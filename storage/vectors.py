"""The vector-store interface: the one seam between Lore and a Qdrant engine.

Two implementations honour it and share one contract test suite:
`storage.edge_store.EdgeVectorStore` (Qdrant's engine in-process, the default) and
`storage.server_store.ServerVectorStore` (a Qdrant server through qdrant-client).
Qdrant holds vectors and the few payload fields that filters need; SQLite holds
everything else, so search hits are always hydrated from SQLite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from storage.ids import PointId

__all__ = [
    "DENSE",
    "SPARSE",
    "CollectionSpec",
    "Condition",
    "FieldMatch",
    "IntRange",
    "ScoredPoint",
    "SparseVector",
    "TenantFilterMissingError",
    "VectorPoint",
    "VectorStore",
    "VectorStoreError",
    "require_tenant_match",
]

DENSE = "dense"
SPARSE = "lexical"

PayloadValue = str | int


class VectorStoreError(Exception):
    """A vector engine failed; the message names the collection and the operation."""


class TenantFilterMissingError(VectorStoreError):
    """A query on a tenant collection came without a match on its tenant field."""


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A sparse vector (lexical term weights)."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class VectorPoint:
    """One point to upsert: a dense vector, an optional sparse one, a flat payload."""

    id: PointId
    dense: Sequence[float]
    sparse: SparseVector | None = None
    payload: Mapping[str, PayloadValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ScoredPoint:
    """One search hit."""

    id: PointId
    score: float
    payload: Mapping[str, PayloadValue]
    dense: Sequence[float] | None = None
    """The stored dense vector (unit length), only when the search was asked for it."""


@dataclass(frozen=True, slots=True)
class FieldMatch:
    """Payload field equals value."""

    field: str
    value: PayloadValue


@dataclass(frozen=True, slots=True)
class IntRange:
    """Integer payload field within [gte, lte] (either bound may be open)."""

    field: str
    gte: int | None = None
    lte: int | None = None


Condition = FieldMatch | IntRange


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    """What a collection must look like; `ensure_collection` creates or reconciles it.

    `tenant_field` names a keyword field indexed with `is_tenant`; every search on
    such a collection must match on it, or the store raises
    `TenantFilterMissingError` before touching the engine.
    """

    name: str
    dense_size: int
    tenant_field: str | None = None
    keyword_fields: tuple[str, ...] = ()
    integer_fields: tuple[str, ...] = ()
    # Build an HNSW graph only above this many points; below it exact search is fast.
    hnsw_threshold: int = 100_000


class VectorStore(Protocol):
    """Async access to Qdrant collections. Implementations never block the event loop.

    Call `ensure_collection` once per process for a collection before any other
    call on it (it tells the store the collection's tenant field); a call on a
    collection not ensured raises `VectorStoreError`.
    """

    async def ensure_collection(self, spec: CollectionSpec) -> None:
        """Create the collection if missing; create missing payload indexes."""

    async def drop_collection(self, name: str) -> None:
        """Delete a collection and every point in it, if it exists (before it is built again
        for vectors of another size); `ensure_collection` creates it anew."""

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or overwrite points (same id overwrites)."""

    async def delete_points(self, collection: str, ids: Sequence[PointId]) -> None:
        """Delete points by id; unknown ids are ignored."""

    async def delete_where(self, collection: str, conditions: Sequence[Condition]) -> None:
        """Delete every point matching all conditions (at least one condition)."""

    async def search(
        self,
        collection: str,
        dense: Sequence[float],
        *,
        sparse: SparseVector | None = None,
        limit: int = 10,
        conditions: Sequence[Condition] = (),
    ) -> list[ScoredPoint]:
        """Dense search, or hybrid dense + sparse fused with RRF when `sparse` is given."""

    async def search_lexical(
        self,
        collection: str,
        sparse: SparseVector,
        *,
        limit: int = 10,
        conditions: Sequence[Condition] = (),
        with_dense: bool = False,
    ) -> list[ScoredPoint]:
        """Sparse search alone: points sharing a term with `sparse`, best BM25 score first
        (the collection's IDF modifier applied). Tenant collections need their tenant match.
        With `with_dense`, each hit carries its stored dense vector."""

    async def count(self, collection: str, conditions: Sequence[Condition] = ()) -> int:
        """Exact number of points matching all conditions."""

    async def point_ids(self, collection: str) -> set[PointId]:
        """Every point id in the collection (used by the repair job)."""

    async def snapshot(self, target: Path) -> bool:
        """Copy every open collection into `target` as files a store opened there reads back
        (writes wait meanwhile); False when the engine keeps its data elsewhere (a server):
        then a restore rebuilds the vectors from SQLite."""

    async def close(self) -> None:
        """Flush and release the engine."""


def require_tenant_match(spec: CollectionSpec, conditions: Sequence[Condition]) -> None:
    """Refuse a search of a tenant collection that does not match on its tenant field."""
    tenant = spec.tenant_field
    if tenant is None:
        return
    if not any(isinstance(c, FieldMatch) and c.field == tenant for c in conditions):
        raise TenantFilterMissingError(
            f"search on {spec.name!r} must match on its tenant field {tenant!r}"
        )
