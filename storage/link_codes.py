"""Link codes: a registered person asks for one, and one identity (on any platform) redeems it,
once, before it expires, to become another identity of the same user.

Only the code's SHA-256 is stored (`storage.code_hashes`): the code is shown once, to the
person who asked for it. Redeeming runs in one write transaction (`BEGIN IMMEDIATE`): the
code is checked, the identity is checked, the code is marked used and the identity row is
inserted together, so a code links at most one identity and an identity is never moved
between users. A code has about 40 bits and lives 15 minutes, and wrong codes lock an
account out (`bot.limits`): its hash is no shortcut to a working code.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from storage.code_hashes import code_hash, same_hash
from storage.database import Database, Row
from storage.ids import UserId
from storage.timestamps import utc_iso

__all__ = [
    "LINK_CODE_ALPHABET",
    "LinkCode",
    "LinkCodeRepository",
    "LinkOutcome",
    "LinkResult",
    "display_code",
    "new_link_code",
    "normalize_code",
]

# No 0/O, 1/I/L: a code is read on one screen and typed on another. 8 of 31 characters
# is ~40 bits, enough for something that lives 15 minutes and is used once.
LINK_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
LINK_CODE_LENGTH = 8
_NOT_CODE = re.compile(r"[^0-9A-Z]")

LinkOutcome = Literal["linked", "already_linked", "taken", "invalid", "refused"]


@dataclass(frozen=True, slots=True)
class LinkCode:
    """A one-time code that attaches another identity to `user_id` until `expires_at`
    (`code` as the person typed or was shown it; the database holds its hash only)."""

    code: str
    user_id: UserId
    created_at: datetime
    expires_at: datetime

    @property
    def display(self) -> str:
        """The code as people read it (`ABCD-EFGH`)."""
        return display_code(self.code)


@dataclass(frozen=True, slots=True)
class LinkResult:
    """What redeeming did: `linked`; `already_linked` (this identity is already that user's);
    `taken` (it belongs to another user, nothing changed); `invalid` (unknown, used or expired);
    `refused` (the caller's rules forbid this link; never produced by the repository).
    """

    outcome: LinkOutcome
    user_id: UserId | None = None


def new_link_code() -> str:
    """A fresh random code in canonical form (upper case, no separator)."""
    return "".join(secrets.choice(LINK_CODE_ALPHABET) for _ in range(LINK_CODE_LENGTH))


def normalize_code(typed: str) -> str:
    """The canonical form of a code as typed: case and separators do not matter."""
    return _NOT_CODE.sub("", typed.upper())


def display_code(code: str) -> str:
    """`ABCDEFGH` as `ABCD-EFGH`."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def _link_code(row: Row, code: str) -> LinkCode:
    return LinkCode(
        code=code,
        user_id=UserId(row["user_id"]),
        created_at=datetime.fromisoformat(row["created_at"]),
        expires_at=datetime.fromisoformat(row["expires_at"]),
    )


class LinkCodeRepository:
    """Creates link codes and redeems them into identities."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def create(self, user_id: UserId, *, now: datetime, ttl: timedelta) -> LinkCode:
        """Store a fresh code that links an identity to `user_id` until `now + ttl`."""
        if ttl <= timedelta(0):
            raise ValueError("A link code must live for a positive time")
        code = LinkCode(new_link_code(), user_id, now, now + ttl)
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO link_codes (code_hash, user_id, created_at, expires_at)"
                " VALUES (?, ?, ?, ?)",
                (code_hash(code.code), user_id, utc_iso(code.created_at), utc_iso(code.expires_at)),
            )
        return code

    async def usable(self, code: str, *, now: datetime) -> LinkCode | None:
        """The code (as typed) if it is known, unused and not expired; None otherwise."""
        typed = normalize_code(code)
        row = await self._db.fetch_one(
            "SELECT * FROM link_codes WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?",
            (code_hash(typed), utc_iso(now)),
        )
        if row is None or not same_hash(typed, row["code_hash"]):
            return None
        return _link_code(row, typed)

    async def redeem(
        self, code: str, *, platform: str, platform_user_id: str, now: datetime
    ) -> LinkResult:
        """Attach the identity to the code's user and use the code up, atomically.

        Only `linked` uses the code; every other outcome leaves the code and the
        identities as they were.
        """
        at = utc_iso(now)
        hashed = code_hash(normalize_code(code))
        async with self._db.transaction() as tx:
            async with tx.execute(
                "SELECT user_id, code_hash FROM link_codes WHERE code_hash = ?"
                " AND used_at IS NULL AND expires_at > ?",
                (hashed, at),
            ) as cursor:
                claimed = await cursor.fetchone()
            if claimed is None or not same_hash(normalize_code(code), claimed["code_hash"]):
                return LinkResult("invalid")
            user_id = UserId(claimed["user_id"])
            async with tx.execute(
                "SELECT user_id FROM identities WHERE platform = ? AND platform_user_id = ?",
                (platform, platform_user_id),
            ) as cursor:
                existing = await cursor.fetchone()
            if existing is not None:
                same = existing["user_id"] == user_id
                return LinkResult(
                    "already_linked" if same else "taken", UserId(existing["user_id"])
                )
            await tx.execute(
                "UPDATE link_codes SET used_at = ?, used_platform = ?, used_platform_user_id = ?"
                " WHERE code_hash = ?",
                (at, platform, platform_user_id, hashed),
            )
            await tx.execute(
                "INSERT INTO identities (platform, platform_user_id, user_id, created_at)"
                " VALUES (?, ?, ?, ?)",
                (platform, platform_user_id, user_id, at),
            )
        return LinkResult("linked", user_id)
