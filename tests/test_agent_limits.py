"""The agent's limits end to end through the `Bot` facade, with the real core and a fake LLM
server: the daily budget under 50 concurrent turns and across a restart, provider failures
(retried errors, a stream cut mid-answer, an unavailable provider), and the tool-round cap.
Beside a real model, a turn the model cannot finish is answered from the sources directly
(`TurnDone.fallback` says why), at no cost."""

from __future__ import annotations

import asyncio
import json

from bot.app import open_lore
from graphs.agent.verify import FALLBACK_NOTES
from storage.turns import TurnRepository
from tests.chat_turns import OWNER, ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
ANSWER = "The office opens at 8 am [1]."

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
        await remember(core.bot, None, text=OFFICE)
        for _ in range(50):
            fake_openai.enqueue_text(ANSWER, usage=ANSWER_USAGE)
        turns = await asyncio.gather(
            *(ask(core.bot, who, "When does the office open?") for who in members)
        )
        # Reservations open at the worst case turned some away that the settled (cheaper)
        # calls left room for: use up the rest one turn at a time, until the money is gone.
        for who in members:
            turns.append(await ask(core.bot, who, "When does the office open on Saturdays?"))
            if turns[-1].done.fallback:
                break
        spent = round((await core.bot.budget_report(OWNER)).spent_usd * 1_000_000)
        worst_call = await core.database.fetch_value(
            "SELECT MAX(reserved_micros) FROM budget_ledger"
        )
    answered = [turn for turn in turns if not turn.done.fallback]
    from_sources = [turn for turn in turns if turn.done.fallback == "budget_spent"]
    assert len(answered) + len(from_sources) == len(turns)
    assert all(turn.done.outcome == "answered" for turn in turns)  # the sources answer too
    assert all(turn.done.cost_usd == 0 for turn in from_sources)
    assert turns[-1].done.fallback == "budget_spent"
    assert 1 <= len(answered) <= cap_micros // ANSWER_MICROS
    assert len(fake_openai.requests) == len(answered)  # no turn over budget reached the model
    assert isinstance(worst_call, int)
    assert worst_call > ANSWER_MICROS
    assert spent <= cap_micros + worst_call
    assert spent <= cap_micros  # no call cost more than its reservation here
    assert spent == len(answered) * ANSWER_MICROS
    assert round(sum(t.done.cost_usd for t in answered) * 1_000_000) == spent

    async with open_lore(settings) as again:
        assert round((await again.bot.budget_report(OWNER)).spent_usd * 1_000_000) == spent
        late = await ask(again.bot, members[0], "When does the office open on Sundays?")
    assert late.done.fallback == "budget_spent"
    assert late.done.answer.endswith(FALLBACK_NOTES["budget_spent"])
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
            fake_openai.enqueue_text(ANSWER, chunks=4)
            turns.append(await ask(core.bot, mia, f"When does the office open ({n})?"))
    for turn in turns:
        assert turn.errors == []
        assert turn.done.fallback == ""  # retries healed every one: the model answered
        assert turn.streamed == turn.done.answer == ANSWER  # once, never restarted
    assert sum(turn.done.outcome == "answered" for turn in turns) == 10
    successes = [r for n, r in enumerate(fake_openai.requests, start=1) if n % 2]
    assert len(successes) == 15  # 5 plain turns + 5 turns with a tool round
    assert len(fake_openai.requests) == 29


async def test_a_stream_dropped_mid_answer_is_answered_from_the_sources_and_not_retried(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        await remember(core.bot, None, text=OFFICE)
        fake_openai.enqueue_drop_after("The office opens at nine. It is in the", 2)
        turn = await ask(core.bot, mia, "When does the office open?")
        spent = (await core.bot.budget_report(OWNER)).spent_usd
        logged = await TurnRepository(core.database).get(turn.done.turn_id)
    assert len(fake_openai.requests) == 1
    # Nothing the model half wrote was shown: its one sentence has a number no source has.
    assert turn.streamed == ""
    assert turn.errors == []
    assert turn.done.outcome == "answered"
    assert turn.done.fallback == "incomplete"
    assert "8 am" in turn.done.answer
    assert "nine" not in turn.done.answer
    assert turn.done.answer.endswith(FALLBACK_NOTES["incomplete"])
    assert spent > 0  # cost unknown: the whole reservation stays booked (fail closed)
    assert logged is not None
    assert logged.outcome == "answered"


async def test_an_unavailable_provider_is_answered_from_the_sources_at_no_cost(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        await remember(core.bot, None, text=OFFICE)
        for _ in range(3):
            fake_openai.enqueue_error(503)
        turn = await ask(core.bot, mia, "When does the office open?")
        unknown = await ask(core.bot, mia, "Who won the chess tournament?")
        spent = (await core.bot.budget_report(OWNER)).spent_usd
    assert len(fake_openai.requests) == 3 + 3  # the first try and two retries, twice
    assert turn.errors == unknown.errors == []
    assert turn.done.fallback == "unavailable"
    assert "8 am" in turn.done.answer
    assert turn.done.answer.endswith(FALLBACK_NOTES["unavailable"])
    # Nothing in the sources: a plain refusal, without the line about the model.
    assert unknown.done.outcome == "refused"
    assert FALLBACK_NOTES["unavailable"] not in unknown.done.answer
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
    # The search every question gets, then the model's three rounds.
    assert turn.tools == ["search_knowledge", "search_private"] + ["search_knowledge"] * 3
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
    assert turn.tools == ["search_knowledge", "search_private"] + ["search_knowledge"] * 3
    assert turn.done.outcome == "refused"
    assert turn.refusals == ["no_source"]
    assert [q.question for q in unanswered] == ["When does the office open?"]
