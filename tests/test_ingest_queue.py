"""The per-member ingest line (`bot.ingest_queue`, row A of issue 27): one job per member at a
time, in the order sent; a waiting job is told its place, and told again as the line moves."""

from __future__ import annotations

import asyncio

import pytest

from bot.errors import IngestRefusedError
from bot.ingest_queue import IngestQueue, waiting_text


class Job:
    """A job that runs until released, and remembers what its status said."""

    def __init__(self, name: str, ran: list[str]) -> None:
        self.name = name
        self.lines: list[str] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self._ran = ran

    async def __call__(self) -> str:
        self._ran.append(self.name)
        self.started.set()
        await self.release.wait()
        return self.name


async def test_row_a_a_member_s_sources_run_one_at_a_time_and_are_told_their_place() -> None:
    queue, ran = IngestQueue(), []
    first, second, third = (Job(name, ran) for name in ("first", "second", "third"))
    other = Job("other member", ran)
    tasks = [
        asyncio.create_task(queue.run("ann", job, job.lines.append))
        for job in (first, second, third)
    ]
    await first.started.wait()
    other_task = asyncio.create_task(queue.run("bob", other, other.lines.append))
    await other.started.wait()  # somebody else's source never waits behind Ann's
    assert second.lines == [waiting_text(1)]
    assert third.lines == [waiting_text(2)]
    assert queue.waiting("ann") == 2

    first.release.set()
    await second.started.wait()
    assert third.lines == [waiting_text(2), waiting_text(1)]  # edited as the line moved
    assert ran == ["first", "other member", "second"]

    second.release.set()
    third.release.set()
    other.release.set()
    assert await asyncio.gather(*tasks, other_task) == [
        "first",
        "second",
        "third",
        "other member",
    ]
    assert queue.waiting("ann") == 0
    assert first.lines == other.lines == []  # a source that never waited says nothing of a line


async def test_row_a_a_cancelled_source_leaves_the_line_and_the_next_moves_up() -> None:
    queue, ran = IngestQueue(), []
    first, second, third = (Job(name, ran) for name in ("first", "second", "third"))
    tasks = [
        asyncio.create_task(queue.run("ann", job, job.lines.append))
        for job in (first, second, third)
    ]
    await first.started.wait()
    tasks[1].cancel()
    with pytest.raises(asyncio.CancelledError):
        await tasks[1]
    assert third.lines == [waiting_text(2), waiting_text(1)]
    first.release.set()
    third.release.set()
    assert await tasks[2] == "third"
    assert ran == ["first", "third"]


async def test_row_a_too_many_waiting_sources_are_refused_politely() -> None:
    queue, ran = IngestQueue(max_waiting=2), []
    jobs = [Job(str(number), ran) for number in range(3)]
    tasks = [asyncio.create_task(queue.run("ann", job, None)) for job in jobs]
    await jobs[0].started.wait()
    with pytest.raises(IngestRefusedError, match="You already have 2 sources waiting"):
        await queue.run("ann", Job("one too many", ran), None)
    for job in jobs:
        job.release.set()
    await asyncio.gather(*tasks)
    assert ran == ["0", "1", "2"]
