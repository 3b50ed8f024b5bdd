"""Lore's two Qdrant collections and the only ways to search them.

`knowledge` holds shared documents; `private` holds every member's private documents
in one collection, partitioned by the `user_id` tenant index. `search_private` and
`lexical_private` take the user id as a required keyword argument and always add the
filter; no other code path builds a query on `private` (DESIGN.md invariant 2).
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.documents import Collection
from storage.ids import DocumentId, PointId, UserId
from storage.vectors import (
    CollectionSpec,
    FieldMatch,
    ScoredPoint,
    SparseVector,
    VectorPoint,
    VectorStore,
)

__all__ = [
    "DOCUMENT_FIELD",
    "TENANT_FIELD",
    "KnowledgeIndex",
    "collection_specs",
]

TENANT_FIELD = "user_id"
DOCUMENT_FIELD = "document_id"


def collection_specs(dense_size: int, hnsw_threshold: int) -> tuple[CollectionSpec, ...]:
    """What both collections must look like for an embedding model of this size."""
    return (
        CollectionSpec(
            name=Collection.KNOWLEDGE.value,
            dense_size=dense_size,
            keyword_fields=(DOCUMENT_FIELD,),
            hnsw_threshold=hnsw_threshold,
        ),
        CollectionSpec(
            name=Collection.PRIVATE.value,
            dense_size=dense_size,
            tenant_field=TENANT_FIELD,
            keyword_fields=(DOCUMENT_FIELD,),
            hnsw_threshold=hnsw_threshold,
        ),
    )


class KnowledgeIndex:
    """Vectors of document chunks, shared and private, over one `VectorStore`."""

    def __init__(self, store: VectorStore, *, dense_size: int, hnsw_threshold: int) -> None:
        self._store = store
        self._specs = collection_specs(dense_size, hnsw_threshold)

    async def ensure(self) -> None:
        """Create or reconcile both collections and their payload indexes."""
        for spec in self._specs:
            await self._store.ensure_collection(spec)

    async def drop(self) -> None:
        """Delete both collections (before every vector is rebuilt with another size)."""
        for spec in self._specs:
            await self._store.drop_collection(spec.name)

    async def upsert(self, collection: Collection, points: Sequence[VectorPoint]) -> None:
        """Write points; private points must carry their owner's `user_id` payload."""
        if collection is Collection.PRIVATE and any(
            not point.payload.get(TENANT_FIELD) for point in points
        ):
            raise ValueError("A private point must carry the user_id of its owner")
        await self._store.upsert(collection.value, points)

    async def delete_points(self, collection: Collection, ids: Sequence[PointId]) -> None:
        """Remove points by id."""
        if ids:
            await self._store.delete_points(collection.value, ids)

    async def delete_document(self, collection: Collection, document_id: DocumentId) -> None:
        """Remove every point of one document."""
        await self._store.delete_where(collection.value, [FieldMatch(DOCUMENT_FIELD, document_id)])

    async def search_shared(
        self, dense: Sequence[float], *, sparse: SparseVector | None = None, limit: int = 10
    ) -> list[ScoredPoint]:
        """Search the shared knowledge."""
        return await self._store.search(
            Collection.KNOWLEDGE.value, dense, sparse=sparse, limit=limit
        )

    async def search_private(
        self,
        dense: Sequence[float],
        *,
        user_id: UserId,
        sparse: SparseVector | None = None,
        limit: int = 10,
    ) -> list[ScoredPoint]:
        """Search one user's private documents; `user_id` is required and always filtered on."""
        if not user_id:
            raise ValueError("search_private needs the authenticated user's id")
        return await self._store.search(
            Collection.PRIVATE.value,
            dense,
            sparse=sparse,
            limit=limit,
            conditions=[FieldMatch(TENANT_FIELD, user_id)],
        )

    async def lexical_shared(
        self, sparse: SparseVector, *, limit: int = 10, with_dense: bool = False
    ) -> list[ScoredPoint]:
        """Search the shared knowledge by lexical vector alone (BM25 scores); with
        `with_dense`, each hit carries its dense vector."""
        return await self._store.search_lexical(
            Collection.KNOWLEDGE.value, sparse, limit=limit, with_dense=with_dense
        )

    async def lexical_private(
        self,
        sparse: SparseVector,
        *,
        user_id: UserId,
        limit: int = 10,
        with_dense: bool = False,
    ) -> list[ScoredPoint]:
        """Search one user's private documents by lexical vector alone; `user_id` is required
        and always filtered on."""
        if not user_id:
            raise ValueError("lexical_private needs the authenticated user's id")
        return await self._store.search_lexical(
            Collection.PRIVATE.value,
            sparse,
            limit=limit,
            conditions=[FieldMatch(TENANT_FIELD, user_id)],
            with_dense=with_dense,
        )

    async def point_ids(self, collection: Collection) -> set[PointId]:
        """Every point id in one collection."""
        return await self._store.point_ids(collection.value)

    async def count(self, collection: Collection) -> int:
        """How many points one collection holds."""
        return await self._store.count(collection.value)
