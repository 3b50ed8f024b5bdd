"""Morning digests: set in chat, sent once per member per day at their local time (with a fake
clock, never sleeping), retried after a failed send, never twice across a restart."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.app import Lore, open_lore
from bot.digests import DIGEST_GRACE, due_day
from bot.errors import DigestError
from bot.events import ChatRef, Identity
from bot.settings import Settings
from storage.budget import BudgetLedger
from storage.digests import DigestRepository, DigestSchedule
from storage.ids import UserId
from storage.money import Money
from tests.chat_turns import OWNER, ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

BERLIN = ZoneInfo("Europe/Berlin")
# Tomorrow (real date) so documents ingested now count as new for a digest set up now.
DAY = date.today() + timedelta(days=1)  # noqa: DTZ011 - only picks a date near real time


def berlin(hour: int, minute: int, *, days: int = 0) -> datetime:
    """A moment on DAY (+days) in Berlin, as UTC."""
    local = datetime(DAY.year, DAY.month, DAY.day, hour, minute, tzinfo=BERLIN)
    return (local + timedelta(days=days)).astimezone(UTC)


def private_chat(who: Identity) -> ChatRef:
    return ChatRef(who.platform, who.platform_user_id)


@dataclass
class DigestBox:
    """A `Notifier` that records texts and can be told to fail the next sends."""

    texts: list[tuple[str, str]] = field(default_factory=list)
    fail_next: list[str] = field(default_factory=list)  # "raise" or "none", consumed in order

    async def ask_owner(self, owner_platform_user_id: str, request: object) -> None:
        """Unused here."""

    async def deliver(self, chat: ChatRef, events: object) -> None:
        """Unused here."""

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """Unused here."""

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Record the text and return an id, unless scripted to fail."""
        if self.fail_next:
            mode = self.fail_next.pop(0)
            if mode == "raise":
                raise ConnectionError("platform unreachable")
            return None
        self.texts.append((chat.chat_id, text))
        return f"m{len(self.texts)}"


def boxes(lore: Lore) -> DigestBox:
    box = DigestBox()
    lore.bot.register_notifier("telegram", box)
    lore.bot.register_notifier("console", box)
    return box


async def member_with_digest(lore: Lore, name: str = "mia", **kwargs: bool) -> Identity:
    mia = await invite(lore.bot, name)
    await lore.bot.set_digest(mia, private_chat(mia), "07:30", "Europe/Berlin", **kwargs)
    return mia


async def user_id(lore: Lore, who: Identity) -> UserId:
    user = await lore.bot.user_for(who)
    assert user is not None
    return user.id


async def test_a_digest_due_at_0730_berlin_is_sent_once_even_across_a_restart(
    settings: Settings,
) -> None:
    async with open_lore(settings) as lore:
        box = boxes(lore)
        mia = await member_with_digest(lore)
        mia_id = await user_id(lore, mia)
        await remember(lore.bot, None, text="Lunch moves to 12:30.", title="Lunch")
        await remember(lore.bot, mia, "My bike code is 4411.", title="Bike")

        early = await lore.bot.maintenance.send_due_digests(berlin(7, 29))
        on_time = await lore.bot.maintenance.send_due_digests(berlin(7, 30))
        again = await lore.bot.maintenance.send_due_digests(
            berlin(7, 30, days=0) + timedelta(seconds=30)
        )
    assert (early.sent, on_time.sent, again.sent) == (0, 1, 0)
    [(chat, text)] = box.texts
    assert chat == "mia"
    assert "New in the shared knowledge (1):\n• Lunch" in text
    assert "New in your notes (1):\n• Bike" in text

    async with open_lore(settings) as lore:  # the process restarts at 07:31
        box = boxes(lore)
        after_restart = await lore.bot.maintenance.send_due_digests(berlin(7, 31))
        deliveries = await DigestRepository(lore.database).deliveries(mia_id)
    assert after_restart.sent == 0
    assert box.texts == []
    assert [(d.day, d.message_id) for d in deliveries] == [(DAY.isoformat(), "m1")]


async def test_a_failed_send_is_retried_with_backoff_and_then_counts_once(lore: Lore) -> None:
    box = boxes(lore)
    mia = await member_with_digest(lore)
    box.fail_next = ["raise", "none"]

    first = await lore.bot.maintenance.send_due_digests(berlin(7, 30))  # raises: retry in 1 minute
    waiting = await lore.bot.maintenance.send_due_digests(
        berlin(7, 30, days=0) + timedelta(seconds=30)
    )
    second = await lore.bot.maintenance.send_due_digests(
        berlin(7, 31)
    )  # returns None: retry in 2 minutes
    still_waiting = await lore.bot.maintenance.send_due_digests(berlin(7, 32))
    third = await lore.bot.maintenance.send_due_digests(berlin(7, 33))
    later = await lore.bot.maintenance.send_due_digests(berlin(7, 40))

    assert (first.failed, waiting.failed + waiting.sent, second.failed) == (1, 0, 1)
    assert still_waiting.sent == 0
    assert (third.sent, later.sent) == (1, 0)
    assert len(box.texts) == 1
    deliveries = await DigestRepository(lore.database).deliveries(await user_id(lore, mia))
    assert len(deliveries) == 1


