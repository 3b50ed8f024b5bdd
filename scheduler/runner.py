"""The `Scheduler`: APScheduler's `AsyncIOScheduler` running the jobs in the bot's event loop.

Only the in-memory job store is used: the jobs are rebuilt from `JOBS` at every start
and what they act on (digest schedules, approvals, pending chunks) lives in SQLite, so
nothing is pickled and nothing is lost with the process. Owned by the composition root
as an async context manager; leaving it lets running jobs finish, then stops.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from bot.service import Bot
from scheduler.jobs import JOBS, Clock, JobSpec, run_job

__all__ = ["ScheduledJob", "Scheduler", "utc_now"]

logger = logging.getLogger(__name__)

STOP_TIMEOUT_SECONDS = 10.0


def utc_now() -> datetime:
    """The production clock."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class ScheduledJob:
    """A registered job as the scheduler holds it: its name, interval and next run."""

    name: str
    every: timedelta
    next_run: datetime | None


class Scheduler:
    """Runs `jobs` against `bot` at their intervals while the context is open."""

    def __init__(
        self,
        bot: Bot,
        *,
        clock: Clock = utc_now,
        jobs: Sequence[JobSpec] = JOBS,
        first_run_delay: timedelta = timedelta(seconds=5),
    ) -> None:
        self._bot = bot
        self._clock = clock
        self._jobs = tuple(jobs)
        self._first_run_delay = first_run_delay
        self._scheduler: AsyncIOScheduler | None = None
        self._running: set[asyncio.Task[Any]] = set()
        self._stopping = False

    async def __aenter__(self) -> Self:
        scheduler = AsyncIOScheduler(timezone=UTC)
        first = utc_now() + self._first_run_delay
        for spec in self._jobs:
            scheduler.add_job(
                self._run,
                IntervalTrigger(seconds=spec.every_seconds, timezone=UTC),
                args=(spec,),
                next_run_time=first,
                id=spec.name,
                name=spec.name,
                coalesce=True,  # after a stall, run once, not once per missed interval
                max_instances=1,  # a slow run is never overlapped by the next
                misfire_grace_time=int(spec.every_seconds),
            )
        scheduler.start()
        self._scheduler = scheduler
        logger.info("Scheduler started: %s", ", ".join(spec.name for spec in self._jobs))
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stopping = True
        if self._running:
            await asyncio.wait(set(self._running), timeout=STOP_TIMEOUT_SECONDS)
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=False)
            await asyncio.sleep(0)  # the shutdown itself runs as a callback in this loop
        self._scheduler = None
        logger.info("Scheduler stopped")

    def jobs(self) -> list[ScheduledJob]:
        """The jobs registered now, by name."""
        if self._scheduler is None:
            return []
        return sorted(
            (
                ScheduledJob(job.name, job.trigger.interval, job.next_run_time)
                for job in self._scheduler.get_jobs()
            ),
            key=lambda job: job.name,
        )

    async def _run(self, spec: JobSpec) -> bool:
        if self._stopping:
            return False
        task = asyncio.current_task()
        running = {task} if task is not None else set()
        self._running |= running
        try:
            return await run_job(self._bot, spec, self._clock)
        finally:
            self._running -= running
