"""Logs while the terminal chat runs: everything to a rotating file, each warning once on screen.

A person chatting at a terminal should not see log lines land after the `you>` prompt, nor
the scheduler's chatter every minute. `log_to_file(data_dir, show=...)`, called before
logging is configured (so the redaction filter covers these handlers too), makes the root
logger write to `DATA_DIR/logs/lore.log` (rotated at `MAX_BYTES`, `BACKUPS` old files
kept) instead of stderr, and hands each distinct warning or error to `show` once (the
terminal prints it above the prompt); the file keeps every record. A service's stderr
(no terminal) keeps logging as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from pathlib import Path

from bot.library_output import LibraryChatterFilter

__all__ = ["BACKUPS", "LOG_FILE", "MAX_BYTES", "TerminalNotices", "log_file", "log_to_file"]

LOG_FILE = "lore.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_file(data_dir: Path) -> Path:
    """Where the terminal chat's log goes."""
    return data_dir / "logs" / LOG_FILE


class TerminalNotices(logging.Handler):
    """Shows each distinct warning or error once (a job failing every minute is told once);
    the log file has every occurrence."""

    def __init__(self, show: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self._show = show
        self._seen: set[tuple[str, int, str]] = set()

    def emit(self, record: logging.LogRecord) -> None:
        """Show `record` unless the same message was shown before."""
        try:
            message = record.getMessage()
            key = (record.name, record.levelno, message)
            if key in self._seen:
                return
            self._seen.add(key)
            first_line = message.splitlines()[0] if message else ""
            self._show(f"{record.levelname.capitalize()}: {first_line}")
        except Exception:  # logging must never break the chat
            self.handleError(record)


def log_to_file(data_dir: Path, *, show: Callable[[str], None], level: str) -> Path:
    """Send the root logger to `DATA_DIR/logs/lore.log` and warnings to `show`, once each.

    `level` is LOG_LEVEL: below DEBUG, other libraries' warnings stay in the file. Returns
    the log file's path. Raises `OSError` when the folder cannot be made."""
    path = log_file(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, logging.StreamHandler) and not isinstance(
            handler, logging.FileHandler
        ):
            root.removeHandler(handler)
    to_file = RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8")
    to_file.setFormatter(logging.Formatter(_FORMAT))
    notices = TerminalNotices(show)
    if level != "DEBUG":
        notices.addFilter(LibraryChatterFilter())
    root.addHandler(to_file)
    root.addHandler(notices)
    return path
