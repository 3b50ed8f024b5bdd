"""`lore delete` and `lore backup` beside the running bot: the bot does the work over its
control socket, the y/N question is asked at the CLI's own terminal, the output and exit codes
are those of the same commands without a bot, and a backup the bot takes in the middle of an
ingest holds the vectors and restores complete."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from bot.app import Lore
from bot.backups import describe_backup
from bot.control.client import connect
from bot.control.operations import folder_anchor
from bot.control.protocol import ELSEWHERE_EXIT
from bot.control.server import ControlServer
from bot.deletion import NO_TERMINAL
from storage.backups import read_manifest
from storage.document_records import HANDLE_LENGTH
from tests.control_cli import LORE, Recorded, lore, make_workdir

PARKING = "Parking: visitors park in bay 12 behind the bakery."


def _handles(data: Path) -> dict[str, str]:
    with sqlite3.connect(data / "lore.sqlite3") as connection:
        rows = connection.execute("SELECT title, id FROM documents").fetchall()
    connection.close()
    return {title: document_id[:HANDLE_LENGTH] for title, document_id in rows}


def _delete(workdir: Path, answer: str | None, *args: str) -> tuple[int, str, str]:
    """`lore delete ARGS`: with no terminal (`answer` None), or at a pseudo-terminal where
    `answer` is typed. Exit code, stdout, stderr."""
    if answer is None:
        done = lore(workdir, "delete", *args)
        return done.returncode, done.stdout, done.stderr
    controller, terminal = os.openpty()
    try:
        process = subprocess.Popen(  # noqa: S603 - our own console script
            [str(LORE), "delete", *args],
            cwd=workdir,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.write(controller, f"{answer}\n".encode())
        out, err = process.communicate(timeout=180)
    finally:
        os.close(terminal)
        os.close(controller)
    return process.returncode, out, err


def _deletions(workdir: Path) -> list[tuple[int, str, str]]:
    """Ingest the notes, then delete: refused without a terminal, declined, confirmed, with
    --yes, and a handle that is gone. Handles read as WIFI and PARKING."""
    assert lore(workdir, "ingest", "notes", "--shared").returncode == 0
    handles = _handles(workdir / "data")
    wifi, parking = handles["Office wifi"], handles[PARKING]
    steps = [
        _delete(workdir, None, wifi),
        _delete(workdir, "n", wifi),
        _delete(workdir, "y", wifi),
        _delete(workdir, None, parking, "--yes"),
        _delete(workdir, None, wifi, "--yes"),
    ]
    assert _handles(workdir / "data") == {}

    def named(text: str) -> str:
        return text.replace(wifi, "WIFI").replace(parking, "PARKING")

    return [(code, named(out), named(err)) for code, out, err in steps]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_delete_beside_the_running_bot_asks_at_the_cli_terminal_as_it_does_alone(
    tmp_path: Path, models_dir: Path, running_bot: tuple[Path, subprocess.Popen[str]]
) -> None:
    beside, bot = running_bot
    alone = make_workdir(tmp_path / "alone", models_dir)
    expected = _deletions(alone)
    question = "Delete Office wifi (WIFI, the shared knowledge)? This cannot be undone. [y/N]: "
    assert expected == [
        (1, "", NO_TERMINAL + "\n"),
        (1, question + "Nothing was deleted.\n", ""),
        (0, question + "Deleted Office wifi (WIFI).\n", ""),
        (0, "Deleted Parking: visitors park in bay 12 behind the bakery. (PARKING).\n", ""),
        (1, "", "No document of yours has the handle 'WIFI'.\n"),
    ]
    assert _deletions(beside) == expected
    assert (beside / "data" / "control.sock").exists()  # the bot did the work, and runs on
    assert bot.poll() is None


def _wing(number: int) -> str:
    """One handbook file of many chunks; each section names its wing and room."""
    return f"# Wing {number}\n\n" + "\n\n".join(
        f"## Room {number}-{room}\n\nRoom {room} of wing {number} keeps ledger "
        f"L-{number:02d}{room:03d}; its keeper is called Keeper{number}x{room}."
        for room in range(1, 41)
    )


def _chunks_per_document(data: Path) -> dict[str, int]:
    with sqlite3.connect(data / "lore.sqlite3") as connection:
        rows = connection.execute(
            "SELECT d.id, COUNT(c.id) FROM documents d LEFT JOIN chunks c ON c.document_id = d.id"
            " WHERE d.status = 'ready' GROUP BY d.id"
        ).fetchall()
    connection.close()
    return dict(rows)


def _stats(workdir: Path) -> dict[str, str]:
    shown = lore(workdir, "stats").stdout.splitlines()
    return dict(line.split(": ", 1) for line in shown)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_backup_beside_the_running_bot_mid_ingest_holds_the_vectors_and_restores_complete(
    tmp_path: Path, models_dir: Path, running_bot: tuple[Path, subprocess.Popen[str]]
) -> None:
    workdir, bot = running_bot
    files = 16
    (workdir / "handbook").mkdir()
    for number in range(files):
        (workdir / "handbook" / f"wing{number:02d}.md").write_text(_wing(number))
    ingest = subprocess.Popen(  # noqa: S603 - our own console script
        [str(LORE), "ingest", "handbook", "--shared"],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert ingest.stdout is not None
    assert "Saved: Wing 0" in ingest.stdout.readline()  # the ingest is under way
    made = lore(workdir, "backup", str(tmp_path / "snapshot"))
    mid_ingest = ingest.poll() is None
    ingest.communicate(timeout=600)
    assert ingest.returncode == 0
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip().endswith("(vectors included).")  # the bot holds the shards
    assert mid_ingest  # the snapshot was taken while the bot was still ingesting
    manifest = json.loads((tmp_path / "snapshot" / "manifest.json").read_text())
    assert manifest["vectors"] == "snapshot"
    backed_up = manifest["counts"]["shared_documents"]
    assert 1 <= backed_up < files

    restored = make_workdir(tmp_path / "restored", models_dir)
    back = lore(restored, "restore", str(tmp_path / "snapshot"))
    assert back.returncode == 0, back.stderr
    assert back.stdout.strip().endswith(
        "re-embedded 0 chunks, removed 0 orphan points and 0 orphan folders."
    )
    # Every document in the backup is whole: as many chunks as the finished ingest made.
    finished = _chunks_per_document(workdir / "data")
    got = _chunks_per_document(restored / "data")
    assert len(got) == backed_up
    assert {document: finished[document] for document in got} == got
    stats = _stats(restored)
    assert stats["pending chunks"] == "0"
    assert stats["knowledge points"] == stats["chunks"] == str(sum(got.values()))
    found = lore(restored, "search", "Who keeps room 17 of wing 0?")
    assert "Keeper0x17" in found.stdout
    assert bot.poll() is None


async def test_a_backup_folder_the_bot_sees_elsewhere_is_left_to_the_cli(
    lore: Lore, tmp_path: Path
) -> None:
    data_dir = lore.settings.data_dir
    target = tmp_path / "backups" / "monday"
    (tmp_path / "backups").mkdir()
    anchor = folder_anchor(target)
    assert anchor["anchor"] == str(tmp_path / "backups")
    async with ControlServer(lore.bot, data_dir):
        for where in ({**anchor, "inode": anchor["inode"] + 1}, {**anchor, "anchor": "/nowhere"}):
            connection = await connect(data_dir)
            assert connection is not None
            shown = Recorded()
            async with connection:
                code = await connection.run("backup", {"path": str(target), **where}, shown)
            assert (code, shown.lines) == (ELSEWHERE_EXIT, [])  # another container's folder
        assert not target.exists()
        connection = await connect(data_dir)
        assert connection is not None
        async with connection:
            code = await connection.run("backup", {"path": str(target), **anchor}, shown)
    assert code == 0
    assert shown.lines == [("out", describe_backup(target, read_manifest(target)))]
    assert read_manifest(target).vectors == "snapshot"
