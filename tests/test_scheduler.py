"""The scheduler: the expected jobs are registered in APScheduler's in-memory store; each job
runs with an injected clock (called directly, never sleeping); a failing job is contained;
leaving the scheduler lets a running job finish."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from bot.app import Lore
from bot.events import ChatRef
from bot.service import Bot
from scheduler.jobs import JOBS, JobSpec, run_job
from scheduler.runner import Scheduler
from tests.chat_turns import OWNER, RecordingNotifier, ask, invite

LATER = datetime.now(UTC) + timedelta(days=3)


def job(name: str) -> JobSpec:
    [spec] = [spec for spec in JOBS if spec.name == name]
    return spec


async def test_the_scheduler_registers_the_expected_jobs_in_memory(lore: Lore) -> None:
    async with Scheduler(lore.bot, clock=lambda: LATER) as scheduler:
        jobs = scheduler.jobs()
    assert [(j.name, j.every) for j in jobs] == [
        ("build_memory", timedelta(minutes=30)),
        ("expire_approvals", timedelta(minutes=1)),
        ("housekeeping", timedelta(hours=1)),
        ("reindex", timedelta(minutes=5)),
        ("send_digests", timedelta(minutes=1)),
    ]
    assert all(j.next_run is not None for j in jobs)
    assert scheduler.jobs() == []  # stopped: nothing left registered


async def test_the_expiry_job_rejects_overdue_requests_and_tells_both_sides(lore: Lore) -> None:
    owner_box, member_box = RecordingNotifier(), RecordingNotifier()
    lore.bot.register_notifier("console", owner_box)
    lore.bot.register_notifier("telegram", member_box)
    mia = await invite(lore.bot, "mia")
    turn = await ask(lore.bot, mia, "Tell the owner that the printer on floor 2 is broken")
    [pending] = turn.approvals

    assert await run_job(lore.bot, job("expire_approvals"), lambda: datetime.now(UTC))
    assert member_box.delivered == []  # not overdue yet
    assert await run_job(lore.bot, job("expire_approvals"), lambda: LATER)

    [(chat, outcome, answer)] = member_box.delivered_answers()
    assert (chat, outcome) == ("mia", "answered")
    assert "expired" in answer
    [(owner_chat, notice)] = owner_box.texts
    assert owner_chat == OWNER.platform_user_id
    assert notice.startswith("⌛ Expired without a decision")
    assert "printer on floor 2" in notice
    assert owner_box.owner_messages == []  # the tool never ran
    late = await lore.bot.decide_approval(OWNER, pending.approval_id, approve=True)
    assert late.outcome == "expired"


async def test_the_digest_job_sends_what_is_due_at_the_injected_time(lore: Lore) -> None:
    box = RecordingNotifier()
    lore.bot.register_notifier("telegram", box)
    mia = await invite(lore.bot, "mia")
    local = LATER.replace(hour=6, minute=0, second=0, microsecond=0)
    await lore.bot.set_digest(mia, ChatRef("telegram", "mia"), "06:00", "UTC")
    assert await run_job(lore.bot, job("send_digests"), lambda: local - timedelta(minutes=1))
    assert box.texts == []
    assert await run_job(lore.bot, job("send_digests"), lambda: local)
    assert [chat for chat, _ in box.texts] == ["mia"]


async def test_the_reindex_job_runs_the_repair(lore: Lore) -> None:
    assert await run_job(lore.bot, job("reindex"), lambda: LATER)
    stats = await lore.bot.maintenance.stats()
    assert stats.pending_chunks == 0


async def test_a_failing_job_is_contained_and_logged(
    lore: Lore, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(_bot: Bot, _now: datetime) -> str:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="scheduler.jobs"):
        ran = await run_job(lore.bot, JobSpec("broken", 60.0, broken), lambda: LATER)
    assert ran is False
    assert "Job broken failed" in caplog.text


async def test_leaving_the_scheduler_lets_a_running_job_finish(lore: Lore) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    seen: list[datetime] = []

    async def slow(_bot: Bot, now: datetime) -> str:
        started.set()
        await release.wait()
        seen.append(now)
        return "done"

    spec = JobSpec("slow", 3600.0, slow)
    async with Scheduler(lore.bot, clock=lambda: LATER, jobs=[spec], first_run_delay=timedelta()):
        await asyncio.wait_for(started.wait(), timeout=10)
        asyncio.get_running_loop().call_soon(release.set)
    assert seen == [LATER]
