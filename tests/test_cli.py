"""The `lore` command as a person runs it: subprocesses configured through a `.env` file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from storage.data_lock import DataDirLock

LORE = Path(sys.executable).parent / "lore"
# Each test runs several `lore` processes, each loading the model: minutes on a busy box.
pytestmark = pytest.mark.timeout(360)

NOTES = {
    "wifi.md": "# Office wifi\n\nThe guest wifi password is printed on the kitchen whiteboard.\n",
    "parking.txt": "Parking: visitors park in bay 12 behind the bakery.\n",
    "ignored.bin": "not a supported file\n",
}


@pytest.fixture
def workdir(tmp_path: Path, models_dir: Path) -> Path:
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\n"
        "LOG_LEVEL=WARNING\n"
    )
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    return tmp_path


def lore(workdir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own console script
        [str(LORE), *args],
        cwd=workdir,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_ingest_a_folder_then_search_and_stats(workdir: Path) -> None:
    ingested = lore(workdir, "ingest", "notes", "--shared")
    assert ingested.returncode == 0, ingested.stderr
    assert "Saved: Office wifi (1 chunk)" in ingested.stdout
    assert "Saved: Parking: visitors park in bay 12 behind the bakery." in ingested.stdout
    assert "ignored" not in ingested.stdout + ingested.stderr

    again = lore(workdir, "ingest", "notes/wifi.md", "--shared")
    assert "Already saved: Office wifi" in again.stdout

    found = lore(workdir, "search", "where can visitors park?")
    assert found.returncode == 0, found.stderr
    first = found.stdout.splitlines()[0]
    assert first.startswith("[1] Parking")
    assert "shared" in first

    stats = lore(workdir, "stats")
    assert "shared documents: 2" in stats.stdout
    assert "pending chunks: 0" in stats.stdout


def test_private_notes_belong_to_their_user(workdir: Path) -> None:
    assert lore(workdir, "ingest", "notes/wifi.md", "--user", "ann").returncode == 0
    assert "Office wifi" in lore(workdir, "search", "wifi password", "--user", "ann").stdout
    other = lore(workdir, "ingest", "notes/parking.txt", "--user", "bob")
    assert other.returncode == 0
    found = lore(workdir, "search", "wifi password", "--user", "bob")
    assert "Office wifi" not in found.stdout
    # A mistyped name is an error, not a new member.
    typo = lore(workdir, "search", "wifi password", "--user", "typo-nobody")
    assert typo.returncode == 1
    assert "Nobody called 'typo-nobody'" in typo.stderr
    assert "users: 3" in lore(workdir, "stats").stdout  # the owner, ann, bob


def test_bad_input_gets_a_polite_message_and_no_traceback(workdir: Path) -> None:
    (workdir / "tool.exe").write_bytes(b"MZ\x00\x01")
    result = lore(workdir, "ingest", "tool.exe", "--shared")
    assert result.returncode == 1
    assert "only reads" in result.stderr
    assert "Traceback" not in result.stderr
    assert "shared documents: 0" in lore(workdir, "stats").stdout


def test_a_wrong_setting_names_the_variable(workdir: Path) -> None:
    with (workdir / ".env").open("a") as env:
        env.write("CHUNK_TOKENS=lots\n")
    result = lore(workdir, "stats")
    assert result.returncode == 2
    assert "CHUNK_TOKENS" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_busy_data_directory_is_reported_clearly(workdir: Path) -> None:
    with DataDirLock(workdir / "data"):
        result = lore(workdir, "ingest", "notes", "--shared")
    assert result.returncode == 1
    assert "in use by process" in result.stderr
    assert "Stop the bot" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_loads_the_sample_knowledge_base_and_chats_on_piped_input(workdir: Path) -> None:
    with (workdir / ".env").open("a") as env:
        env.write("SAMPLE_DOCS_DIR=notes\n")
    # Piped input never answers an approval by accident: it waits for /approve.
    script = "where do visitors park?\ntell the owner that bay 12 is flooded\n/approve\n/budget\n"
    result = lore(workdir, "run", stdin=script)
    assert result.returncode == 0, result.stderr
    assert "Knowledge base: 2 shared documents" in result.stdout
    answer = result.stdout.split("where do", 1)[-1]
    assert "bay 12 behind the bakery" in answer
    assert "Sources:" in answer
    assert "] Parking: visitors park in bay 12" in answer
    assert "Approval needed: Send you this message" in result.stdout
    assert "[to the owner] Message from You: Bay 12 is flooded." in result.stdout
    assert "Approved." in result.stdout
    assert "of $1.00" in result.stdout
