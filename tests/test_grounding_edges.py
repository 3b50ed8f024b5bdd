"""What a person sees of a real model's answer, asserted on what the chat received: the fake
Telegram server's record of every draft and message, and the terminal chat's output. Tool-call
markup, an imitated tool response, a leak of the system prompt and unsupported claims never
reach the screen; a model that breaks off or is over budget is replaced by the sources,
once, with a line that says so."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.console.chat import ConsoleChat
from bot.settings import Settings
from graphs.agent.verify import FALLBACK_NOTES
from storage.budget import BudgetLedger
from storage.money import Money
from tests.chat_turns import OWNER, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.test_telegram import ALICE, final_answer, join, send, telegram

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
BACKUP = "Backups: to back up Lore, run `lore backup PATH`; it snapshots DATA_DIR."
JUNK = ("<tool", "</tool", '{"', '"ref"', "<|", "backup.backup")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
def tg_llm_settings(llm_settings: SettingsFactory) -> Settings:
    return llm_settings(owners="telegram:1001,console:owner")


def shown_to(fake: FakeTelegram, chat_id: int) -> list[str]:
    """Every text the member's chat was sent: drafts, messages and edits."""
    methods = {"sendMessageDraft", "sendMessage", "editMessageText"}
    return [c.text for c in fake.calls if c.method in methods and c.chat_id == chat_id]


async def test_invariant_5_an_echoed_tool_response_never_reaches_a_telegram_chat(
    tg_llm_settings: Settings, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    async with telegram(tg_llm_settings, fake) as (lore, _):
        await remember(lore.bot, None, BACKUP, title="Backups")
        await join(fake, ALICE)
        fake_openai.enqueue_recording("llamacpp_tool_response_echo")
        await send(fake, ALICE, "How do I back up Lore?")
        answer = await final_answer(fake, ALICE.id)
    assert not [text for text in shown_to(fake, ALICE.id) if any(j in text for j in JUNK)]
    assert "lore backup PATH" in answer.text
    assert FALLBACK_NOTES["incomplete"] in answer.text


async def test_invariant_5_a_mid_stream_outage_shows_the_sources_once_in_telegram(
    tg_llm_settings: Settings, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    async with telegram(tg_llm_settings, fake) as (lore, _):
        await remember(lore.bot, None, OFFICE, title="Office hours")
        await join(fake, ALICE)
        # One supported sentence, one invented one, then the connection drops.
        fake_openai.enqueue_drop_after(
            "The office opens at 8 am [1]. It also has a rooftop pool with a view of the", 6
        )
        await send(fake, ALICE, "When does the office open?")
        answer = await final_answer(fake, ALICE.id)
    shown = shown_to(fake, ALICE.id)
    assert not [text for text in shown if "rooftop" in text]
    assert answer.text.count("opens at 8 am") == 1  # the sources' answer, not both
    assert FALLBACK_NOTES["incomplete"] in answer.text


async def test_invariant_3_over_budget_the_sources_answer_in_telegram_with_the_reason(
    llm_settings: SettingsFactory, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    settings = llm_settings(owners="telegram:1001,console:owner", daily_budget_usd=0.5)
    async with telegram(settings, fake) as (lore, _):
        await remember(lore.bot, None, OFFICE, title="Office hours")
        await join(fake, ALICE)
        day = (await lore.bot.budget_report(OWNER)).day
        await BudgetLedger(lore.database).reserve(day, Money(500_000), Money(500_000))
        await send(fake, ALICE, "When does the office open?")
        answer = await final_answer(fake, ALICE.id)
    assert fake_openai.requests == []
    assert "8 am" in answer.text
    assert FALLBACK_NOTES["budget_spent"] in answer.text


async def test_invariant_5_the_terminal_shows_no_tool_call_and_runs_it(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    from bot.app import open_lore  # noqa: PLC0415 - the terminal chat over the real core

    written: list[str] = []
    lines = iter(["How do I back up Lore?"])

    async def read_line(_prompt: str) -> str | None:
        return next(lines, None)

    async with open_lore(llm_settings()) as lore:
        await remember(lore.bot, None, BACKUP, title="Backups")
        fake_openai.enqueue_recording("llamacpp_text_tool_call")  # a call written as text
        fake_openai.enqueue_text("To back up Lore, run `lore backup PATH` [1].")
        chat = ConsoleChat(lore.bot, read_line=read_line, write=written.append, interactive=False)
        await chat.run()
    screen = "".join(written)
    assert not [junk for junk in JUNK if junk in screen], screen
    assert "(Searching the knowledge base...)" in screen
    assert "To back up Lore, run `lore backup PATH` [1]." in screen
    assert "[1] Backups" in screen
    assert len(fake_openai.requests) == 2  # the written call ran, then the model answered
