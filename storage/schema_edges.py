"""Schema steps 8 and on: one ledger of handled platform events, chat threads on approvals
and digests, counted attempts, injection scores on chunks. Released steps are never edited;
add new ones at the end."""

from __future__ import annotations

import aiosqlite

from storage.schema_core import execute_statements

__all__ = [
    "add_chat_threads",
    "add_chunk_injection_score",
    "create_attempts",
    "create_processed_events",
]


async def create_processed_events(db: aiosqlite.Connection) -> None:
    """One de-duplication ledger for every edge, keyed by (platform, event id); Telegram's
    handled update ids are carried over, then its own table goes."""
    await execute_statements(
        db,
        """
        CREATE TABLE processed_events (
            platform TEXT NOT NULL,
            event_id TEXT NOT NULL,
            received_at TEXT NOT NULL,
            handled_at TEXT,
            PRIMARY KEY (platform, event_id)
        );
        CREATE INDEX processed_events_received ON processed_events(received_at);
        INSERT INTO processed_events (platform, event_id, received_at, handled_at)
            SELECT 'telegram', CAST(update_id AS TEXT), received_at, handled_at
            FROM telegram_updates;
        DROP TABLE telegram_updates
        """,
    )


async def add_chat_threads(db: aiosqlite.Connection) -> None:
    """Where a request or a digest belongs: the chat's thread (Slack thread, Discord thread,
    Telegram topic), and for approvals whether the chat was a group. Existing approvals get
    `is_group = 1`: they were always resumed as group turns (shared knowledge only), so the
    backfill keeps them failing closed; existing rows have no thread."""
    await execute_statements(
        db,
        """
        ALTER TABLE pending_approvals ADD COLUMN chat_thread TEXT;
        ALTER TABLE pending_approvals ADD COLUMN is_group INTEGER NOT NULL DEFAULT 1
            CHECK (is_group IN (0, 1));
        UPDATE pending_approvals SET is_group = 1;
        ALTER TABLE digest_schedules ADD COLUMN chat_thread TEXT
        """,
    )


async def create_attempts(db: aiosqlite.Connection) -> None:
    """Attempts counted per key over a sliding window (wrong link or invite codes, digests
    on demand): a new table, nothing to backfill."""
    await execute_statements(
        db,
        """
        CREATE TABLE attempts (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL,
            at TEXT NOT NULL
        );
        CREATE INDEX attempts_key_at ON attempts(key, at)
        """,
    )


async def add_chunk_injection_score(db: aiosqlite.Connection) -> None:
    """How much a chunk reads like instructions to an AI (graphs.guards: 1.0 would be refused
    as a message, 0.5 hardened). Storage cannot run the scorer, so existing chunks are
    backfilled with NULL, which means "not scored yet" to every reader: retrieval scores
    such a chunk when it is shown, and the re-index job scores them all and writes the
    scores back (graphs.ingest.repair). No chunk is hidden or treated as clean meanwhile."""
    await execute_statements(
        db,
        """
        ALTER TABLE chunks ADD COLUMN injection_score REAL;
        UPDATE chunks SET injection_score = NULL;
        CREATE INDEX chunks_unscored ON chunks(document_id) WHERE injection_score IS NULL
        """,
    )
