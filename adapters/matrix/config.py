"""The Matrix edge's settings as plain values: the homeserver, the bot account and how it logs
in, where its device lives in the data directory, and the owners."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["PLATFORM", "PREFIX", "STORE_FILE", "MatrixConfig"]

PLATFORM = "matrix"
PREFIX = "!"  # Matrix clients keep `/` for themselves: `!help`, `!sources`, `!invite`
# The device, its sync token and its end-to-end keys: one SQLite file in DATA_DIR, so backups
# (which copy every *.sqlite3 there) keep and restore it with the rest of Lore's state.
STORE_FILE = "matrix.sqlite3"


@dataclass(frozen=True, slots=True)
class MatrixConfig:
    """The Matrix edge's settings. Exactly one of `access_token` and `password` is used (the
    token first); with a password Lore logs in once and keeps the device it got."""

    homeserver: str
    user_id: str
    data_dir: Path
    max_file_bytes: int
    access_token: str | None = None
    password: str | None = None
    owner_ids: frozenset[str] = frozenset()
    device_name: str = "Lore"
    stream_interval: float = 1.0  # at most one edit of a streamed answer per interval
    sync_timeout_ms: int = 30_000  # how long one sync waits on the homeserver for news
    key_wait: float = 10.0  # how long an encrypted message may wait for its room key
    # A sender whose messages Lore cannot decrypt is told once per room within this window.
    unreadable_window: float = 600.0
    stranger_grace: float = 120.0  # how long a stranger who invited Lore has to send !start
    connect_timeout: float = 20.0

    @property
    def store_path(self) -> Path:
        """The device's SQLite file (nio's crypto store, the sync token, the device id)."""
        return self.data_dir / STORE_FILE

    @property
    def download_limit(self) -> int:
        """The largest file taken from a chat."""
        return self.max_file_bytes

    @property
    def auth_setting(self) -> str:
        """The setting that holds the account's secret, as an operator writes it."""
        return "MATRIX_ACCESS_TOKEN" if self.access_token else "MATRIX_PASSWORD"
