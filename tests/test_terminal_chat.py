"""The terminal chat behaves like a chat: logs go to a rotating file under DATA_DIR/logs (each
warning shown once on screen), Ctrl-C and Ctrl-D at the prompt quit at once, and `lore run`
with no edge and no input says which settings start one. `lore` runs in a real
pseudo-terminal (or with its input at /dev/null)."""

from __future__ import annotations

import fcntl
import logging
import os
import pty
import select
import socket
import subprocess
import sys
import termios
from collections.abc import Iterator
from logging.handlers import RotatingFileHandler
from pathlib import Path

import pytest

from bot.app.edges import EDGE_SETTINGS
from bot.chat_logs import BACKUPS, MAX_BYTES, log_file, log_to_file
from bot.log_redaction import configure_logging

LORE = Path(sys.executable).parent / "lore"
pytestmark = pytest.mark.timeout(300)
WAIT = 180.0  # seconds to wait for output that must come (a loaded machine is slow)


def _controlling_terminal() -> None:
    """In the child: make its stdin (the pty) the controlling terminal, so that ^C is SIGINT."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """`lore ARGS` in a pseudo-terminal: what it shows, and keys typed into it."""

    def __init__(self, workdir: Path, *args: str) -> None:
        self._master, child = pty.openpty()
        self.process = subprocess.Popen(  # noqa: S603 - our own console script
            [str(LORE), *args],
            cwd=workdir,
            stdin=child,
            stdout=child,
            stderr=child,
            start_new_session=True,
            preexec_fn=_controlling_terminal,  # noqa: PLW1509 - needed for a real ^C
        )
        os.close(child)
        self.shown = b""

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self._master, 4096)
        except OSError:  # the child closed the terminal
            return False
        self.shown += data
        return bool(data)

    def wait_for(self, text: str, count: int = 1) -> None:
        """Read until `text` was shown `count` times (fails if the output ends first)."""
        while self.shown.count(text.encode()) < count:
            assert self._read(WAIT), f"never showed {text!r}: {self.text}"

    def type(self, keys: str) -> None:
        os.write(self._master, keys.encode())

    def ended(self) -> int:
        """The exit code, once the process ends by itself; the rest of the output read."""
        code = self.process.wait(timeout=WAIT)
        while self._read(0.2):
            pass
        os.close(self._master)
        return code

    @property
    def text(self) -> str:
        return self.shown.decode(errors="replace")


@pytest.fixture
def workdir(tmp_path: Path, assembled_models_dir: Path) -> Path:
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={assembled_models_dir}\nSAMPLE_DOCS_DIR=\n"
        "LOG_LEVEL=INFO\n"
    )
    return tmp_path


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_ctrl_d_at_the_prompt_quits_and_logs_stay_in_the_file(workdir: Path) -> None:
    chat = Terminal(workdir, "chat")
    chat.wait_for("you> ")
    chat.type("\x04")
    assert chat.ended() == 0, chat.text
    assert "Traceback" not in chat.text
    logged = log_file(workdir / "data").read_text("utf-8")
    assert "Lore core ready" in logged
    assert "Scheduler started" in logged
    assert "Lore core ready" not in chat.text
    assert "INFO" not in chat.text
    assert f"Logs go to {log_file(workdir / 'data')}" in chat.text


def test_ctrl_c_at_the_prompt_quits_without_waiting_for_enter(workdir: Path) -> None:
    chat = Terminal(workdir, "run")  # at a terminal, `lore run` chats too
    chat.wait_for("you> ")
    chat.type("a question never finished\x03")
    assert chat.ended() == 0, chat.text
    assert "Traceback" not in chat.text
    assert "KeyboardInterrupt" not in chat.text
    assert "Lore stopped" in log_file(workdir / "data").read_text("utf-8")


def test_a_warning_is_shown_once_above_the_prompt_and_logged_each_time(
    workdir: Path, closed_port: int
) -> None:
    with (workdir / ".env").open("a") as env:
        env.write(f"LLM_BASE_URL=http://127.0.0.1:{closed_port}/v1\nLLM_MODEL=test-model\n")
    chat = Terminal(workdir, "chat")
    chat.wait_for("you> ")
    chat.type("where is the printer?\n")
    chat.wait_for("you> ", 2)
    chat.type("where is the printer now?\n")
    chat.wait_for("you> ", 3)
    chat.type("\x04")
    assert chat.ended() == 0, chat.text
    assert chat.text.count("Warning: Model call failed (unavailable)") == 1, chat.text
    logged = log_file(workdir / "data").read_text("utf-8")
    assert logged.count("WARNING graphs.agent.generate_node: Model call failed (unavailable)") == 2


def test_run_with_no_edge_and_no_input_names_the_settings_that_start_one(
    workdir: Path,
) -> None:
    result = subprocess.run(  # noqa: S603 - our own console script
        [str(LORE), "run"],
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    [line] = [line for line in result.stderr.splitlines() if " INFO " not in line]
    assert all(name in line for name in EDGE_SETTINGS)
    assert "Traceback" not in result.stderr


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger, its handlers and level put back after the test."""
    root = logging.getLogger()
    handlers, level, factory = list(root.handlers), root.level, logging.getLogRecordFactory()
    yield root
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)
    logging.setLogRecordFactory(factory)


def test_the_log_file_rotates_redacts_and_warnings_are_told_once(
    tmp_path: Path, root_logger: logging.Logger
) -> None:
    shown: list[str] = []
    path = log_to_file(tmp_path / "data", show=shown.append, level="INFO")
    configure_logging("INFO", "WARNING", ["s3cret-token-value"])
    log = logging.getLogger("bot.test_chat")
    log.info("an ordinary line")
    for _ in range(3):
        log.warning("the digest job failed with s3cret-token-value")
    logging.getLogger("some.library").warning("library chatter")
    logging.getLogger("some.library").error("a library error")

    assert shown == [
        "Warning: the digest job failed with [REDACTED]",
        "Error: a library error",
    ]
    for handler in root_logger.handlers:
        handler.flush()
    logged = path.read_text("utf-8")
    assert logged.count("the digest job failed with [REDACTED]") == 3
    assert "an ordinary line" in logged
    assert "library chatter" in logged
    assert "s3cret-token-value" not in logged
    [rotating] = [h for h in root_logger.handlers if isinstance(h, RotatingFileHandler)]
    assert (rotating.maxBytes, rotating.backupCount) == (MAX_BYTES, BACKUPS)
    assert not [
        h
        for h in root_logger.handlers
        if type(h) is logging.StreamHandler and h.stream in {sys.stderr, sys.stdout}
    ]
