"""Documents and their chunks in SQLite: the rows every vector must be traced back to.

A document and all its chunks are written in one transaction, chunks marked
`pending` until their vectors are in Qdrant. Search hits are hydrated from here,
so a point SQLite does not know never reaches a user.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime

from storage.database import Database
from storage.document_records import (
    CHUNK_COLUMNS,
    PASSAGE_COLUMNS,
    ChunkRecord,
    Collection,
    DocumentRecord,
    DuplicateContentError,
    NewChunk,
    Passage,
    SourceType,
    chunk_from_row,
    collection_for,
    document_from_row,
    passage_from_row,
)
from storage.document_writes import (
    insert_chunks,
    insert_document,
    refresh_status,
    update_document,
)
from storage.ids import ChunkHash, DocumentId, PointId, UserId
from storage.timestamps import utc_iso

__all__ = [
    "ChunkRecord",
    "Collection",
    "DocumentRecord",
    "DocumentRepository",
    "DuplicateContentError",
    "NewChunk",
    "Passage",
    "SourceType",
    "collection_for",
]


def _placeholders(count: int) -> str:
    return ",".join("?" * count)


class DocumentRepository:
    """Reads and writes documents and chunks."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def writing(self) -> AbstractAsyncContextManager[None]:
        """One document write across SQLite, vectors and originals (see `Database.writing`)."""
        return self._db.writing()

    async def get(self, document_id: DocumentId) -> DocumentRecord | None:
        """Return one document, or None."""
        row = await self._db.fetch_one("SELECT * FROM documents WHERE id = ?", (document_id,))
        return document_from_row(row) if row is not None else None

    async def find_by_hash(
        self, owner_id: UserId | None, content_hash: str
    ) -> DocumentRecord | None:
        """Return the owner's document with exactly this content, if any."""
        row = await self._db.fetch_one(
            "SELECT * FROM documents WHERE IFNULL(owner_id, '') = ? AND content_hash = ?",
            (owner_id or "", content_hash),
        )
        return document_from_row(row) if row is not None else None

    async def find_by_source(
        self, owner_id: UserId | None, source_ref: str
    ) -> DocumentRecord | None:
        """Return the owner's document ingested from this URL or file name, if any."""
        row = await self._db.fetch_one(
            "SELECT * FROM documents WHERE IFNULL(owner_id, '') = ? AND source_ref = ?"
            " ORDER BY updated_at DESC LIMIT 1",
            (owner_id or "", source_ref),
        )
        return document_from_row(row) if row is not None else None

    async def list_for_owner(self, owner_id: UserId | None) -> list[DocumentRecord]:
        """Every document of one owner (None: the shared knowledge), newest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM documents WHERE IFNULL(owner_id, '') = ? ORDER BY created_at DESC",
            (owner_id or "",),
        )
        return [document_from_row(row) for row in rows]

    async def with_prefix(
        self, prefix: str, owners: Sequence[UserId | None], *, limit: int = 5
    ) -> list[DocumentRecord]:
        """Documents of these owners (None: the shared knowledge) whose id starts with
        `prefix` (a handle), at most `limit`; more than one means the handle is ambiguous."""
        if not prefix or not all(char in "0123456789abcdef" for char in prefix):
            return []
        rows = await self._db.fetch_all(
            "SELECT * FROM documents WHERE substr(id, 1, ?) = ?"
            " AND IFNULL(owner_id, '') IN (SELECT value FROM json_each(?))"
            " ORDER BY created_at DESC, id LIMIT ?",
            (len(prefix), prefix, json.dumps([owner or "" for owner in owners]), limit),
        )
        return [document_from_row(row) for row in rows]

    async def added_since(
        self, owner_id: UserId | None, since: datetime, *, limit: int
    ) -> tuple[list[DocumentRecord], int]:
        """Documents of one owner (None: shared) added at or after `since`, oldest first, at most
        `limit` of them, and how many there are in all (for digests)."""
        rows = await self._db.fetch_all(
            "SELECT *, COUNT(*) OVER () AS total FROM documents"
            " WHERE IFNULL(owner_id, '') = ? AND created_at >= ? ORDER BY created_at, id LIMIT ?",
            (owner_id or "", utc_iso(since), limit),
        )
        return [document_from_row(row) for row in rows], int(rows[0]["total"]) if rows else 0

    async def document_text(self, document_id: DocumentId) -> str:
        """A document's text as stored in its chunks, in order (overlaps included)."""
        rows = await self._db.fetch_all(
            "SELECT text FROM chunks WHERE document_id = ? ORDER BY chunk_index", (document_id,)
        )
        return "\n\n".join(row["text"] for row in rows)

    async def document_passages(self, document_id: DocumentId, *, limit: int) -> list[Passage]:
        """The first `limit` chunks of one document as citable passages, in order."""
        rows = await self._db.fetch_all(
            f"{PASSAGE_COLUMNS} WHERE c.document_id = ? ORDER BY c.chunk_index LIMIT ?",
            (document_id, limit),
        )
        return [passage_from_row(row) for row in rows]

    async def chunk_hashes(self, document_id: DocumentId) -> dict[ChunkHash, str]:
        """Map each chunk hash of a document to its vector status."""
        rows = await self._db.fetch_all(
            "SELECT hash, vector_status FROM chunks WHERE document_id = ?", (document_id,)
        )
        return {ChunkHash(row["hash"]): row["vector_status"] for row in rows}

    async def save(
        self, document: DocumentRecord, chunks: Sequence[NewChunk], *, replace: bool
    ) -> list[PointId]:
        """Store a document and its chunks atomically; return point ids that went away.

        With `replace`, the existing row is updated: chunks whose hash is no longer
        present are deleted (their point ids are returned so their vectors can be
        removed), kept chunks keep their vector status, new chunks start `pending`.
        """
        async with self._db.transaction() as tx:
            if replace:
                removed = await update_document(tx, document, chunks)
            else:
                await insert_document(tx, document)
                removed = []
            await insert_chunks(tx, document, chunks)
            await refresh_status(tx, [document.id])
        return removed

    async def mark_indexed(self, point_ids: Sequence[PointId]) -> None:
        """Record that these chunks' vectors are in Qdrant; finish their documents."""
        if not point_ids:
            return
        ids = json.dumps(list(point_ids))
        async with self._db.transaction() as tx:
            await tx.execute(
                "UPDATE chunks SET vector_status = 'indexed'"
                " WHERE point_id IN (SELECT value FROM json_each(?))",
                (ids,),
            )
            async with tx.execute(
                "SELECT DISTINCT document_id FROM chunks"
                " WHERE point_id IN (SELECT value FROM json_each(?))",
                (ids,),
            ) as cursor:
                documents = [row[0] for row in await cursor.fetchall()]
            await refresh_status(tx, documents)

    async def pending_chunks(self, limit: int) -> list[ChunkRecord]:
        """Chunks whose vectors are not (known to be) in Qdrant yet, oldest first."""
        rows = await self._db.fetch_all(
            f"{CHUNK_COLUMNS} WHERE c.vector_status = 'pending' ORDER BY c.id LIMIT ?",
            (limit,),
        )
        return [chunk_from_row(row) for row in rows]

    async def chunk_page(self, after: int, limit: int) -> tuple[list[ChunkRecord], int]:
        """Up to `limit` chunks whose row id is above `after`, in row order, and the last row
        id read (pass it as `after` for the next page; `after` itself when none is left)."""
        columns = CHUNK_COLUMNS.replace(" FROM chunks c", ", c.id AS row_id FROM chunks c", 1)
        rows = await self._db.fetch_all(
            f"{columns} WHERE c.id > ? ORDER BY c.id LIMIT ?",
            (after, limit),
        )
        last = int(rows[-1]["row_id"]) if rows else after
        return [chunk_from_row(row) for row in rows], last

    async def chunk_count(self) -> int:
        """How many chunks are stored, in every collection."""
        return int(str(await self._db.fetch_value("SELECT COUNT(*) FROM chunks")))

    async def pending_count(self, document_id: DocumentId) -> int:
        """How many chunks of one document still wait for their vectors."""
        value = await self._db.fetch_value(
            "SELECT COUNT(*) FROM chunks WHERE document_id = ? AND vector_status = 'pending'",
            (document_id,),
        )
        return int(str(value))

    async def point_ids(self, collection: Collection) -> set[PointId]:
        """Every point id SQLite knows in one collection."""
        rows = await self._db.fetch_all(
            "SELECT c.point_id FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE d.collection = ?",
            (collection.value,),
        )
        return {PointId(row[0]) for row in rows}

    async def unscored_chunks(self, limit: int) -> list[tuple[PointId, str, str]]:
        """Up to `limit` chunks whose injection score is not known yet: (point id, text, the
        document's title)."""
        rows = await self._db.fetch_all(
            "SELECT c.point_id, c.text, d.title FROM chunks c"
            " JOIN documents d ON d.id = c.document_id WHERE c.injection_score IS NULL"
            " ORDER BY c.document_id, c.chunk_index LIMIT ?",
            (limit,),
        )
        return [(PointId(row["point_id"]), row["text"], row["title"]) for row in rows]

    async def set_injection_scores(self, scores: Sequence[tuple[PointId, float]]) -> None:
        """Store computed injection scores, by point id."""
        async with self._db.transaction() as tx:
            await tx.executemany(
                "UPDATE chunks SET injection_score = ? WHERE point_id = ?",
                [(score, point_id) for point_id, score in scores],
            )

    async def passages(self, point_ids: Sequence[PointId]) -> dict[PointId, Passage]:
        """Hydrate search hits: the chunk text and its citable source, by point id."""
        rows = await self._db.fetch_all(
            f"{PASSAGE_COLUMNS} WHERE c.point_id IN (SELECT value FROM json_each(?))",  # noqa: S608
            (json.dumps(list(point_ids)),),
        )
        return {PointId(row["point_id"]): passage_from_row(row) for row in rows}

    async def delete(self, document_id: DocumentId) -> list[PointId]:
        """Delete a document and its chunks; return the point ids to remove from Qdrant."""
        async with self._db.transaction() as tx:
            async with tx.execute(
                "SELECT point_id FROM chunks WHERE document_id = ?", (document_id,)
            ) as cursor:
                removed = [PointId(row[0]) for row in await cursor.fetchall()]
            await tx.execute("DELETE FROM documents WHERE id = ?", (document_id,))
        return removed

    async def set_pinned(self, document_id: DocumentId, pinned: bool) -> bool:
        """Pin or unpin a shared document; False if no shared document has this id.

        Private documents cannot be pinned: a pinned text goes into every user's prompt.
        """
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE documents SET pinned = ? WHERE id = ? AND owner_id IS NULL",
                (int(pinned), document_id),
            )
            return cursor.rowcount == 1

    async def pinned_shared(self) -> list[Passage]:
        """Every chunk of the pinned shared documents, oldest document first, in order."""
        rows = await self._db.fetch_all(
            f"{PASSAGE_COLUMNS} WHERE d.pinned = 1 AND d.owner_id IS NULL"
            " ORDER BY d.created_at, d.id, c.chunk_index"
        )
        return [passage_from_row(row) for row in rows]

    async def delete_for_owner(self, owner_id: UserId) -> list[tuple[Collection, list[PointId]]]:
        """Delete every private document of one user (/forget) in one transaction.

        Returns, per collection, the point ids to remove from the vector store next.
        """
        async with self._db.transaction() as tx:
            async with tx.execute(
                "SELECT d.collection, c.point_id FROM documents d"
                " JOIN chunks c ON c.document_id = d.id WHERE d.owner_id = ?"
                " ORDER BY d.collection, c.id",
                (owner_id,),
            ) as cursor:
                rows = await cursor.fetchall()
            await tx.execute("DELETE FROM documents WHERE owner_id = ?", (owner_id,))
        removed: dict[Collection, list[PointId]] = {}
        for row in rows:
            removed.setdefault(Collection(row[0]), []).append(PointId(row[1]))
        return list(removed.items())

    async def document_ids(self) -> set[DocumentId]:
        """Every stored document id (the repair job compares them with the upload folders)."""
        rows = await self._db.fetch_all("SELECT id FROM documents")
        return {DocumentId(row[0]) for row in rows}

    async def counts(self) -> dict[str, int]:
        """Totals for `lore stats`."""
        row = await self._db.fetch_one(
            "SELECT"
            " (SELECT COUNT(*) FROM documents WHERE owner_id IS NULL) AS shared_documents,"
            " (SELECT COUNT(*) FROM documents WHERE owner_id IS NOT NULL) AS private_documents,"
            " (SELECT COUNT(*) FROM chunks) AS chunks,"
            " (SELECT COUNT(*) FROM chunks WHERE vector_status = 'pending') AS pending_chunks,"
            " (SELECT COUNT(*) FROM users) AS users"
        )
        assert row is not None  # noqa: S101 - an aggregate query always returns a row
        return {key: int(row[key]) for key in row.keys()}  # noqa: SIM118 - sqlite3.Row
