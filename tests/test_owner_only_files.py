"""Rows B and G of the third hardening round (issue 27): what Lore keeps on disk is the
owner's alone (invariant 13), and a restore takes back only what a backup writes."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import open_lore
from bot.app.core import backup_layout
from bot.backups import restore_into
from bot.errors import BackupRefusedError
from bot.settings import Settings, load_settings
from bot.sources import Source
from storage.private_files import secure_data_dir
from tests.chat_turns import ask, local_member, remember
from tests.conftest import SettingsFactory

PRIVATE_LINE = "My locker code is 4417 and the spare key is under the blue mat."


@contextmanager
def usual_umask() -> Iterator[None]:
    """The process creates files 0644 in 0755 folders, as under most logins."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def wider_than_owner(*roots: Path) -> dict[str, str]:
    """Every folder not 0700 and every file not 0600 under `roots` (links aside)."""
    found = {}
    for root in roots:
        for path in [root, *root.rglob("*")]:
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                continue
            wanted = 0o700 if stat.S_ISDIR(mode) else 0o600
            if stat.S_IMODE(mode) != wanted:
                found[str(path.relative_to(root.parent))] = f"{stat.S_IMODE(mode):04o}"
    return found


async def test_row_b_every_file_lore_writes_is_owner_only_also_in_a_data_dir_that_existed(
    make_settings: SettingsFactory,
    models_dir: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with usual_umask():
        data = tmp_path / "data"
        (data / "uploads").mkdir(parents=True)
        (data / "uploads" / "left-over.txt").write_text("from an older release")
        assert stat.S_IMODE(data.stat().st_mode) == 0o755
        backup = tmp_path / "backup"
        backup.mkdir()  # an empty folder made by the operator, 0755
        # MODELS_DIR unset: the model files live in DATA_DIR/models too (linked from the
        # session's, which Lore's first start already assembled, to save building them).
        async with open_lore(make_settings(data_dir=tmp_path / "first")):
            pass
        shutil.copytree(models_dir, data / "models", copy_function=os.link)
        settings = make_settings(data_dir=data, MODELS_DIR="")
        with caplog.at_level(logging.WARNING, logger="storage.private_files"):
            async with open_lore(settings) as lore:
                member = await local_member(lore.bot, "mona")
                await remember(lore.bot, member, PRIVATE_LINE)
                await lore.bot.ingest(
                    member, Source(data=b"# Plan\n\nThe roof is fixed in May.", file_name="p.md")
                )
                turn = await ask(lore.bot, member, "Where is the spare key?")
                assert turn.done.outcome == "answered"
                await lore.bot.maintenance.build_memory(datetime.now(UTC))
                assert (data / "lore.sqlite3-wal").exists()
                open_modes = wider_than_owner(data)  # the -wal and -shm files while in use
                await lore.bot.maintenance.backup(backup)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]

        assert open_modes == {}
        assert wider_than_owner(data, backup) == {}
        assert len(warnings) == 1
        assert str(data) in warnings[0]
        assert "0755" in warnings[0] or "0644" in warnings[0]

        # The next start finds nothing to tighten and says nothing.
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="storage.private_files"):
            async with open_lore(settings):
                pass
        assert [r for r in caplog.records if r.levelno == logging.WARNING] == []


def test_row_b_a_file_where_data_dir_should_be_is_left_as_it_is(tmp_path: Path) -> None:
    with usual_umask():
        in_the_way = tmp_path / "notes.txt"
        in_the_way.write_text("someone's file")
        found = secure_data_dir(in_the_way)  # opening the database then names the problem
    assert not found.tightened
    assert stat.S_IMODE(in_the_way.stat().st_mode) == 0o644


async def backed_up_note(settings: Settings, backup: Path) -> None:
    """A data directory with one member's note, backed up to `backup`."""
    async with open_lore(settings) as lore:
        member = await local_member(lore.bot, "gus")
        await remember(lore.bot, member, PRIVATE_LINE)
        await lore.bot.maintenance.backup(backup)


@pytest.fixture(scope="module")
def pristine_backup(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Path:
    """One backup of a note, made once for the row G tests (each changes a copy of it)."""
    root = tmp_path_factory.mktemp("pristine")
    settings = load_settings(
        _env_file=None, data_dir=root / "data", MODELS_DIR=models_dir, sample_docs_dir=""
    )
    asyncio.run(backed_up_note(settings, root / "backup"))
    return root / "backup"


@pytest.fixture
def backup(pristine_backup: Path, tmp_path: Path) -> Path:
    """A copy of the pristine backup to tamper with."""
    return Path(shutil.copytree(pristine_backup, tmp_path / "backup", symlinks=True))


async def test_row_g_a_restore_refuses_a_symbolic_link_and_restores_nothing(
    make_settings: SettingsFactory, tmp_path: Path, backup: Path
) -> None:
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text("the host's own secret")
    [original] = list((backup / "uploads").rglob("note.md"))
    original.unlink()
    original.symlink_to(host_file)
    target = make_settings(data_dir=tmp_path / "b")

    with pytest.raises(BackupRefusedError, match="symbolic link") as refused:
        await restore_into(backup_layout(target), backup, force=False)

    assert "Nothing was restored" in str(refused.value)
    assert not (tmp_path / "b").exists()


async def test_row_g_a_restore_refuses_a_document_path_outside_the_backup(
    make_settings: SettingsFactory, tmp_path: Path, backup: Path
) -> None:
    outside = tmp_path / "host-secret.txt"
    outside.write_text("the host's own secret")
    with closing(sqlite3.connect(backup / "lore.sqlite3")) as database, database:
        database.execute("UPDATE documents SET original_path = ?", (str(outside),))
    target = make_settings(data_dir=tmp_path / "b")

    with pytest.raises(BackupRefusedError, match="outside the backup's own uploads folder"):
        await restore_into(backup_layout(target), backup, force=False)
    assert not (tmp_path / "b").exists()


async def test_row_g_restored_document_paths_point_into_the_new_data_dir(
    make_settings: SettingsFactory, tmp_path: Path, backup: Path
) -> None:
    target = make_settings(data_dir=tmp_path / "b")

    await restore_into(backup_layout(target), backup, force=False)

    with closing(sqlite3.connect(tmp_path / "b" / "lore.sqlite3")) as database:
        [(path,)] = database.execute("SELECT original_path FROM documents").fetchall()
    assert Path(path).is_relative_to(target.uploads_dir)
    assert Path(path).read_text() == PRIVATE_LINE