async def test_a_missed_digest_is_sent_late_within_the_grace_period_but_not_after(
    lore: Lore,
) -> None:
    box = boxes(lore)
    await member_with_digest(lore)
    late = await lore.bot.maintenance.send_due_digests(berlin(10, 0))  # back from downtime at 10:00
    assert late.sent == 1
    too_late = await lore.bot.maintenance.send_due_digests(berlin(7, 30, days=1) + DIGEST_GRACE)
    assert too_late.sent == 0  # the next day's digest was missed for good
    next_day = await lore.bot.maintenance.send_due_digests(berlin(7, 30, days=2))
    assert next_day.sent == 1
    assert len(box.texts) == 2


def test_due_day_handles_a_late_time_whose_grace_crosses_midnight() -> None:
    schedule = DigestSchedule(
        user_id=UserId("u"),
        platform="telegram",
        chat_id="1",
        local_time="23:30",
        timezone="Europe/Berlin",
        quiet_days=False,
        enabled=True,
        last_sent_day=None,
        failures=0,
        retry_at=None,
        created_at=berlin(0, 0),
    )
    assert due_day(schedule, berlin(23, 29)) is None
    assert due_day(schedule, berlin(0, 30, days=1)) == DAY.isoformat()
    assert due_day(schedule, berlin(3, 0, days=1)) is None


async def test_nothing_new_is_one_line_unless_the_member_asked_for_quiet_days(
    lore: Lore,
) -> None:
    box = boxes(lore)
    mia = await member_with_digest(lore, "mia")
    await member_with_digest(lore, "ben", quiet_days=True)
    run = await lore.bot.maintenance.send_due_digests(berlin(7, 30))
    assert (run.sent, run.quiet) == (1, 1)
    [(chat, text)] = box.texts
    assert chat == mia.platform_user_id
    assert text == "Good morning, Mia! Nothing new since your last digest."
    assert (
        await lore.bot.maintenance.send_due_digests(berlin(7, 45))
    ).quiet == 0  # the day is done


async def test_an_owners_digest_lists_pending_approvals_and_yesterdays_spend(
    make_settings: SettingsFactory,
) -> None:
    # Requests live 72 h here so one made now is still pending at 07:30 tomorrow.
    async with open_lore(make_settings(approval_ttl_hours=72)) as lore:
        await _owner_digest(lore)


async def _owner_digest(lore: Lore) -> None:
    box = boxes(lore)
    await lore.bot.set_digest(OWNER, private_chat(OWNER), "07:30", "Europe/Berlin")
    mia = await invite(lore.bot, "mia")
    turn = await ask(lore.bot, mia, "Tell the owner that the printer on floor 2 is broken")
    assert turn.done.outcome == "awaiting_approval"
    await ask(lore.bot, mia, "What is the airspeed of an unladen swallow?")
    ledger = BudgetLedger(lore.database)
    yesterday = (DAY - timedelta(days=1)).isoformat()
    reservation = await ledger.reserve(yesterday, Money(250_000), Money(1_000_000), purpose="test")
    assert reservation is not None
    await ledger.settle(reservation, Money(123_400))

    await lore.bot.maintenance.send_due_digests(berlin(7, 30))
    [text] = [text for chat, text in box.texts if chat == "owner"]
    assert "Waiting for your approval (1):\n• " in text
    assert "printer on floor 2" in text
    assert "Questions still without a source (1):\n• What is the airspeed" in text
    assert "Yesterday's spend: $0.1234 of the $1.00 daily cap." in text


async def test_a_members_digest_shows_neither_approvals_spend_nor_others_notes(
    lore: Lore,
) -> None:
    box = boxes(lore)
    mia = await member_with_digest(lore, "mia")
    ben = await invite(lore.bot, "ben")
    await remember(lore.bot, ben, "Ben's secret plan.", title="Ben plan")
    await ask(lore.bot, ben, "What is the airspeed of an unladen swallow?")
    await lore.bot.maintenance.send_due_digests(berlin(7, 30))
    [(_, text)] = box.texts
    assert text.startswith(f"Good morning, {mia.display_name}! Nothing new")
    assert "Ben" not in text
    assert "spend" not in text


REFUSED = [
    ("25:00", "Europe/Berlin", "Please use HH:MM, e.g. 07:30."),
    ("seven", "Europe/Berlin", "Please use HH:MM, e.g. 07:30."),
    ("07:30", "Europe/Berln", "Please use a name like Europe/Berlin."),
    ("07:30", "Europe", "Please use a name like Europe/Berlin."),
    ("07:30", "../etc/passwd", "Please use a name like Europe/Berlin."),
]


async def test_an_invalid_time_or_timezone_is_refused_politely(lore: Lore) -> None:
    mia = await invite(lore.bot, "mia")
    for local_time, timezone, reason in REFUSED:
        with pytest.raises(DigestError) as refused:
            await lore.bot.set_digest(mia, private_chat(mia), local_time, timezone)
        assert str(refused.value).endswith(reason), (local_time, timezone)
    assert await DigestRepository(lore.database).get(await user_id(lore, mia)) is None


