"""Nothing irreversible without the owner (invariant 4): a high-risk tool waits for an owner's
tap, runs at most once after an approval, never after a rejection or expiry, and the wait
survives the process that asked being killed."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import Lore, open_lore
from bot.events import ApprovalPending, Identity, TurnDone
from bot.service import Bot
from bot.settings import load_settings
from storage.approvals import Approval, ApprovalRepository, ApprovalStatus
from tests.chat_turns import OWNER, RecordingNotifier, ask, invite
from tests.conftest import SettingsFactory

PRINTER = "Tell the owner that the printer on floor 2 is broken"


def notifiers(bot: Bot) -> tuple[RecordingNotifier, RecordingNotifier]:
    """Record what reaches the owner (console) and the members (telegram)."""
    owner_box, member_box = RecordingNotifier(), RecordingNotifier()
    bot.register_notifier("console", owner_box)
    bot.register_notifier("telegram", member_box)
    return owner_box, member_box


async def request(bot: Bot, member: Identity, text: str) -> ApprovalPending:
    turn = await ask(bot, member, text)
    [pending] = turn.approvals
    assert pending.tool == "draft_contact_message"
    assert turn.done.outcome == "awaiting_approval"
    return pending


async def stored(lore: Lore, approval_id: str) -> Approval:
    approval = await ApprovalRepository(lore.database).get(approval_id)
    assert approval is not None
    return approval


async def test_invariant_4_nothing_irreversible_without_the_owner(lore: Lore) -> None:
    owner_box, member_box = notifiers(lore.bot)
    mia = await invite(lore.bot, "mia")
    pending = await request(lore.bot, mia, PRINTER)

    # Asked, not run: the owner got the request and no message.
    assert owner_box.asked == [("owner", pending)]
    assert "printer on floor 2 is broken" in pending.summary
    assert owner_box.owner_messages == []
    assert (await stored(lore, pending.approval_id)).executed_at is None
    # The person can go on chatting while the owner takes their time.
    assert (await ask(lore.bot, mia, "hi")).done.outcome == "answered"

    refused = await lore.bot.decide_approval(mia, pending.approval_id, approve=True)
    assert refused.outcome == "not_owner"
    unknown = await lore.bot.decide_approval(OWNER, "no-such-approval", approve=True)
    assert unknown.outcome == "unknown"
    assert owner_box.owner_messages == []
    assert (await stored(lore, pending.approval_id)).status is ApprovalStatus.PENDING

    approved = await lore.bot.decide_approval(OWNER, pending.approval_id, approve=True)
    assert approved.outcome == "decided"
    assert owner_box.owner_messages == [
        ("owner", "Message from Mia: The printer on floor 2 is broken.")
    ]
    [(chat, outcome, answer)] = member_box.delivered_answers()
    assert (chat, outcome) == ("mia", "answered")
    assert "delivered to the owner" in answer
    row = await stored(lore, pending.approval_id)
    assert row.status is ApprovalStatus.APPROVED
    assert row.executed_at is not None
    assert row.result_json is not None
    assert '"delivered"' in row.result_json

    for approve in (True, False):  # a second tap changes nothing
        again = await lore.bot.decide_approval(OWNER, pending.approval_id, approve=approve)
        assert again.outcome == "already_decided"
    assert len(owner_box.owner_messages) == 1
    assert len(member_box.delivered) == 1


async def test_invariant_4_a_rejected_tool_never_runs(lore: Lore) -> None:
    owner_box, member_box = notifiers(lore.bot)
    mia = await invite(lore.bot, "mia")
    pending = await request(lore.bot, mia, "Tell the owner that the coffee machine is empty")

    rejected = await lore.bot.decide_approval(OWNER, pending.approval_id, approve=False)
    late = await lore.bot.decide_approval(OWNER, pending.approval_id, approve=True)

    assert rejected.outcome == "decided"
    assert late.outcome == "already_decided"
    assert owner_box.owner_messages == []
    [(chat, outcome, answer)] = member_box.delivered_answers()
    assert (chat, outcome) == ("mia", "answered")
    assert "rejected" in answer
    row = await stored(lore, pending.approval_id)
    assert row.status is ApprovalStatus.REJECTED
    assert row.executed_at is None
    assert row.result_json is None


async def wait_until_overdue(pending: ApprovalPending) -> None:
    """Sleep (once, bounded) until the request's deadline has passed.

    `open_lore` has no clock seam (`bot.app._utc_now`), so time cannot be moved here.
    """
    left = (datetime.fromisoformat(pending.expires_at) - datetime.now(UTC)).total_seconds()
    assert left < 5
    await asyncio.sleep(max(0.0, left) + 0.05)


async def test_invariant_4_an_expired_request_never_runs_and_the_requester_is_told(
    make_settings: SettingsFactory,
) -> None:
    # 0.0003 h ~ 1.1 s: long enough for the turn to finish, short enough to wait for.
    async with open_lore(make_settings(approval_ttl_hours=0.0003)) as core:
        owner_box, member_box = notifiers(core.bot)
        mia = await invite(core.bot, "mia")
        pending = await request(core.bot, mia, PRINTER)
        assert await core.bot.maintenance.expire_approvals() == []  # not yet overdue
        await wait_until_overdue(pending)

        expired = await core.bot.maintenance.expire_approvals()
        late = await core.bot.decide_approval(OWNER, pending.approval_id, approve=True)
        row = await stored(core, pending.approval_id)
        waiting = (await core.bot.pending_approvals(OWNER)).cards

    assert expired == [pending.approval_id]
    assert late.outcome == "expired"
    assert owner_box.owner_messages == []
    [(chat, outcome, answer)] = member_box.delivered_answers()
    assert (chat, outcome) == ("mia", "answered")
    assert "expired" in answer
    assert row.status is ApprovalStatus.EXPIRED
    assert row.executed_at is None
    assert waiting == ()


async def test_invariant_4_a_late_tap_on_an_overdue_request_tells_the_requester_once(
    make_settings: SettingsFactory,
) -> None:
    async with open_lore(make_settings(approval_ttl_hours=0.0003)) as core:
        owner_box, member_box = notifiers(core.bot)
        mia = await invite(core.bot, "mia")
        pending = await request(core.bot, mia, PRINTER)
        await wait_until_overdue(pending)
        late = await core.bot.decide_approval(OWNER, pending.approval_id, approve=True)
        later = await core.bot.decide_approval(OWNER, pending.approval_id, approve=True)
        swept = await core.bot.maintenance.expire_approvals()
        row = await stored(core, pending.approval_id)
    assert (late.outcome, later.outcome) == ("expired", "expired")
    assert swept == []
    assert owner_box.owner_messages == []
    [(chat, outcome, answer)] = member_box.delivered_answers()
    assert (chat, outcome) == ("mia", "answered")
    assert "expired" in answer
    assert row.status is ApprovalStatus.EXPIRED
    assert row.executed_at is None


# -- across a restart -----------------------------------------------------------------------

# Process A: a member asks to message the owner; A then exits or stops at `mode` to be killed.
PROCESS_A = """
import asyncio, sys, time
from bot.app import open_lore
from bot.events import ApprovalPending, ChatRef, Identity
from bot.settings import load_settings

