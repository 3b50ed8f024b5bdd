"""Schema step: invite and link codes kept as their SHA-256 only (existing codes hashed in the
same step, so a code given out before keeps working)."""

from __future__ import annotations

import aiosqlite

from storage.code_hashes import code_hash

__all__ = ["hash_stored_codes"]


async def hash_stored_codes(db: aiosqlite.Connection) -> None:
    """`invites.code` and `link_codes.code` become `code_hash`, backfilled from the codes."""
    for table in ("invites", "link_codes"):
        await db.execute(f"ALTER TABLE {table} RENAME COLUMN code TO code_hash")
        async with db.execute(f"SELECT code_hash FROM {table}") as cursor:  # noqa: S608
            codes = [str(row[0]) for row in await cursor.fetchall()]
        await db.executemany(
            f"UPDATE {table} SET code_hash = ? WHERE code_hash = ?",  # noqa: S608
            [(code_hash(code), code) for code in codes],
        )
