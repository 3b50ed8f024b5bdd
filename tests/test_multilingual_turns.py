"""What Lore says of its own in a turn follows the member's language: the status lines while a
tool runs, the guards' refusals, and the line under an answer the sources gave instead of
the model; the question's language when it can be told, else LANGUAGE. One table per place
(`graphs.agent.status_lines`, `guard_words`, `verify_words`), each complete."""

from __future__ import annotations

import dataclasses
import string

import pytest

from bot.app import open_lore
from bot.events import ToolStatus
from graphs.agent.guard_words import guard_words
from graphs.agent.status_lines import STATUS_LINES, status_line
from graphs.agent.tools import TOOLS
from graphs.agent.verify_words import verify_words
from graphs.guards import GUARD_IBAN, MESSAGES
from graphs.llm.offline_language import ANSWER_LANGUAGES, phrases
from storage.budget import BudgetLedger
from storage.money import Money
from tests.chat_turns import OWNER, Turn, ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

HEATING = (
    "Den Schlüssel für den Heizraum hat Herr Becker im Erdgeschoss. Die Wartung des"
    " Heizkessels übernimmt jedes Jahr im Oktober die Firma Müller Haustechnik."
)


def statuses(turn: Turn) -> list[str]:
    return [event.message for event in turn.events if isinstance(event, ToolStatus)]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("language", ANSWER_LANGUAGES)
def test_every_table_speaks_every_language_with_the_same_blanks(language: str) -> None:
    english_guard, guard = guard_words("en"), guard_words(language)
    for field in dataclasses.fields(guard):
        theirs, ours = getattr(english_guard, field.name), getattr(guard, field.name)
        if isinstance(ours, str):
            assert _fields(ours) == _fields(theirs), field.name
    assert set(guard.guards) == (set(MESSAGES) if language != "en" else set())
    english_verify, verify = verify_words("en"), verify_words(language)
    assert set(verify.fallback) == set(english_verify.fallback)
    if language != "en":  # translated, every one
        pairs = [(verify.fallback[k], english_verify.fallback[k]) for k in verify.fallback]
        pairs += [
            (getattr(guard, f.name), getattr(english_guard, f.name))
            for f in dataclasses.fields(guard)
            if f.name != "guards"
        ]
        pairs += [
            (getattr(verify, f.name), getattr(english_verify, f.name))
            for f in dataclasses.fields(verify)
            if f.name != "fallback"
        ]
        assert all(ours != theirs for ours, theirs in pairs)
    assert set(STATUS_LINES[language]) == set(STATUS_LINES["en"]) >= set(TOOLS)


def test_a_language_without_words_gets_english() -> None:
    assert status_line("search_knowledge", "ko") == "Searching the knowledge base..."
    assert status_line("no_such_tool", "de") == "Einen Moment..."
    assert guard_words("ko") == guard_words("en")
    assert verify_words("ko") == verify_words("en")


async def test_status_lines_and_refusals_follow_the_question_else_the_bots_language(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(max_message_chars=300, rate_limit_turns=4)
    async with open_lore(settings) as core:
        mia = await invite(core.bot, "mia")
        german = await ask(core.bot, mia, "Wer repariert die Kaffeemaschine im dritten Stock?")
        spanish = await ask(
            core.bot, mia, "¿Puedes guardar mi cuenta ES91 2100 0418 4502 0005 1332 para pagar?"
        )
        long_french = "Pourriez-vous résumer ceci ? " + "Bonjour. " * 40
        french = await ask(core.bot, mia, long_french)
        short = await ask(core.bot, mia, "VPN?")
        russian = await ask(core.bot, mia, "Кто чинит кофемашину на третьем этаже?")
    assert statuses(german) == [
        "Ich durchsuche die Wissensdatenbank...",
        "Ich durchsuche deine Notizen...",
    ]
    assert german.done.answer == phrases("de").refusal_with_notes
    assert spanish.refusals == [GUARD_IBAN]
    assert spanish.done.answer == guard_words("es").guards[GUARD_IBAN]
    assert french.refusals == ["message_too_long"]
    assert french.done.answer == guard_words("fr").too_long.format(
        length=len(long_french), limit=300
    )
    assert statuses(short) == ["Searching the knowledge base...", "Searching your notes..."]
    assert russian.refusals == ["rate_limited"]
    assert russian.done.answer == guard_words("ru").rate_limited.format(minutes=10)


async def test_a_short_question_gets_lore_s_words_in_the_language_setting(
    make_settings: SettingsFactory,
) -> None:
    async with open_lore(make_settings(language="ja")) as core:
        mia = await invite(core.bot, "mia")
        turn = await ask(core.bot, mia, "VPN?")
    assert statuses(turn) == [
        "ナレッジベースを検索しています...",
        "あなたのメモを検索しています...",
    ]
    assert turn.done.answer == phrases("ja").refusal_with_notes


async def test_the_line_under_an_answer_from_the_sources_is_in_the_members_language(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings(daily_budget_usd=0.5)) as core:
        mia = await invite(core.bot, "mia")
        await remember(core.bot, None, HEATING, title="Heizraum und Heizung")
        fake_openai.enqueue_text("Die Wartung macht jeden Dienstag Herr Schmidt.")
        unverified = await ask(core.bot, mia, "Wer übernimmt die Wartung des Heizkessels?")
        report = await core.bot.budget_report(OWNER)
        left = Money(report.cap.micros - report.spent.micros)
        assert await BudgetLedger(core.database).reserve(report.day, left, report.cap)
        spent = await ask(core.bot, mia, "Qui s’occupe de l’entretien de la chaudière ?")
    assert unverified.done.fallback == "unverified"
    assert "Müller Haustechnik" in unverified.done.answer
    assert "Schmidt" not in unverified.done.answer
    assert unverified.done.answer.endswith(verify_words("de").fallback["unverified"])
    assert spent.done.fallback == "budget_spent"
    assert spent.done.answer.endswith(verify_words("fr").fallback["budget_spent"])