OWNER = Identity("console", "owner", "Olivia Owner")
MIA = Identity("telegram", "mia", "Mia")


async def main(mode):
    async with open_lore(load_settings()) as core:
        invite = await core.bot.create_invite(OWNER)
        await core.bot.redeem_invite(MIA, invite.code)
        chat = ChatRef("telegram", "mia")
        async for event in core.bot.handle_message(MIA, chat, sys.argv[2]):
            if isinstance(event, ApprovalPending):
                print("PENDING", event.approval_id, flush=True)
                if mode == "kill-at-pending":
                    time.sleep(600)  # the loop stops here: the wait is never checkpointed
        print("WAITING", flush=True)
        if mode == "kill-when-waiting":
            time.sleep(600)


asyncio.run(main(sys.argv[1]))
"""


async def run_process_a(workdir: Path, mode: str) -> str:
    """Run process A in `workdir` until it exits or reaches the point where it is killed."""
    script = workdir / "process_a.py"
    script.write_text(PROCESS_A)
    log = workdir / f"process_a-{mode}.log"
    with log.open("wb") as errors:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            mode,
            PRINTER,
            cwd=workdir,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
        )
        assert child.stdout is not None
        async with asyncio.timeout(120):
            first = (await child.stdout.readline()).decode().split()
            assert first[:1] == ["PENDING"], log.read_text()
            if mode == "kill-when-waiting":
                assert await child.stdout.readline() == b"WAITING\n", log.read_text()
            if mode == "exit":
                await child.stdout.read()
                assert await child.wait() == 0, log.read_text()
            else:
                child.send_signal(signal.SIGKILL)
                assert await child.wait() == -signal.SIGKILL
    return first[1]


def checkpointed_threads(path: Path) -> set[str]:
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    connection.close()
    return {row[0] for row in rows}


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", ["exit", "kill-when-waiting", "kill-at-pending"])
async def test_invariant_4_an_approval_survives_a_restart(
    tmp_path: Path, models_dir: Path, mode: str
) -> None:
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\n"
        "LOG_LEVEL=WARNING\n"
    )
    approval_id = await run_process_a(tmp_path, mode)
    settings = load_settings(_env_file=tmp_path / ".env")
    paused = f"approval:{approval_id}" in checkpointed_threads(settings.checkpoint_path)
    assert paused is (mode != "kill-at-pending")

    # Process B (this one) opens the same data directory; the owner approves there.
    async with open_lore(settings) as core:
        owner_box, member_box = notifiers(core.bot)
        recovered = await core.bot.maintenance.recover_approvals()
        approved = await core.bot.decide_approval(OWNER, approval_id, approve=True)
        again = await core.bot.decide_approval(OWNER, approval_id, approve=True)
        row = await stored(core, approval_id)

    assert recovered == (0 if paused else 1)  # a checkpointed wait is resumed, not restarted
    assert approved.outcome == "decided"
    assert again.outcome == "already_decided"
    assert owner_box.owner_messages == [
        ("owner", "Message from Mia: The printer on floor 2 is broken.")
    ]
    [(chat, events)] = member_box.delivered
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert chat == "mia"
    assert "delivered to the owner" in done.answer
    assert row.status is ApprovalStatus.APPROVED
    assert row.executed_at is not None
    assert row.result_json is not None
