"""Schema step 10: access tokens for MCP clients (other agents reading one member's knowledge).
Released steps are never edited; add new ones at the end."""

from __future__ import annotations

import aiosqlite

from storage.schema_core import execute_statements

__all__ = ["create_mcp_tokens"]


async def create_mcp_tokens(db: aiosqlite.Connection) -> None:
    """One row per token: its public id, the member it speaks for, the SHA-256 of the whole
    token (never the token itself), whether it reaches the shared knowledge only, and when it
    was revoked. A new table only: nothing to backfill."""
    await execute_statements(
        db,
        """
        CREATE TABLE mcp_tokens (
            id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            shared_only INTEGER NOT NULL CHECK (shared_only IN (0, 1)),
            created_at TEXT NOT NULL,
            revoked_at TEXT
        );
        CREATE INDEX mcp_tokens_user ON mcp_tokens(user_id) WHERE revoked_at IS NULL
        """,
    )
