"""Row F of the third hardening round (issue 27): invite and link codes are stored as their
SHA-256, like MCP tokens: shown once, found nowhere on disk, and codes given out before the
upgrade keep working (the migration hashes them)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite

from bot.app import Lore
from bot.events import Identity
from storage.database import Database
from storage.invites import InviteRepository
from storage.link_codes import LinkCodeRepository
from storage.migrations import MIGRATIONS, apply_migrations
from tests.chat_turns import OWNER, invite, user_id

LATER = datetime(2027, 1, 1, tzinfo=UTC)


def on_disk(data_dir: Path) -> bytes:
    """Every byte of every SQLite file (databases and write-ahead logs) in `data_dir`."""
    return b"".join(path.read_bytes() for path in sorted(data_dir.glob("*.sqlite3*")))


async def test_row_f_invite_and_link_codes_are_kept_hashed_and_still_work(lore: Lore) -> None:
    created = await lore.bot.create_invite(OWNER)
    newcomer = Identity("telegram", "555", "Nina")
    mia = await invite(lore.bot, "mia")
    link = await lore.bot.create_link_code(mia)

    stored = {row["code_hash"] for row in await lore.database.fetch_all("SELECT * FROM invites")}
    links = {row["code_hash"] for row in await lore.database.fetch_all("SELECT * FROM link_codes")}
    assert hashlib.sha256(created.code.encode()).hexdigest() in stored
    assert links == {hashlib.sha256(link.code.encode()).hexdigest()}
    disk = on_disk(lore.settings.data_dir)
    assert created.code.encode() not in disk
    assert link.code.encode() not in disk

    assert (await lore.bot.redeem_invite(newcomer, created.code)).display_name == "Nina"
    other = Identity("slack", "U77", "Mia at work")
    assert (await lore.bot.link_identity(other, link.display)).startswith("Linked")
    assert await user_id(lore.bot, other) == await user_id(lore.bot, mia)


async def test_row_f_the_migration_hashes_codes_given_out_before_it(tmp_path: Path) -> None:
    path = tmp_path / "lore.sqlite3"
    async with aiosqlite.connect(path, isolation_level=None) as db:
        assert await apply_migrations(db, MIGRATIONS[:12]) == 12
        await db.execute(
            "INSERT INTO users (id, display_name, role, created_at)"
            " VALUES ('u1', 'Olivia', 'owner', 'now')"
        )
        await db.execute(
            "INSERT INTO invites (code, created_by, role, created_at, expires_at)"
            " VALUES ('old-invite-code', 'u1', 'member', '2026-01-01', '2099-01-01')"
        )
        await db.execute(
            "INSERT INTO link_codes (code, user_id, created_at, expires_at)"
            " VALUES ('ABCDEFGH', 'u1', '2026-01-01', '2099-01-01')"
        )

    async with Database(path) as database:
        hashes = [
            str(row[0])
            for row in await database.fetch_all(
                "SELECT code_hash FROM invites UNION ALL SELECT code_hash FROM link_codes"
            )
        ]
        assert hashes == [
            hashlib.sha256(b"old-invite-code").hexdigest(),
            hashlib.sha256(b"ABCDEFGH").hexdigest(),
        ]
        assert await LinkCodeRepository(database).usable("abcd-efgh", now=LATER) is not None
        user = await InviteRepository(database).register_with_invite(
            "old-invite-code", platform="telegram", platform_user_id="9", display_name="Ada",
            now=LATER - timedelta(days=1),
        )  # fmt: skip
        assert user is not None
        assert await InviteRepository(database).get("old-invite-code") is not None
        assert await InviteRepository(database).get("no-such-code") is None
