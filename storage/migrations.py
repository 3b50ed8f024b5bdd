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


async def _create_agent_tables(db: aiosqlite.Connection) -> None:
    # documents.pinned puts a shared document into every prompt. Nothing was pinned
    # before this step, so the default 0 is the correct backfill for existing rows.
    # invites.used_by has no foreign key on purpose: deleting the user who redeemed a
    # code must not make it redeemable again. budget_ledger has no foreign keys
    # either: money spent stays spent when a user or a turn is deleted.
    # citation_events.turn_id has none because events are written before the turn's
    # row (turn_log is written when the turn ends).
    await _execute_statements(
        db,
        """
        ALTER TABLE documents ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0
            CHECK (pinned IN (0, 1));
        CREATE INDEX documents_pinned ON documents(collection) WHERE pinned = 1;
        CREATE TABLE invites (
            code TEXT PRIMARY KEY,
            created_by TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('owner', 'member')),
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_by TEXT,
            used_at TEXT,
            CHECK ((used_by IS NULL) = (used_at IS NULL))
        );
        CREATE TABLE pending_approvals (
            id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL,
            requester_user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            chat_id TEXT NOT NULL,
            platform TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            arguments_json TEXT NOT NULL,
            summary TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            decided_by TEXT REFERENCES users(id) ON DELETE SET NULL,
            decided_at TEXT,
            result_json TEXT,
            executed_at TEXT
        );
        CREATE INDEX pending_approvals_open ON pending_approvals(expires_at)
            WHERE status = 'pending';
        CREATE TABLE guard_incidents (
            id INTEGER PRIMARY KEY,
            user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            guard TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX guard_incidents_created ON guard_incidents(created_at);
        CREATE TABLE turn_log (
            id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            chat_id TEXT NOT NULL,
            platform TEXT NOT NULL,
            outcome TEXT NOT NULL
                CHECK (outcome IN ('answered', 'refused', 'error', 'awaiting_approval')),
            model TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL CHECK (prompt_tokens >= 0),
            completion_tokens INTEGER NOT NULL CHECK (completion_tokens >= 0),
            cached_tokens INTEGER NOT NULL CHECK (cached_tokens >= 0),
            cost_micros INTEGER NOT NULL CHECK (cost_micros >= 0),
            latency_ms INTEGER NOT NULL CHECK (latency_ms >= 0),
            node_latency_json TEXT NOT NULL DEFAULT '{}',
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX turn_log_user_created ON turn_log(user_id, created_at);
        CREATE TABLE unanswered_questions (
            id INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            chat_id TEXT NOT NULL,
            question TEXT NOT NULL,
            reason TEXT NOT NULL,
            created_at TEXT NOT NULL,
            resolved_at TEXT
        );
        CREATE INDEX unanswered_open ON unanswered_questions(created_at)
            WHERE resolved_at IS NULL;
        CREATE TABLE citation_events (
            id INTEGER PRIMARY KEY,
            turn_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('dropped_citation', 'grounding_risk')),
            detail TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX citation_events_turn ON citation_events(turn_id);
        CREATE TABLE feedback (
            turn_id TEXT NOT NULL REFERENCES turn_log(id) ON DELETE CASCADE,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            value INTEGER NOT NULL CHECK (value IN (-1, 1)),
            created_at TEXT NOT NULL,
            PRIMARY KEY (turn_id, user_id)
        );
        CREATE TABLE budget_ledger (
            id INTEGER PRIMARY KEY,
            day TEXT NOT NULL,
            purpose TEXT NOT NULL,
            reserved_micros INTEGER NOT NULL CHECK (reserved_micros >= 0),
            settled_micros INTEGER CHECK (settled_micros >= 0),
            status TEXT NOT NULL DEFAULT 'reserved'
                CHECK (status IN ('reserved', 'settled', 'released', 'abandoned')),
            created_at TEXT NOT NULL,
            closed_at TEXT,
            CHECK ((status = 'settled') = (settled_micros IS NOT NULL))
        );
        CREATE INDEX budget_ledger_day ON budget_ledger(day, status);
        CREATE TABLE eval_runs (
            id TEXT PRIMARY KEY,
            suite TEXT NOT NULL,
            provider TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            passed INTEGER,
            total INTEGER,
            score REAL
        );
        CREATE INDEX eval_runs_suite ON eval_runs(suite, started_at);
        CREATE TABLE eval_cases (
            run_id TEXT NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
            case_id TEXT NOT NULL,
            passed INTEGER NOT NULL CHECK (passed IN (0, 1)),
            expected TEXT NOT NULL,
            actual TEXT NOT NULL,
            detail TEXT NOT NULL,
            PRIMARY KEY (run_id, case_id)
        )
        """,
    )


async def _create_telegram_updates(db: aiosqlite.Connection) -> None:
    # A new table: nothing to backfill. handled_at NULL = received, not (yet) answered.
    await _execute_statements(
        db,
        """
        CREATE TABLE telegram_updates (
            update_id INTEGER PRIMARY KEY,
            received_at TEXT NOT NULL,
            handled_at TEXT
        );
        CREATE INDEX telegram_updates_received ON telegram_updates(received_at)
        """,
    )


