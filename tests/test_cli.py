"""The `lore` command as a person runs it: subprocesses configured through a `.env` file."""

from __future__ import annotations

import fcntl
import os
import re
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from bot.ingest_requests import READABLE_TYPES
from storage.data_lock import DataDirLock
from tests.sample_files import broken_pdf_bytes

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
    # A file of another type is named, with the types Lore reads; it is no failure.
    assert (
        f"Skipped notes/ignored.bin: Lore does not read .bin files (it reads {READABLE_TYPES})."
    ) in ingested.stderr
    assert "ignored" not in ingested.stdout

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


def test_a_folder_with_nothing_to_read_says_so_and_which_types_lore_reads(workdir: Path) -> None:
    (workdir / "empty").mkdir()
    hidden = workdir / "only-others" / ".git"
    hidden.mkdir(parents=True)
    (hidden / "notes.md").write_text("# Hidden\n\nNot for Lore.\n")
    (workdir / "only-others" / "backup.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    (workdir / "only-others" / "Makefile").write_text("all:\n")

    empty = lore(workdir, "ingest", "empty", "--shared")
    assert empty.returncode == 1
    assert empty.stdout == ""
    assert empty.stderr.strip() == (
        f"There is nothing to ingest in empty: it holds no file Lore reads ({READABLE_TYPES}; "
        "hidden files are left out)."
    )
    others = lore(workdir, "ingest", "only-others")
    assert others.returncode == 1
    lines = others.stderr.strip().splitlines()
    assert [line.split(" (it reads")[0] for line in lines[:2]] == [
        "Skipped only-others/Makefile: Lore does not read files without an extension",
        "Skipped only-others/backup.zip: Lore does not read .zip files",
    ]
    assert lines[2].startswith("There is nothing to ingest in only-others: ")
    assert ".git" not in others.stderr  # hidden files are left out silently
    assert "shared documents: 0\nprivate documents: 0" in lore(workdir, "stats").stdout


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


def test_an_approval_left_waiting_when_piped_input_ends_is_decided_in_a_later_chat(
    workdir: Path,
) -> None:
    first = lore(workdir, "chat", stdin="tell the owner that bay 12 is flooded\n/budget\n")
    assert first.returncode == 0, first.stderr
    waiting = re.search(r"It waits for an owner: /approve (\S+) or /reject \1\.", first.stdout)
    assert waiting is not None, first.stdout
    approval = waiting.group(1)
    assert "of $1.00" in first.stdout  # the next line was a command, not an answer
    assert "Approved." not in first.stdout
    assert "Rejected" not in first.stdout
    assert "Message from You" not in first.stdout  # nothing was sent yet

    later = lore(workdir, "chat", stdin=f"/approvals\n/approve {approval}\n/approvals\n")
    assert later.returncode == 0, later.stderr
    listed, decided = later.stdout.split(f"/approve {approval}  or  /reject {approval}", 1)
    assert "Send you this message: “Bay 12 is flooded.”" in listed  # it was still waiting
    assert "[to the owner] Message from You: Bay 12 is flooded." in decided
    assert "Your message was delivered to the owner: “Bay 12 is flooded.”" in decided
    assert "Approved." in decided
    assert decided.rstrip().endswith("No requests are waiting.")


def _run_with_stderr_at_a_terminal(workdir: Path, stdin: str) -> tuple[int, str, str]:
    """`lore run` with piped input and stdout, its stderr a pseudo-terminal (as in `make
    run`): exit code, stdout, and what the terminal showed."""
    controller, terminal = os.openpty()
    # A terminal of 24 rows and 100 columns: a fresh pty has none, and tqdm draws nothing.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    shown: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:  # the child closed the terminal
                return
            if not data:
                return
            shown.append(data)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    try:
        process = subprocess.Popen(  # noqa: S603 - our own console script
            [str(LORE), "run"],
            cwd=workdir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=terminal,
            text=True,
        )
        os.close(terminal)
        out, _ = process.communicate(stdin, timeout=240)
    finally:
        reader.join(timeout=30)
        os.close(controller)
    return process.returncode, out, b"".join(shown).decode(errors="replace")


def test_the_sample_docs_load_with_a_bar_and_no_line_per_file(workdir: Path) -> None:
    (workdir / "notes" / "kitchen.pdf").write_bytes(broken_pdf_bytes())  # pypdf warns on it
    with (workdir / ".env").open("a") as env:
        env.write("SAMPLE_DOCS_DIR=notes\nLOG_LEVEL=INFO\n")
    code, out, terminal = _run_with_stderr_at_a_terminal(workdir, "where do visitors park?\n")
    assert code == 0, terminal
    assert "Loading the sample docs: 100%" in terminal
    assert "3/3" in terminal
    assert "Skipped notes/ignored.bin: Lore does not read .bin files" in terminal
    assert "startxref" not in terminal  # the library's warning stays off the screen
    assert " INFO " not in terminal  # a person watches: the log goes to its file
    assert "Logs go to " in out
    assert "Saved" not in out + terminal
    assert "Knowledge base: 3 shared documents" in out
    assert "bay 12 behind the bakery" in out.split("Lore is ready", 1)[1]