async def test_digests_are_set_in_private_chats_only_and_can_be_turned_off(lore: Lore) -> None:
    box = boxes(lore)
    mia = await invite(lore.bot, "mia")
    with pytest.raises(DigestError, match="private chat"):
        await lore.bot.set_digest(mia, ChatRef("telegram", "team", is_group=True), "7:30", "UTC")
    schedule = await lore.bot.set_digest(mia, private_chat(mia), "7:05", "Europe/Berlin")
    assert (schedule.local_time, schedule.timezone) == ("07:05", "Europe/Berlin")
    user = await lore.bot.user_for(mia)
    assert user is not None
    assert user.timezone == "Europe/Berlin"
    assert await lore.bot.digest_off(mia) is True
    assert await lore.bot.digest_off(mia) is False
    assert (await lore.bot.maintenance.send_due_digests(berlin(7, 30))).sent == 0
    assert box.texts == []


async def test_digest_now_sends_at_once_and_leaves_the_daily_digest_due(lore: Lore) -> None:
    box = boxes(lore)
    mia = await member_with_digest(lore)
    message_id = await lore.bot.digest_now(mia, private_chat(mia))
    assert message_id == "m1"
    assert box.texts[0][1].startswith("Good morning, Mia!")
    assert (await lore.bot.maintenance.send_due_digests(berlin(7, 30))).sent == 1
    box.fail_next = ["none"]
    with pytest.raises(DigestError, match="could not send"):
        await lore.bot.digest_now(mia, private_chat(mia))
    stranger = Identity("telegram", "nobody", "Nobody")
    with pytest.raises(DigestError, match="invited"):
        await lore.bot.digest_now(stranger, private_chat(stranger))


SUMMARY = "Morning Mia! The shared knowledge gained Lunch, and your notes gained Bike."


async def _digest_with_news(lore: Lore) -> DigestBox:
    box = boxes(lore)
    mia = await member_with_digest(lore)
    await remember(lore.bot, None, text="Lunch moves to 12:30.", title="Lunch")
    await remember(lore.bot, mia, "My bike code is 4411.", title="Bike")
    return box


def _budget_days() -> set[str]:
    """Today in the budget's timezone (UTC in tests), both sides of a midnight just passed."""
    now = datetime.now(UTC)
    return {(now - timedelta(minutes=1)).date().isoformat(), now.date().isoformat()}


async def _settled(lore: Lore) -> tuple[int, int]:
    """Settled and still-open micro-dollars over today's budget days."""
    ledger = BudgetLedger(lore.database)
    days = [await ledger.summary(day) for day in sorted(_budget_days())]
    return sum(d.settled.micros for d in days), sum(d.open.micros for d in days)


async def test_with_a_configured_model_the_digest_is_its_summary_booked_on_the_budget(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue_text(SUMMARY, usage=(400, 30, 0))
    async with open_lore(llm_settings()) as lore:
        box = await _digest_with_news(lore)
        run = await lore.bot.maintenance.send_due_digests(berlin(7, 30))
        settled, still_open = await _settled(lore)
    assert run.sent == 1
    assert box.texts == [("mia", SUMMARY)]
    assert (settled, still_open) == (400 * 1 + 30 * 2, 0)  # $1 in, $2 out per million tokens
    [request] = fake_openai.requests
    system, user = request.body["messages"]
    assert system["role"] == "system"
    assert "for Mia" in system["content"]
    assert "keep every document title" in system["content"]
    assert user["role"] == "user"
    assert "New in the shared knowledge (1):\n• Lunch" in user["content"]
    assert "tools" not in request.body
    assert 300 in (request.body.get("max_tokens"), request.body.get("max_completion_tokens"))


async def test_with_the_budget_spent_the_plain_digest_is_sent_and_the_model_never_asked(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    fake_openai.enqueue_text(SUMMARY)
    async with open_lore(llm_settings(daily_budget_usd=0.0001)) as lore:
        box = await _digest_with_news(lore)
        run = await lore.bot.maintenance.send_due_digests(berlin(7, 30))
        settled, still_open = await _settled(lore)
    assert run.sent == 1
    [(_, text)] = box.texts
    assert text.startswith("Good morning, Mia! Your digest for")
    assert "New in your notes (1):\n• Bike" in text
    assert fake_openai.requests == []
    assert (settled, still_open) == (0, 0)


async def test_when_the_model_fails_the_plain_digest_is_sent_and_nothing_is_booked(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    for _ in range(3):  # the first try and both retries
        fake_openai.enqueue_error(500, retry_after=0)
    async with open_lore(llm_settings()) as lore:
        box = await _digest_with_news(lore)
        mia = Identity("telegram", "mia", "Mia")
        message_id = await lore.bot.digest_now(mia, private_chat(mia))
        settled, still_open = await _settled(lore)
    assert message_id == "m1"
    [(_, text)] = box.texts
    assert text.startswith("Good morning, Mia! Your digest for")
    assert "New in the shared knowledge (1):\n• Lunch" in text
    assert len(fake_openai.requests) == 3
    assert (settled, still_open) == (0, 0)
