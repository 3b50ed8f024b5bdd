"""Invite codes: an owner creates one, one person redeems it, once, before it expires.

Only the code's SHA-256 is stored (`storage.code_hashes`): the code is shown once, when it is
made, and a database or backup alone admits nobody. Redeeming is a single conditional UPDATE
(`used_at IS NULL AND expires_at > now`) on the hash, so of two people redeeming the same code
at the same moment exactly one wins; the row found is checked against the code in constant
time.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from storage.code_hashes import code_hash, same_hash
from storage.database import Database, Row
from storage.ids import InviteCode, UserId, new_invite_code, new_user_id
from storage.timestamps import utc_iso
from storage.users import Role, User, UserRepository

__all__ = ["Invite", "InviteRepository", "IssuedInvite"]

_CLAIM = (
    "UPDATE invites SET used_by = ?, used_at = ?"
    " WHERE code_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING *"
)


@dataclass(frozen=True, slots=True)
class Invite:
    """One invite, as stored (the code's hash, never the code), and who, if anyone, used it."""

    code_hash: str
    created_by: UserId
    role: Role
    created_at: datetime
    expires_at: datetime
    used_by: UserId | None
    used_at: datetime | None


@dataclass(frozen=True, slots=True)
class IssuedInvite:
    """A new invite: `code` is shown once and is not stored anywhere."""

    code: InviteCode
    invite: Invite

    @property
    def expires_at(self) -> datetime:
        """When the code stops working."""
        return self.invite.expires_at


def _invite(row: Row) -> Invite:
    return Invite(
        code_hash=str(row["code_hash"]),
        created_by=UserId(row["created_by"]),
        role=Role(row["role"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        expires_at=datetime.fromisoformat(row["expires_at"]),
        used_by=UserId(row["used_by"]) if row["used_by"] is not None else None,
        used_at=datetime.fromisoformat(row["used_at"]) if row["used_at"] is not None else None,
    )


class InviteRepository:
    """Creates, lists and redeems invite codes."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def create(
        self, created_by: UserId, role: Role, *, now: datetime, ttl: timedelta
    ) -> IssuedInvite:
        """Store (the hash of) a fresh code that `role` can redeem until `now + ttl`."""
        if ttl <= timedelta(0):
            raise ValueError("An invite must live for a positive time")
        code = new_invite_code()
        invite = Invite(
            code_hash=code_hash(code),
            created_by=created_by,
            role=role,
            created_at=now,
            expires_at=now + ttl,
            used_by=None,
            used_at=None,
        )
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO invites (code_hash, created_by, role, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    invite.code_hash,
                    created_by,
                    role.value,
                    utc_iso(invite.created_at),
                    utc_iso(invite.expires_at),
                ),
            )
        return IssuedInvite(code, invite)

    async def get(self, code: str) -> Invite | None:
        """The invite of a code, used or not, or None."""
        row = await self._db.fetch_one(
            "SELECT * FROM invites WHERE code_hash = ?", (code_hash(code),)
        )
        return _invite(row) if row is not None and same_hash(code, row["code_hash"]) else None

    async def outstanding(self, *, now: datetime) -> list[Invite]:
        """Invites nobody has used yet and that have not expired, newest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM invites WHERE used_at IS NULL AND expires_at > ?"
            " ORDER BY created_at DESC, code_hash",
            (utc_iso(now),),
        )
        return [_invite(row) for row in rows]

    async def redeem(self, code: str, user_id: UserId, *, now: datetime) -> Invite | None:
        """Mark the code used by an existing user; None if unknown, used or expired."""
        async with (
            self._db.transaction() as tx,
            tx.execute(_CLAIM, (user_id, utc_iso(now), code_hash(code), utc_iso(now))) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return _invite(rows[0]) if rows and same_hash(code, rows[0]["code_hash"]) else None

    async def register_with_invite(
        self,
        code: str,
        *,
        platform: str,
        platform_user_id: str,
        display_name: str,
        now: datetime,
    ) -> User | None:
        """Redeem the code and create the user it admits, with the invite's role, atomically.

        Returns None (and creates nobody) if the code is unknown, used or expired. If
        the identity is already registered, the code stays unused and that user is
        returned.
        """
        user_id = new_user_id()
        at = utc_iso(now)
        try:
            async with self._db.transaction() as tx:
                async with tx.execute(_CLAIM, (user_id, at, code_hash(code), at)) as cursor:
                    rows = list(await cursor.fetchall())
                if not rows or not same_hash(code, rows[0]["code_hash"]):
                    return None
                role = Role(rows[0]["role"])
                await tx.execute(
                    "INSERT INTO users (id, display_name, role, created_at) VALUES (?, ?, ?, ?)",
                    (user_id, display_name, role.value, at),
                )
                await tx.execute(
                    "INSERT INTO identities (platform, platform_user_id, user_id, created_at)"
                    " VALUES (?, ?, ?, ?)",
                    (platform, platform_user_id, user_id, at),
                )
        except sqlite3.IntegrityError:
            existing = await UserRepository(self._db).by_identity(platform, platform_user_id)
            if existing is None:
                raise
            return existing
        return User(user_id, display_name, role, None, None)
