"""The CLI beside a running bot, for tests: a working directory with notes, `lore` run as a
subprocess there, and `lore run` started on it (the `running_bot` fixture)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["LORE", "NOTES", "Recorded", "lore", "make_workdir", "messages", "running_bot"]

LORE = Path(sys.executable).parent / "lore"
NOTES = {
    "wifi.md": "# Office wifi\n\nThe guest wifi password is printed on the kitchen whiteboard.\n",
    "parking.txt": "Parking: visitors park in bay 12 behind the bakery.\n",
    "tool.exe": "MZ not a document\n",
}


class Recorded:
    """An `Output` that keeps what a command printed."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self.steps = 0

    def echo(self, text: str, *, err: bool = False) -> None:
        self.lines.append(("err" if err else "out", text))

    def progress(self, total: int, description: str) -> None:
        self.lines.append(("progress", f"{description} {total}"))

    def advance(self) -> None:
        self.steps += 1

    def progress_end(self) -> None:
        if self.lines and self.lines[-1][0] == "progress":
            self.lines.append(("progress", "end"))

    async def confirm(self, question: str) -> bool | None:
        self.lines.append(("confirm", question))
        return self.answer

    answer: bool | None = None


def make_workdir(root: Path, models_dir: Path) -> Path:
    """A working directory with its `.env` and a folder of notes."""
    root.mkdir()
    (root / ".env").write_text(
        f"DATA_DIR={root / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\nLOG_LEVEL=WARNING\n"
    )
    notes = root / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    return root


def lore(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own console script
        [str(LORE), *args], cwd=workdir, capture_output=True, text=True, timeout=180, check=False
    )


def messages(stderr: str) -> list[str]:
    """stderr without the progress bar (its timings differ run to run)."""
    parts = re.split(r"[\r\n]", stderr)
    return [part for part in parts if part.strip() and not part.startswith("Ingesting:")]


@pytest.fixture
def running_bot(tmp_path: Path, models_dir: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """`lore run` on a workdir's data directory, started from another directory, its input
    left open; stopped with SIGTERM."""
    workdir = make_workdir(tmp_path / "with-bot", models_dir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ".env").write_text((workdir / ".env").read_text())
    bot = subprocess.Popen(  # noqa: S603 - our own console script
        [str(LORE), "run"],
        cwd=elsewhere,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert bot.stdout is not None
        for line in bot.stdout:  # the chat greets once every edge, and the socket, is up
            if "Lore is ready" in line:
                break
        else:
            pytest.fail(f"lore run ended early: {bot.stderr.read() if bot.stderr else ''}")
        yield workdir, bot
    finally:
        bot.send_signal(signal.SIGTERM)
        bot.communicate(timeout=60)