async def _create_digest_tables(db: aiosqlite.Connection) -> None:
    # New tables only: nothing to backfill (digests are off until a member turns them on).
    # A delivery row exists only once the platform returned a message id; its primary key
    # makes "one digest per member per day" hold even if a send is retried.
    await _execute_statements(
        db,
        """
        CREATE TABLE digest_schedules (
            user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            local_time TEXT NOT NULL CHECK (local_time GLOB '[0-2][0-9]:[0-5][0-9]'),
            timezone TEXT NOT NULL,
            quiet_days INTEGER NOT NULL DEFAULT 0 CHECK (quiet_days IN (0, 1)),
            enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
            last_sent_day TEXT,
            failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
            retry_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX digest_schedules_enabled ON digest_schedules(enabled) WHERE enabled = 1;
        CREATE TABLE digest_deliveries (
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            day TEXT NOT NULL,
            message_id TEXT NOT NULL,
            sent_at TEXT NOT NULL,
            PRIMARY KEY (user_id, day)
        );
        CREATE INDEX documents_owner_created ON documents(IFNULL(owner_id, ''), created_at)
        """,
    )


async def _create_watched_sources(db: aiosqlite.Connection) -> None:
    # New tables only: nothing to backfill. A new source is due at once (next_check_at
    # = added_at). watched_entries.document_id is NULL for an entry that could not be
    # saved for good (refused link) and becomes NULL if its document is deleted.
    await _execute_statements(
        db,
        """
        CREATE TABLE watched_sources (
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            kind TEXT CHECK (kind IN ('feed', 'page')),
            title TEXT,
            added_by TEXT REFERENCES users(id) ON DELETE SET NULL,
            added_at TEXT NOT NULL,
            etag TEXT,
            last_modified TEXT,
            last_checked_at TEXT,
            last_status TEXT
                CHECK (last_status IN ('ok', 'not_modified', 'failed', 'retry_later')),
            last_error TEXT,
            next_check_at TEXT NOT NULL,
            failures INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0)
        );
        CREATE INDEX watched_sources_due ON watched_sources(next_check_at);
        CREATE TABLE watched_entries (
            source_id INTEGER NOT NULL REFERENCES watched_sources(id) ON DELETE CASCADE,
            entry_key TEXT NOT NULL,
            document_id TEXT REFERENCES documents(id) ON DELETE SET NULL,
            seen_at TEXT NOT NULL,
            PRIMARY KEY (source_id, entry_key)
        );
        CREATE INDEX watched_entries_seen ON watched_entries(seen_at)
        """,
    )


async def _create_link_codes(db: aiosqlite.Connection) -> None:
    # A new table only: nothing to backfill. A code links one more identity to user_id;
    # used_* say which identity used it (no foreign key: the identity row may go later).
    await _execute_statements(
        db,
        """
        CREATE TABLE link_codes (
            code TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT,
            used_platform TEXT,
            used_platform_user_id TEXT,
            CHECK ((used_at IS NULL) = (used_platform IS NULL))
        );
        CREATE INDEX link_codes_user ON link_codes(user_id)
        """,
    )


async def _add_chunk_injection_score(db: aiosqlite.Connection) -> None:
    # How much a chunk reads like instructions to an AI (graphs.guards: 1.0 would be refused
    # as a message, 0.5 hardened). Storage cannot run the scorer, so existing chunks are
    # backfilled with NULL, which means "not scored yet" to every reader: retrieval scores
    # such a chunk when it is shown, and the re-index job scores them all and writes the
    # scores back (graphs.ingest.repair). No chunk is hidden or treated as clean meanwhile.
    await _execute_statements(
        db,
        """
        ALTER TABLE chunks ADD COLUMN injection_score REAL;
        UPDATE chunks SET injection_score = NULL;
        CREATE INDEX chunks_unscored ON chunks(document_id) WHERE injection_score IS NULL
        """,
    )


MIGRATIONS: Sequence[Migration] = (
    Migration(1, "users, identities, documents, chunks", _create_base_tables),
    Migration(2, "documents.collection, backfilled from owner", _add_document_collection),
    Migration(
        3,
        "documents.pinned (backfilled 0), invites, approvals, incidents, turns, budget, evals",
        _create_agent_tables,
    ),
    Migration(4, "telegram_updates: handled update ids", _create_telegram_updates),
    Migration(
        5,
        "digest_schedules, digest_deliveries (new, no backfill), documents by owner and time",
        _create_digest_tables,
    ),
    Migration(6, "watched_sources, watched_entries (new, no backfill)", _create_watched_sources),
    Migration(7, "link_codes: link another identity to a user (new)", _create_link_codes),
    Migration(
        8,
        "chunks.injection_score (NULL = not scored yet, scored by re-index and on read)",
        _add_chunk_injection_score,
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
