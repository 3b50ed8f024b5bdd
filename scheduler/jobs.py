"""The scheduled jobs: each is a small async function that calls one `Bot` method at a given time.

Jobs take the moment they run for (`now`) from an injected `Clock`, so tests call them
directly with a fake clock and never sleep; APScheduler only decides when they run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.service import Bot
from bot.sources import chunks_text

__all__ = [
    "JOBS",
    "Clock",
    "JobSpec",
    "build_memory",
    "expire_approvals",
    "housekeeping",
    "reindex",
    "run_job",
    "scan_watched_sources",
    "send_digests",
]

logger = logging.getLogger(__name__)


class Clock(Protocol):
    """The current moment, timezone-aware (UTC in production, anything in tests)."""

    def __call__(self) -> datetime:
        """Now."""


Job = Callable[[Bot, datetime], Awaitable[str]]


async def expire_approvals(bot: Bot, now: datetime) -> str:
    """Auto-reject approval requests overdue at `now`; requester and owners are told."""
    expired = await bot.maintenance.expire_approvals(now)
    return f"{len(expired)} approvals expired"


async def reindex(bot: Bot, _now: datetime) -> str:
    """Self-repair: re-embed pending chunks, remove orphan points and folders."""
    report = await bot.maintenance.reindex()
    return (
        f"{chunks_text(report.reembedded_chunks)} re-embedded, "
        f"{report.removed_orphan_points} orphan points removed"
    )


async def build_memory(bot: Bot, now: datetime) -> str:
    """Embed the answered exchanges of the last 2 hours into conversation memory (idempotent)."""
    report = await bot.maintenance.build_memory(now)
    return f"{report.points_written} exchanges remembered of {report.turns_read} turns read"


async def scan_watched_sources(bot: Bot, now: datetime) -> str:
    """Fetch the watched feeds and pages that are due; ingest what is new into shared knowledge."""
    report = await bot.maintenance.scan_watched_sources(now)
    return (
        f"{len(report.sources)} sources checked, {report.saved} documents saved, "
        f"{report.failed} failed"
    )


async def housekeeping(bot: Bot, now: datetime) -> str:
    """Forget what no limit looks at any more (counted attempts older than a day)."""
    pruned = await bot.maintenance.housekeeping(now)
    return f"{pruned} old attempts forgotten"


async def send_digests(bot: Bot, now: datetime) -> str:
    """Scan the watched sources that are due, then send the morning digests due at `now`
    (retries and late sends included), so a digest carries what the scan just found."""
    scan = await scan_watched_sources(bot, now)
    run = await bot.maintenance.send_due_digests(now)
    return f"{scan}; {run.sent} digests sent, {run.failed} failed, {run.quiet} quiet"


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A job and how often it runs."""

    name: str
    every_seconds: float
    run: Job


JOBS: tuple[JobSpec, ...] = (
    JobSpec("expire_approvals", 60.0, expire_approvals),
    JobSpec("reindex", 300.0, reindex),
    # Also scans the watched sources that are due (each every WATCH_INTERVAL_MINUTES).
    JobSpec("send_digests", 60.0, send_digests),
    # Reads a 2-hour window each time, so a failed run heals on the next.
    JobSpec("build_memory", 1800.0, build_memory),
    JobSpec("housekeeping", 3600.0, housekeeping),
)


async def run_job(bot: Bot, spec: JobSpec, clock: Clock) -> bool:
    """Run one job once at `clock()`: the job boundary, which logs and never raises."""
    started = time.perf_counter()
    try:
        summary = await spec.run(bot, clock())
    except Exception:  # a job boundary: log it; the next run tries again
        logger.exception("Job %s failed", spec.name)
        return False
    logger.info("Job %s: %s (%.0f ms)", spec.name, summary, (time.perf_counter() - started) * 1e3)
    return True
