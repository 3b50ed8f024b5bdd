"""The SQLite connection pair: one writer behind a lock, one reader, WAL mode, migrations at open.

SQLite is Lore's source of truth. Every write goes through `Database.transaction()`,
which serialises writers in this process (`BEGIN IMMEDIATE`, commit or roll back as
a whole). Reads use a second connection and see only committed data.

Deleted rows leave no copy behind: `secure_delete` overwrites freed pages, and
`erase_wal()` checkpoints the write-ahead log into the database and truncates it (the
last step of forgetting someone).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

import aiosqlite

from storage.migrations import MIGRATIONS, Migration, apply_migrations
from storage.write_gate import WriteGate

__all__ = ["Database", "DatabaseError", "Row"]

logger = logging.getLogger(__name__)

Row = sqlite3.Row
SqlParams = Sequence[object] | dict[str, object]


class DatabaseError(Exception):
    """SQLite could not be opened or written; the message names the file."""


class Database:
    """An open Lore database. Use as an async context manager."""

    def __init__(self, path: Path, *, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self._path = path
        self._migrations = migrations
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self._gate = WriteGate()

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def __aenter__(self) -> Self:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._writer = await self._connect()
            await self._writer.execute("PRAGMA journal_mode=WAL")
            await apply_migrations(self._writer, self._migrations)
            self._reader = await self._connect()
        except sqlite3.Error as exc:
            await self.close()
            raise DatabaseError(f"Cannot open the database at {self._path}: {exc}") from exc
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close both connections."""
        for connection in (self._reader, self._writer):
            if connection is not None:
                await connection.close()
        self._reader = self._writer = None

    async def _connect(self) -> aiosqlite.Connection:
        connection = await aiosqlite.connect(self._path, isolation_level=None)
        connection.row_factory = sqlite3.Row
        await connection.execute("PRAGMA foreign_keys=ON")
        await connection.execute("PRAGMA busy_timeout=10000")
        await connection.execute("PRAGMA synchronous=NORMAL")
        await connection.execute("PRAGMA secure_delete=ON")
        return connection

    async def erase_wal(self) -> None:
        """Move every committed page into the database file and empty the WAL, so deleted
        content survives in no log (readers that hold old pages finish first)."""
        writer = self._require(self._writer)
        async with self._write_lock:
            await writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def writing(self) -> AbstractAsyncContextManager[None]:
        """A write that spans stores (SQLite rows plus vectors and files: an ingest, a
        deletion); `writes_paused()` waits for it and holds new ones back."""
        return self._gate.writing()

    def writes_paused(self) -> AbstractAsyncContextManager[None]:
        """No cross-store write in flight inside (a backup takes its snapshot here)."""
        return self._gate.paused()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """Run writes atomically: everything inside commits together or not at all."""
        writer = self._require(self._writer)
        async with self._write_lock:
            await writer.execute("BEGIN IMMEDIATE")
            try:
                yield writer
            except BaseException:
                await writer.execute("ROLLBACK")
                raise
            await writer.execute("COMMIT")

    async def write(self, sql: str, params: SqlParams = ()) -> list[Row]:
        """Run one write statement as its own transaction and return the rows of its
        RETURNING clause (none without one). SQLite makes a single statement atomic, so this
        is `transaction()` around one statement in one round trip to the database thread
        instead of four (BEGIN, the statement, its rows, COMMIT): what a chat turn's writes
        use."""
        writer = self._require(self._writer)
        if not self._write_lock.locked():
            # No transaction is open: the statement is queued on the writer's thread at once
            # (before this coroutine first yields), so no BEGIN can come before it. Holding
            # the lock meanwhile would make every write wait a turn of the event loop for
            # the one before it: under load the queue of turns' writes became the limit.
            return list(await writer.execute_fetchall(sql, params))
        async with self._write_lock:
            return list(await writer.execute_fetchall(sql, params))

    async def fetch_all(self, sql: str, params: SqlParams = ()) -> list[Row]:
        """Run a read query and return every row (one round trip to the database thread)."""
        reader = self._require(self._reader)
        return list(await reader.execute_fetchall(sql, params))

    async def fetch_one(self, sql: str, params: SqlParams = ()) -> Row | None:
        """Run a read query and return the first row, if any. For queries that match one row
        or a few (by key, counts): every row is read, in one round trip to the database thread
        instead of three."""
        reader = self._require(self._reader)
        rows = list(await reader.execute_fetchall(sql, params))
        return rows[0] if rows else None

    async def fetch_value(self, sql: str, params: SqlParams = ()) -> object:
        """Run a read query and return the first column of the first row (None if no row)."""
        row = await self.fetch_one(sql, params)
        return None if row is None else row[0]

    async def execute_many(self, sql: str, rows: Iterable[SqlParams]) -> None:
        """Run one statement for many parameter rows, in one transaction."""
        async with self.transaction() as connection:
            await connection.executemany(sql, rows)

    @staticmethod
    def _require(connection: aiosqlite.Connection | None) -> aiosqlite.Connection:
        if connection is None:
            raise DatabaseError("The database is not open")
        return connection
