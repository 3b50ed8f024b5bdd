"""LangGraph's checkpointer on SQLite: where a paused turn waits for the owner across restarts.

Deserialisation is restricted to an explicit allowlist of the state's own classes, so a
tampered checkpoint cannot revive arbitrary objects.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

__all__ = ["erase_checkpoint_wal", "open_checkpointer"]


@asynccontextmanager
async def open_checkpointer(path: Path, allowed: Iterable[type]) -> AsyncIterator[AsyncSqliteSaver]:
    """An open checkpointer on `path` (WAL mode) that revives only `allowed` classes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(path) as connection:
        await connection.execute("PRAGMA journal_mode=WAL")
        await connection.execute("PRAGMA busy_timeout=10000")
        await connection.execute("PRAGMA synchronous=NORMAL")
        await connection.execute("PRAGMA secure_delete=ON")  # a deleted thread leaves no copy
        serde = JsonPlusSerializer(allowed_msgpack_modules=list(allowed))
        saver = AsyncSqliteSaver(connection, serde=serde)
        await saver.setup()
        yield saver


async def erase_checkpoint_wal(saver: AsyncSqliteSaver) -> None:
    """Empty the checkpointer's write-ahead log into its (securely deleted) database file."""
    async with saver.lock:
        await saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
