"""MCP access tokens in SQLite: issued (only their SHA-256 is kept), listed, revoked, and
verified against a presented token in constant time.

A token reads `lore_<id>_<secret>`: the id is public (it names the token in lists and logs)
and selects the row; the secret is 256 random bits. The stored hash covers the whole token,
so the database alone never yields a usable token.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from storage.code_hashes import code_hash, same_hash
from storage.database import Database, Row
from storage.ids import UserId
from storage.timestamps import utc_iso

__all__ = ["TOKEN_PREFIX", "IssuedToken", "McpToken", "McpTokenRepository"]

TOKEN_PREFIX = "lore_"  # noqa: S105 - how every token starts, not a secret
_TOKEN = re.compile(r"lore_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")


@dataclass(frozen=True, slots=True)
class McpToken:
    """A token as stored: never the secret."""

    id: str
    user_id: UserId
    name: str
    shared_only: bool
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class IssuedToken:
    """A new token: `token` is shown once and is not stored anywhere."""

    token: str
    record: McpToken


def _token(row: Row) -> McpToken:
    revoked = row["revoked_at"]
    return McpToken(
        id=row["id"],
        user_id=UserId(row["user_id"]),
        name=row["name"],
        shared_only=bool(row["shared_only"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        revoked_at=datetime.fromisoformat(revoked) if revoked is not None else None,
    )


class McpTokenRepository:
    """Issues, lists, revokes and verifies tokens."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def issue(
        self, user_id: UserId, name: str, *, shared_only: bool, now: datetime
    ) -> IssuedToken:
        """A new token for `user_id`; the returned secret exists nowhere else."""
        token_id = secrets.token_hex(6)
        token = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(32)}"
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO mcp_tokens (id, user_id, name, secret_hash, shared_only, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (token_id, user_id, name, code_hash(token), int(shared_only), utc_iso(now)),
            )
        record = McpToken(token_id, user_id, name, shared_only, now, None)
        return IssuedToken(token, record)

    async def active(self, user_id: UserId) -> list[McpToken]:
        """The user's tokens that still work, oldest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM mcp_tokens WHERE user_id = ? AND revoked_at IS NULL"
            " ORDER BY created_at, id",
            (user_id,),
        )
        return [_token(row) for row in rows]

    async def get_active(self, token_id: str) -> McpToken | None:
        """A token that still works, by its public id."""
        row = await self._db.fetch_one(
            "SELECT * FROM mcp_tokens WHERE id = ? AND revoked_at IS NULL", (token_id,)
        )
        return _token(row) if row is not None else None

    async def revoke(self, user_id: UserId, token_ids: list[str], *, now: datetime) -> int:
        """Revoke these tokens of `user_id` (others' ids are ignored); how many were revoked."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE mcp_tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL"
                " AND id IN (SELECT value FROM json_each(?))",
                (utc_iso(now), user_id, json.dumps(token_ids)),
            )
            return cursor.rowcount

    async def verify(self, token: str) -> McpToken | None:
        """The working token `token` names, if its secret matches (compared in constant time
        as hashes); None for anything else."""
        match = _TOKEN.fullmatch(token)
        if match is None:
            return None
        row = await self._db.fetch_one(
            "SELECT * FROM mcp_tokens WHERE id = ? AND revoked_at IS NULL", (match.group(1),)
        )
        if row is None or not same_hash(token, str(row["secret_hash"])):
            return None
        return _token(row)
