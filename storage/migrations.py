"""Append-only, numbered schema migrations recorded in `schema_migrations`.

Rules: never edit or reorder a released migration; add a new one at the end. A
migration that adds a column which drives behaviour fills it for existing rows in
the same step (DESIGN.md invariant 7). Each migration and its record commit together.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import aiosqlite

__all__ = ["MIGRATIONS", "Migration", "apply_migrations", "schema_version"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its number, a name, and the function that performs it."""

    version: int
    name: str
    apply: Callable[[aiosqlite.Connection], Awaitable[None]]


async def _execute_statements(db: aiosqlite.Connection, script: str) -> None:
    # Not executescript(): it commits first, which would break the migration's atomicity.
    for statement in script.split(";"):
        if statement.strip():
            await db.execute(statement)


async def _create_base_tables(db: aiosqlite.Connection) -> None:
    await _execute_statements(
        db,
        """
        CREATE TABLE users (
            id TEXT PRIMARY KEY,
            display_name TEXT NOT NULL,
            role TEXT NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'member')),
            timezone TEXT,
            language TEXT,
            created_at TEXT NOT NULL
        );
        CREATE TABLE identities (
            platform TEXT NOT NULL,
            platform_user_id TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at TEXT NOT NULL,
            PRIMARY KEY (platform, platform_user_id)
        );
        CREATE INDEX identities_user ON identities(user_id);
        CREATE TABLE documents (
            id TEXT PRIMARY KEY,
            owner_id TEXT REFERENCES users(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            source_type TEXT NOT NULL CHECK (source_type IN ('note', 'file', 'url')),
            source_ref TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            original_path TEXT NOT NULL,
            format TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('indexing', 'ready')),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX documents_owner_hash ON documents(IFNULL(owner_id, ''), content_hash);
        CREATE INDEX documents_owner_source ON documents(IFNULL(owner_id, ''), source_ref);
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            chunk_index INTEGER NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            heading_path TEXT NOT NULL DEFAULT '[]',
            token_count INTEGER NOT NULL,
            point_id TEXT NOT NULL UNIQUE,
            vector_status TEXT NOT NULL CHECK (vector_status IN ('pending', 'indexed')),
            UNIQUE (document_id, hash)
        );
        CREATE INDEX chunks_pending ON chunks(vector_status) WHERE vector_status = 'pending';
        """,
    )


async def _add_document_collection(db: aiosqlite.Connection) -> None:
    # Which Qdrant collection holds a document's vectors. Search, repair and
    # /sources filter on it, so existing rows get it in this same step.
    await db.execute(
        "ALTER TABLE documents ADD COLUMN collection TEXT NOT NULL DEFAULT ''"
        " CHECK (collection IN ('', 'knowledge', 'private'))"
    )
    await db.execute(
        "UPDATE documents SET collection ="
        " CASE WHEN owner_id IS NULL THEN 'knowledge' ELSE 'private' END"
    )
    await db.execute("CREATE INDEX documents_collection ON documents(collection)")


MIGRATIONS: Sequence[Migration] = (
    Migration(1, "users, identities, documents, chunks", _create_base_tables),
    Migration(2, "documents.collection, backfilled from owner", _add_document_collection),
)


async def schema_version(db: aiosqlite.Connection) -> int:
    """Return the highest applied migration number (0 for a new database)."""
    await db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    async with db.execute("SELECT IFNULL(MAX(version), 0) FROM schema_migrations") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row is not None else 0


async def apply_migrations(db: aiosqlite.Connection, migrations: Sequence[Migration]) -> int:
    """Apply every migration newer than the database, each in its own transaction."""
    versions = [migration.version for migration in migrations]
    if versions != sorted(set(versions)):
        raise ValueError("Migrations must have unique, increasing versions")
    current = await schema_version(db)
    for migration in migrations:
        if migration.version <= current:
            continue
        await db.execute("BEGIN IMMEDIATE")
        try:
            await migration.apply(db)
            await db.execute(
                "INSERT INTO schema_migrations (version, name, applied_at)"
                " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                (migration.version, migration.name),
            )
        except BaseException:
            await db.execute("ROLLBACK")
            raise
        await db.execute("COMMIT")
        logger.info("Applied migration %d: %s", migration.version, migration.name)
        current = migration.version
    return current
