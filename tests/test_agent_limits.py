"""The agent's limits end to end through the `Bot` facade, with the real core and a fake LLM
server: the daily budget under 50 concurrent turns and across a restart, provider failures
(retried errors, a stream cut mid-answer, an unavailable provider), and the tool-round cap."""

from __future__ import annotations

import asyncio
import json

from bot.app import open_lore
from graphs.agent.verify import NO_SOURCE
from storage.turns import TurnRepository
from tests.chat_turns import OWNER, ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."

# -- budget ---------------------------------------------------------------------------------

ANSWER_USAGE = (50, 750, 0)  # 50 * $1 + 750 * $2 per million tokens
ANSWER_MICROS = 50 * 1 + 750 * 2


async def test_the_daily_cap_holds_for_50_concurrent_turns_and_across_a_restart(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    cap_micros = 10_000  # a handful of calls at 800 answer tokens each
    settings = llm_settings(daily_budget_usd=cap_micros / 1_000_000)
    async with open_lore(settings) as core:
        members = [await invite(core.bot, f"member{n}") for n in range(50)]
        for n in range(50):
            fake_openai.enqueue_text(f"Answer {n}.", usage=ANSWER_USAGE)
        turns = await asyncio.gather(
            *(ask(core.bot, who, "When does the office open?") for who in members)
        )
        # Reservations open at the worst case turned some away that the settled (cheaper)
        # calls left room for: use up the rest one turn at a time, until a refusal.
        for who in members:
            turns.append(await ask(core.bot, who, "And on Saturdays?"))
            if turns[-1].refusals:
                break
        spent = round((await core.bot.budget_report(OWNER)).spent_usd * 1_000_000)
        worst_call = await core.database.fetch_value(
            "SELECT MAX(reserved_micros) FROM budget_ledger"
        )
    answered = [turn for turn in turns if turn.done.outcome == "answered"]
    refused = [turn for turn in turns if turn.refusals == ["budget_spent"]]
    assert len(answered) + len(refused) == len(turns)
    assert turns[-1].refusals == ["budget_spent"]
    assert 1 <= len(answered) <= cap_micros // ANSWER_MICROS
    assert len(fake_openai.requests) == len(answered)  # no refused turn reached the model
    assert isinstance(worst_call, int)
    assert worst_call > ANSWER_MICROS
    assert spent <= cap_micros + worst_call
    assert spent <= cap_micros  # no call cost more than its reservation here
    assert spent == len(answered) * ANSWER_MICROS
    assert round(sum(t.done.cost_usd for t in answered) * 1_000_000) == spent

    async with open_lore(settings) as again:
        assert round((await again.bot.budget_report(OWNER)).spent_usd * 1_000_000) == spent
        late = await ask(again.bot, members[0], "And on Sundays?")
    assert late.refusals == ["budget_spent"]
    assert len(fake_openai.requests) == len(answered)


# -- provider failures ----------------------------------------------------------------------


async def test_failing_provider_turns_end_cleanly_and_never_repeat_an_answer(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        await remember(core.bot, None, text=OFFICE)
        fake_openai.fail_every(2)
        turns = []
        for n in range(10):
            if n % 2:
                fake_openai.enqueue_tool_call("search_knowledge", json.dumps({"query": "office"}))
                fake_openai.enqueue_text(f"Answer {n}: it opens at 8 am [1].", chunks=4)
            else:
                fake_openai.enqueue_text(f"Answer {n}: hello again.", chunks=4)
            turns.append(await ask(core.bot, mia, f"Question {n} about the office?"))
    for n, turn in enumerate(turns):
        if turn.done.outcome == "answered":
            assert turn.errors == []
            assert turn.streamed == turn.done.answer
            assert turn.done.answer.count("Answer") == 1
            assert turn.done.answer.startswith(f"Answer {n}:")
        else:
            assert turn.done.outcome == "error"
            assert len(turn.errors) == 1
    assert sum(turn.done.outcome == "answered" for turn in turns) == 10  # retries healed all
    successes = [r for n, r in enumerate(fake_openai.requests, start=1) if n % 2]
    assert len(successes) == 15  # 5 plain turns + 5 turns with a tool round
    assert len(fake_openai.requests) == 29


async def test_a_stream_dropped_mid_answer_is_a_clean_error_and_is_not_retried(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        fake_openai.enqueue_drop_after("The office opens at eight in the", 2)
        turn = await ask(core.bot, mia, "When does the office open?")
        spent = (await core.bot.budget_report(OWNER)).spent_usd
        logged = await TurnRepository(core.database).get(turn.done.turn_id)
    assert len(fake_openai.requests) == 1
    assert turn.streamed == "The office opens at eight in the"
    assert len(turn.errors) == 1
    assert turn.done.outcome == "error"
    assert turn.done.answer == turn.errors[0].message
    assert spent > 0  # cost unknown: the whole reservation stays booked (fail closed)
    assert logged is not None
    assert logged.outcome == "error"


async def test_an_unavailable_provider_is_a_clean_error_and_costs_nothing(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        for _ in range(3):
            fake_openai.enqueue_error(503)
        turn = await ask(core.bot, mia, "When does the office open?")
        spent = (await core.bot.budget_report(OWNER)).spent_usd
    assert len(fake_openai.requests) == 3  # the first try and two retries
    assert turn.streamed == ""
    assert [e.message for e in turn.errors] == [turn.done.answer]
    assert turn.done.outcome == "error"
    assert spent == 0


# -- tool rounds ----------------------------------------------------------------------------


async def test_a_model_that_keeps_calling_tools_gets_tool_choice_none_on_the_fourth_call(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        await remember(core.bot, None, text=OFFICE)
        for n in range(3):
            query = json.dumps({"query": f"office {n}"})
            fake_openai.enqueue_tool_call("search_knowledge", query, call_id=f"call_{n}")
        fake_openai.enqueue_text("It opens at 8 am [1].")
        turn = await ask(core.bot, mia, "When does the office open?")
    choices = [request.body["tool_choice"] for request in fake_openai.requests]
    assert choices == ["auto", "auto", "auto", "none"]
    assert turn.tools == ["search_knowledge"] * 3
    assert turn.done.outcome == "answered"
    assert [c.ref for c in turn.done.citations] == [1]


async def test_a_model_that_ignores_tool_choice_none_still_ends_the_turn(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        for n in range(12):
            query = json.dumps({"query": f"office {n}"})
            fake_openai.enqueue_tool_call("search_knowledge", query, call_id=f"call_{n}")
        turn = await ask(core.bot, mia, "When does the office open?")
        unanswered = await core.bot.unanswered(OWNER)
    assert [r.body["tool_choice"] for r in fake_openai.requests] == ["auto"] * 3 + ["none"]
    assert turn.tools == ["search_knowledge"] * 3
    assert turn.done.outcome == "refused"
    assert turn.done.answer == NO_SOURCE
    assert [q.question for q in unanswered] == ["When does the office open?"]
