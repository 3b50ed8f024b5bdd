"""How a document and its chunks are written, inside the one transaction that stores them:
the document's row (new or updated, a duplicate of another's content refused), its chunks
(new ones pending their vectors) and each document's status from its chunks."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

import aiosqlite

from storage.document_records import DocumentRecord, DuplicateContentError, NewChunk
from storage.ids import PointId

__all__ = ["insert_chunks", "insert_document", "refresh_status", "update_document"]


async def insert_document(tx: aiosqlite.Connection, document: DocumentRecord) -> None:
    """A new document's row; a second document with its content is refused."""
    try:
        await tx.execute(
            "INSERT INTO documents (id, owner_id, title, source_type, source_ref,"
            " content_hash, original_path, format, status, created_at, updated_at,"
            " collection, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'indexing', ?, ?, ?, ?)",
            (
                document.id,
                document.owner_id,
                document.title,
                document.source_type.value,
                document.source_ref,
                document.content_hash,
                document.original_path,
                document.format,
                document.created_at,
                document.updated_at,
                document.collection.value,
                document.language,
            ),
        )
    except sqlite3.IntegrityError as exc:
        raise DuplicateContentError(document.content_hash) from exc


async def update_document(
    tx: aiosqlite.Connection, document: DocumentRecord, chunks: Sequence[NewChunk]
) -> list[PointId]:
    """An existing document's row updated, its chunks no longer present deleted; the
    point ids of those chunks."""
    try:
        await tx.execute(
            "UPDATE documents SET title = ?, content_hash = ?, original_path = ?,"
            " format = ?, updated_at = ?, language = ? WHERE id = ?",
            (
                document.title,
                document.content_hash,
                document.original_path,
                document.format,
                document.updated_at,
                document.language,
                document.id,
            ),
        )
    except sqlite3.IntegrityError as exc:
        raise DuplicateContentError(document.content_hash) from exc
    keep = json.dumps([chunk.hash for chunk in chunks])
    async with tx.execute(
        "SELECT point_id FROM chunks WHERE document_id = ?"
        " AND hash NOT IN (SELECT value FROM json_each(?))",
        (document.id, keep),
    ) as cursor:
        removed = [PointId(row[0]) for row in await cursor.fetchall()]
    await tx.execute(
        "DELETE FROM chunks WHERE document_id = ? AND hash NOT IN (SELECT value FROM json_each(?))",
        (document.id, keep),
    )
    return removed


async def insert_chunks(
    tx: aiosqlite.Connection, document: DocumentRecord, chunks: Sequence[NewChunk]
) -> None:
    """A document's chunks, new ones `pending`; a chunk already stored keeps its vector."""
    await tx.executemany(
        "INSERT INTO chunks (document_id, chunk_index, text, hash, heading_path,"
        " token_count, point_id, vector_status, injection_score)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)"
        " ON CONFLICT (document_id, hash) DO UPDATE SET chunk_index = excluded.chunk_index,"
        " heading_path = excluded.heading_path,"
        " injection_score = COALESCE(excluded.injection_score, chunks.injection_score)",
        [
            (
                document.id,
                chunk.index,
                chunk.text,
                chunk.hash,
                json.dumps(list(chunk.heading_path)),
                chunk.token_count,
                chunk.point_id,
                chunk.injection_score,
            )
            for chunk in chunks
        ],
    )


async def refresh_status(tx: aiosqlite.Connection, document_ids: Iterable[str]) -> None:
    """Each document is `indexing` while a chunk of it is pending, else `ready`."""
    ids = json.dumps(sorted(set(document_ids)))
    await tx.execute(
        "UPDATE documents SET status = CASE WHEN EXISTS (SELECT 1 FROM chunks c"
        " WHERE c.document_id = documents.id AND c.vector_status = 'pending')"
        " THEN 'indexing' ELSE 'ready' END"
        " WHERE id IN (SELECT value FROM json_each(?))",
        (ids,),
    )
