"""What the bot's own messages stand for, so that a reaction on one of them means something,
also after a restart: an answer stands for its turn (👍/👎 feedback), an approval request for
the request (✅/❌), a command's question for its action (✅/❌) and a source's Private/Shared
question for its key (🔒/🌐). Kept beside the device in the store file; a month at most."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Marker", "Markers"]

KEEP_SECONDS = 30 * 24 * 3600
CACHED = 2000  # recent markers also kept in memory
TABLE = (
    "CREATE TABLE IF NOT EXISTS lore_marker (event_id TEXT PRIMARY KEY, room_id TEXT NOT NULL,"
    " kind TEXT NOT NULL, target TEXT NOT NULL, created REAL NOT NULL)"
)


@dataclass(frozen=True, slots=True)
class Marker:
    """One of the bot's messages: `kind` (fb, ap, cf, in) and what it refers to."""

    room_id: str
    kind: str
    target: str


class Markers:
    """The markers of one device, in its store file."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._cache: dict[str, Marker] = {}

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self._path)
        db.execute(TABLE)
        return db

    def _put(self, event_id: str, marker: Marker, now: float) -> None:
        with closing(self._connect()) as db, db:
            db.execute(
                "INSERT OR REPLACE INTO lore_marker VALUES (?, ?, ?, ?, ?)",
                (event_id, marker.room_id, marker.kind, marker.target, now),
            )
            db.execute("DELETE FROM lore_marker WHERE created < ?", (now - KEEP_SECONDS,))

    def _get(self, event_id: str) -> Marker | None:
        with closing(self._connect()) as db:
            row = db.execute(
                "SELECT room_id, kind, target FROM lore_marker WHERE event_id = ?", (event_id,)
            ).fetchone()
        return Marker(str(row[0]), str(row[1]), str(row[2])) if row else None

    async def put(self, event_id: str, marker: Marker) -> None:
        """Remember what the bot's message `event_id` stands for."""
        if len(self._cache) > CACHED:
            self._cache.clear()
        self._cache[event_id] = marker
        await asyncio.to_thread(self._put, event_id, marker, time.time())

    async def get(self, event_id: str) -> Marker | None:
        """What the bot's message `event_id` stands for, if anything."""
        if event_id in self._cache:
            return self._cache[event_id]
        return await asyncio.to_thread(self._get, event_id)
