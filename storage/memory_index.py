"""The `memory` Qdrant collection: one point per answered exchange, searchable only per user.

Every member's exchanges live in one collection partitioned by the `user_id` tenant
index; `search_memory` takes the user id as a required keyword argument and always
adds the filter (the store also refuses a tenant collection searched without it).
Points carry only what filters need (user, chat, time, day as YYYYMMDD, turn id); the
question and answer stay in SQLite's `turn_log` and are read from there. A point's id
is UUIDv5 of its turn id, so re-reading a turn overwrites its point.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from storage.ids import PointId, TurnId, UserId
from storage.vectors import (
    CollectionSpec,
    Condition,
    FieldMatch,
    IntRange,
    VectorPoint,
    VectorStore,
)

__all__ = [
    "CHAT_FIELD",
    "DAY_FIELD",
    "MEMORY_COLLECTION",
    "TENANT_FIELD",
    "MemoryEntry",
    "MemoryHit",
    "MemoryIndex",
    "day_number",
    "memory_point_id",
    "memory_spec",
]

MEMORY_COLLECTION = "memory"
TENANT_FIELD = "user_id"
CHAT_FIELD = "chat_id"
DAY_FIELD = "day"
TIMESTAMP_FIELD = "timestamp"
TURN_FIELD = "turn_id"

# Fixed namespace: changing it would orphan every stored memory point.
_MEMORY_NAMESPACE = uuid.UUID("0b9d8f7e-2c4a-5e61-8d3f-7a1c5e9b2d40")


def memory_point_id(turn_id: TurnId) -> PointId:
    """The point id of one turn's exchange: UUIDv5 of the turn id (a re-read overwrites)."""
    return PointId(str(uuid.uuid5(_MEMORY_NAMESPACE, turn_id)))


def day_number(day: date) -> int:
    """A calendar day as the integer YYYYMMDD that range filters compare."""
    return day.year * 10_000 + day.month * 100 + day.day


def memory_spec(dense_size: int, hnsw_threshold: int) -> CollectionSpec:
    """What the memory collection must look like for an embedding model of this size."""
    return CollectionSpec(
        name=MEMORY_COLLECTION,
        dense_size=dense_size,
        tenant_field=TENANT_FIELD,
        keyword_fields=(CHAT_FIELD,),
        integer_fields=(DAY_FIELD,),
        hnsw_threshold=hnsw_threshold,
    )


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One exchange to remember: its vector, whose it is, where and when it happened.

    `day` is the calendar day in the member's timezone at the time of writing.
    """

    turn_id: TurnId
    user_id: UserId
    chat_id: str
    created_at: datetime
    day: date
    dense: Sequence[float]


@dataclass(frozen=True, slots=True)
class MemoryHit:
    """One remembered exchange found by a search; the text is in `turn_log`."""

    turn_id: TurnId
    user_id: UserId
    chat_id: str
    timestamp: int
    day: int
    score: float


class MemoryIndex:
    """Vectors of past exchanges over one `VectorStore`; every read is scoped to one user."""

    def __init__(self, store: VectorStore, *, dense_size: int, hnsw_threshold: int) -> None:
        self._store = store
        self._spec = memory_spec(dense_size, hnsw_threshold)

    async def ensure(self) -> None:
        """Create or reconcile the collection and its payload indexes (cheap when they exist)."""
        await self._store.ensure_collection(self._spec)

    async def drop(self) -> None:
        """Delete the collection (before every exchange is embedded again at another size)."""
        await self._store.drop_collection(self._spec.name)

    async def upsert(self, entries: Sequence[MemoryEntry]) -> None:
        """Write exchanges; the same turn again overwrites its point."""
        if any(not entry.user_id for entry in entries):
            raise ValueError("A memory point must carry the user_id of its owner")
        points = [
            VectorPoint(
                id=memory_point_id(entry.turn_id),
                dense=entry.dense,
                payload={
                    TENANT_FIELD: entry.user_id,
                    CHAT_FIELD: entry.chat_id,
                    TIMESTAMP_FIELD: int(entry.created_at.timestamp()),
                    DAY_FIELD: day_number(entry.day),
                    TURN_FIELD: entry.turn_id,
                },
            )
            for entry in entries
        ]
        await self._store.upsert(MEMORY_COLLECTION, points)

    async def search_memory(
        self,
        dense: Sequence[float],
        *,
        user_id: UserId,
        day_from: date | None = None,
        day_to: date | None = None,
        limit: int = 10,
    ) -> list[MemoryHit]:
        """One user's exchanges nearest `dense`, on days in [day_from, day_to] when given."""
        if not user_id:
            raise ValueError("search_memory needs the authenticated user's id")
        conditions: list[Condition] = [FieldMatch(TENANT_FIELD, user_id)]
        if day_from is not None or day_to is not None:
            conditions.append(
                IntRange(
                    DAY_FIELD,
                    gte=day_number(day_from) if day_from is not None else None,
                    lte=day_number(day_to) if day_to is not None else None,
                )
            )
        points = await self._store.search(
            MEMORY_COLLECTION, dense, limit=limit, conditions=conditions
        )
        hits = [
            MemoryHit(
                turn_id=TurnId(str(point.payload.get(TURN_FIELD, ""))),
                user_id=UserId(str(point.payload.get(TENANT_FIELD, ""))),
                chat_id=str(point.payload.get(CHAT_FIELD, "")),
                timestamp=int(point.payload.get(TIMESTAMP_FIELD, 0)),
                day=int(point.payload.get(DAY_FIELD, 0)),
                score=point.score,
            )
            for point in points
        ]
        # The store filtered already; a hit of anyone else would be a store bug: drop it.
        return [hit for hit in hits if hit.user_id == user_id and hit.turn_id]

    async def forget_user(self, user_id: UserId) -> None:
        """Remove every memory point of one user."""
        if not user_id:
            raise ValueError("forget_user needs a user id")
        await self._store.delete_where(MEMORY_COLLECTION, [FieldMatch(TENANT_FIELD, user_id)])

    async def count(self, user_id: UserId | None = None) -> int:
        """How many exchanges are remembered (of one user, when given)."""
        conditions = [FieldMatch(TENANT_FIELD, user_id)] if user_id is not None else []
        return await self._store.count(MEMORY_COLLECTION, conditions)

    async def point_ids(self) -> set[PointId]:
        """Every point id in the collection."""
        return await self._store.point_ids(MEMORY_COLLECTION)

    async def clear(self) -> int:
        """Delete every point (before a rebuild from the turn log); how many there were."""
        ids = sorted(await self._store.point_ids(MEMORY_COLLECTION))
        await self._store.delete_points(MEMORY_COLLECTION, ids)
        return len(ids)
