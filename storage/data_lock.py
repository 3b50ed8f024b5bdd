"""One process owns a data directory: an exclusive lock file taken before any store opens.

The embedded Qdrant engine locks its shards, and SQLite has one writer; a second
process (say `lore ingest` while the bot runs) learns here, with a clear message,
that the directory is busy, instead of failing later with an engine lock error.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import IO, Self

__all__ = ["DataDirBusyError", "DataDirLock", "held_elsewhere"]


class DataDirBusyError(Exception):
    """Another process holds the data directory."""

    def __init__(self, path: Path, holder: str) -> None:
        self.path = path
        self.holder = holder
        who = f"process {holder}" if holder else "another process"
        super().__init__(
            f"The Lore data directory {path} is in use by {who}: the bot is running there. "
            "Stop the bot, then run this command again (or point DATA_DIR elsewhere)."
        )


class DataDirLock:
    """An exclusive, non-blocking advisory lock on `{data_dir}/lore.lock`."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / "lore.lock"
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock or raise `DataDirBusyError` at once."""
        self._path.parent.mkdir(parents=True, exist_ok=True)
        handle = self._path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip()
            handle.close()
            raise DataDirBusyError(self._path.parent, holder) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        """Give the lock back (closing the file releases it)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def held_elsewhere(data_dir: Path) -> bool:
    """Whether another process (the running bot) holds the data directory right now."""
    try:
        with DataDirLock(data_dir):
            return False
    except DataDirBusyError:
        return True
