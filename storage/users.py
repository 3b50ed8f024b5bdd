"""Users and their platform identities: who a message comes from, as one `user_id`."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from enum import StrEnum

from storage.database import Database, Row
from storage.ids import UserId, new_user_id
from storage.timestamps import now_iso

__all__ = ["Role", "User", "UserRepository"]


class Role(StrEnum):
    """What a user may do."""

    OWNER = "owner"
    MEMBER = "member"


@dataclass(frozen=True, slots=True)
class User:
    """A person known to Lore."""

    id: UserId
    display_name: str
    role: Role
    timezone: str | None
    language: str | None


def _user(row: Row) -> User:
    return User(
        id=UserId(row["id"]),
        display_name=row["display_name"],
        role=Role(row["role"]),
        timezone=row["timezone"],
        language=row["language"],
    )


class UserRepository:
    """Reads and writes users and identities."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def by_identity(self, platform: str, platform_user_id: str) -> User | None:
        """The user behind a platform identity, if registered."""
        row = await self._db.fetch_one(
            "SELECT u.* FROM users u JOIN identities i ON i.user_id = u.id"
            " WHERE i.platform = ? AND i.platform_user_id = ?",
            (platform, platform_user_id),
        )
        return _user(row) if row is not None else None

    async def get(self, user_id: UserId) -> User | None:
        """One user by id."""
        row = await self._db.fetch_one("SELECT * FROM users WHERE id = ?", (user_id,))
        return _user(row) if row is not None else None

    async def register(
        self, platform: str, platform_user_id: str, display_name: str, role: Role
    ) -> User:
        """Create a user with this identity, or return the one that already has it."""
        existing = await self.by_identity(platform, platform_user_id)
        if existing is not None:
            return existing
        user_id = new_user_id()
        created = now_iso()
        try:
            async with self._db.transaction() as tx:
                await tx.execute(
                    "INSERT INTO users (id, display_name, role, created_at) VALUES (?, ?, ?, ?)",
                    (user_id, display_name, role.value, created),
                )
                await tx.execute(
                    "INSERT INTO identities (platform, platform_user_id, user_id, created_at)"
                    " VALUES (?, ?, ?, ?)",
                    (platform, platform_user_id, user_id, created),
                )
        except sqlite3.IntegrityError:
            # Another task registered the same identity first; theirs wins.
            winner = await self.by_identity(platform, platform_user_id)
            if winner is None:
                raise
            return winner
        return User(user_id, display_name, role, None, None)

    async def set_timezone(self, user_id: UserId, timezone: str | None) -> bool:
        """Store the user's IANA timezone name (None clears it); False if no such user."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE users SET timezone = ? WHERE id = ?", (timezone, user_id)
            )
            return cursor.rowcount == 1

    async def set_language(self, user_id: UserId, language: str | None) -> bool:
        """Store the user's preferred language tag (None clears it); False if no such user."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute(
                "UPDATE users SET language = ? WHERE id = ?", (language, user_id)
            )
            return cursor.rowcount == 1

    async def with_role(self, role: Role) -> list[User]:
        """Every user with this role, oldest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM users WHERE role = ? ORDER BY created_at, id", (role.value,)
        )
        return [_user(row) for row in rows]

    async def owners(self) -> list[User]:
        """Every owner (who gets approval requests), oldest first."""
        return await self.with_role(Role.OWNER)
