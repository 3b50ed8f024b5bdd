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

from storage.schema_codes import hash_stored_codes
from storage.schema_core import (
    add_document_collection,
    create_agent_tables,
    create_base_tables,
    create_digest_tables,
    create_link_codes,
    create_telegram_updates,
    create_watched_sources,
)
from storage.schema_edges import (
    add_chat_threads,
    add_chunk_injection_score,
    create_attempts,
    create_processed_events,
)
from storage.schema_mcp import create_mcp_tokens
from storage.schema_media import add_document_language

__all__ = ["MIGRATIONS", "Migration", "apply_migrations", "schema_version"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its number, a name, and the function that performs it."""

    version: int
    name: str
    apply: Callable[[aiosqlite.Connection], Awaitable[None]]


MIGRATIONS: Sequence[Migration] = (
    Migration(1, "users, identities, documents, chunks", create_base_tables),
    Migration(2, "documents.collection, backfilled from owner", add_document_collection),
    Migration(
        3,
        "documents.pinned (backfilled 0), invites, approvals, incidents, turns, budget, evals",
        create_agent_tables,
    ),
    Migration(4, "telegram_updates: handled update ids", create_telegram_updates),
    Migration(
        5,
        "digest_schedules, digest_deliveries (new, no backfill), documents by owner and time",
        create_digest_tables,
    ),
    Migration(6, "watched_sources, watched_entries (new, no backfill)", create_watched_sources),
    Migration(7, "link_codes: link another identity to a user (new)", create_link_codes),
    Migration(
        8,
        "processed_events: handled events of every edge (telegram_updates carried over)",
        create_processed_events,
    ),
    Migration(
        9,
        "chat threads on approvals and digests; approvals.is_group (backfilled 1)",
        add_chat_threads,
    ),
    Migration(10, "attempts: counted per key over a window (new, no backfill)", create_attempts),
    Migration(
        11,
        "chunks.injection_score (NULL = not scored yet, scored by re-index and on read)",
        add_chunk_injection_score,
    ),
    Migration(12, "mcp_tokens: hashed access tokens for MCP clients (new)", create_mcp_tokens),
    Migration(
        13,
        "invites and link_codes keep codes as SHA-256 (code_hash, existing codes hashed)",
        hash_stored_codes,
    ),
    Migration(
        14,
        "documents.language: the language a document is in, backfilled from its first chunks",
        add_document_language,
    ),
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
    if versions != list(range(1, len(versions) + 1)):
        # A gap would let a database skip a migration added into it later.
        raise ValueError("Migrations must be numbered 1, 2, 3... with no gap")
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
