"""One-statement writes (`Database.write`): what a turn's bookkeeping uses instead of a
BEGIN/COMMIT transaction around a single statement."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from storage.database import Database
from storage.processed_events import ProcessedEvents

NOW = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    async with Database(tmp_path / "lore.db") as db:
        yield db


async def test_a_write_commits_and_returns_its_returning_rows(database: Database) -> None:
    rows = await database.write(
        "INSERT INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)"
        " RETURNING event_id",
        ("telegram", "1", "2026-12-02T09:00:00+00:00"),
    )
    assert [row["event_id"] for row in rows] == ["1"]
    # Committed: the other (reader) connection sees it.
    assert await database.fetch_value("SELECT count(*) FROM processed_events") == 1
    assert await database.write("DELETE FROM processed_events") == []
    assert await database.fetch_value("SELECT count(*) FROM processed_events") == 0


async def test_a_failed_write_leaves_nothing_and_the_next_one_works(database: Database) -> None:
    insert = "INSERT INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)"
    await database.write(insert, ("telegram", "1", "t"))
    with pytest.raises(sqlite3.IntegrityError):
        await database.write(insert, ("telegram", "1", "t"))
    await database.write(insert, ("telegram", "2", "t"))
    async with database.transaction() as tx:  # no transaction was left open
        await tx.execute(insert, ("telegram", "3", "t"))
    assert await database.fetch_value("SELECT count(*) FROM processed_events") == 3


async def test_writes_wait_for_an_open_transaction(database: Database) -> None:
    insert = "INSERT INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)"
    inside = asyncio.Event()
    release = asyncio.Event()

    async def long_transaction() -> None:
        async with database.transaction() as tx:
            await tx.execute(insert, ("telegram", "in-transaction", "t"))
            inside.set()
            await release.wait()
            raise RuntimeError("rolled back")

    task = asyncio.create_task(long_transaction())
    await inside.wait()
    write = asyncio.create_task(database.write(insert, ("telegram", "alone", "t")))
    await asyncio.sleep(0)
    assert not write.done()
    release.set()
    with pytest.raises(RuntimeError):
        await task
    await write
    rows = await database.fetch_all("SELECT event_id FROM processed_events")
    assert [row["event_id"] for row in rows] == ["alone"]


async def test_an_event_is_handled_again_until_it_finished(database: Database) -> None:
    ledger = ProcessedEvents(database, "telegram")
    other = ProcessedEvents(database, "slack")
    assert await ledger.begin("42", NOW)
    assert await ledger.begin("42", NOW)  # arrived, never finished: at least once
    await ledger.finish("42", NOW)
    assert not await ledger.begin("42", NOW)
    assert await other.begin("42", NOW)  # another platform's id 42


async def test_a_write_queued_just_before_a_transaction_survives_its_rollback(
    database: Database,
) -> None:
    insert = "INSERT INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)"

    async def rolled_back() -> None:
        async with database.transaction() as tx:
            await tx.execute(insert, ("telegram", "in-transaction", "t"))
            raise RuntimeError("rolled back")

    writes = [
        asyncio.create_task(database.write(insert, ("telegram", str(n), "t"))) for n in range(3)
    ]
    transaction = asyncio.create_task(rolled_back())
    later = asyncio.create_task(database.write(insert, ("telegram", "after", "t")))
    await asyncio.gather(*writes, later)
    with pytest.raises(RuntimeError):
        await transaction
    rows = await database.fetch_all("SELECT event_id FROM processed_events ORDER BY event_id")
    assert [row["event_id"] for row in rows] == ["0", "1", "2", "after"]
