"""Conversation memory end to end: the memory job over the real turn log, SQLite, embedded
Qdrant and the packaged embedder; search_memory through the agent with the offline model and
a scripted LLM; /forget; and the offline model's day resolution."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.app import Lore, open_lore
from bot.events import Identity
from graphs.agent.state import TurnInput
from graphs.agent.tools import TOOLS, ToolArgumentError, offered_tools, parse_arguments
from graphs.llm.data_blocks import unwrap_data
from graphs.llm.offline import OfflineModel
from graphs.llm.offline_memory import Clarify, DaySpan, memory_request, today_from_prompt
from graphs.llm.types import ChatMessage, Completion, ToolSpec
from scheduler.jobs import JobSpec, build_memory, run_job
from storage.ids import TurnId, UserId, new_turn_id
from storage.memory_index import MemoryIndex, memory_point_id
from storage.turns import TurnOutcome, TurnRecord, TurnRepository
from tests.chat_turns import ask, invite
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

BERLIN = ZoneInfo("Europe/Berlin")
SYSTEM = "You are Lore.\n\nToday is Sunday, 29 November 2026, 14:05 in Europe/Berlin."
MEMORY_TOOLS = (
    ToolSpec("search_knowledge", "shared"),
    ToolSpec("search_private", "private"),
    ToolSpec("search_memory", "memory"),
)


def memory_index(core: Lore) -> MemoryIndex:
    """A second handle on the core's memory collection, to count and list its points."""
    return MemoryIndex(
        core.vector_store,
        dense_size=core.embedder.dimension,
        hnsw_threshold=core.settings.hnsw_threshold,
    )


async def member(core: Lore, name: str, timezone: str | None = None) -> tuple[Identity, UserId]:
    who = await invite(core.bot, name)
    user = await core.bot.user_for(who)
    assert user is not None
    if timezone is not None:
        assert await core.bot.set_timezone(who, timezone)
    return who, user.id


async def log_turn(
    core: Lore,
    user_id: UserId,
    question: str,
    answer: str,
    at: datetime,
    *,
    outcome: TurnOutcome = TurnOutcome.ANSWERED,
) -> TurnId:
    turn_id = new_turn_id()
    await TurnRepository(core.database).log(
        TurnRecord(
            id=turn_id,
            thread_id=f"telegram:{user_id}:{user_id}",
            user_id=user_id,
            chat_id=str(user_id),
            platform="telegram",
            outcome=outcome,
            model="offline-extractive",
            question=question,
            answer=answer,
            created_at=at,
        )
    )
    return turn_id


def local_day(days_back: int, hour: int, minute: int = 0) -> datetime:
    """A moment `days_back` days before today in Berlin, at hour:minute Berlin time."""
    today = datetime.now(UTC).astimezone(BERLIN).date()
    return datetime.combine(today - timedelta(days=days_back), time(hour, minute), tzinfo=BERLIN)


# -- the memory job ---------------------------------------------------------------------------


async def test_two_overlapping_memory_runs_write_each_point_exactly_once(lore: Lore) -> None:
    _, alice = await member(lore, "alice")
    _, bob = await member(lore, "bob")
    now = datetime.now(UTC).replace(microsecond=0)
    early = await log_turn(
        lore, alice, "Where is the bike shed?", "Behind B.", now - timedelta(minutes=100)
    )
    middle = await log_turn(
        lore, bob, "Who orders toner?", "Facilities.", now - timedelta(minutes=50)
    )
    late = await log_turn(
        lore, alice, "When does the office open?", "At 8.", now - timedelta(minutes=10)
    )
    refused = await log_turn(
        lore,
        alice,
        "What is the CEO's salary?",
        "I couldn't find...",
        now - timedelta(minutes=40),
        outcome=TurnOutcome.REFUSED,
    )
    await log_turn(
        lore, alice, "Broken turn", "", now - timedelta(minutes=30), outcome=TurnOutcome.ERROR
    )
    await log_turn(
        lore,
        alice,
        "Share my note",
        "Waiting.",
        now - timedelta(minutes=20),
        outcome=TurnOutcome.AWAITING_APPROVAL,
    )
    await log_turn(lore, alice, "Too old to be read", "Old.", now - timedelta(hours=5))

    first = await lore.bot.maintenance.build_memory(now - timedelta(minutes=30))
    second = await lore.bot.maintenance.build_memory(now)

    index = memory_index(lore)
    expected = {memory_point_id(t) for t in (early, middle, late, refused)}
    assert await index.point_ids() == expected
    assert await index.count() == 4
    assert await index.count(alice) == 3
    assert await index.count(bob) == 1
    assert (first.points_written, second.points_written) == (3, 4)  # overlap rewritten, not added


async def test_memory_day_is_the_members_local_day(lore: Lore) -> None:
    _, alice = await member(lore, "alice", "Pacific/Auckland")  # UTC+13 in late November
    at = datetime(2026, 11, 28, 20, 30, tzinfo=UTC)  # Sunday 29 November, 09:30 in Auckland
    turn_id = await log_turn(lore, alice, "Where is the bike shed?", "Behind building B.", at)
    await lore.bot.maintenance.build_memory(at + timedelta(minutes=5))
    dense = await lore.embedder.embed_query("bike shed")
    index = memory_index(lore)
    on_29th = await index.search_memory(
        dense, user_id=alice, day_from=date(2026, 11, 29), day_to=date(2026, 11, 29)
    )
    on_28th = await index.search_memory(
        dense, user_id=alice, day_from=date(2026, 11, 28), day_to=date(2026, 11, 28)
    )
    assert [hit.turn_id for hit in on_29th] == [turn_id]
    assert on_29th[0].day == 20261129
    assert on_28th == []


# -- "what did I ask you yesterday?" through the agent ------------------------------------------


async def test_what_did_i_ask_yesterday_quotes_only_yesterdays_own_exchanges(lore: Lore) -> None:
    alice_chat, alice = await member(lore, "alice", "Europe/Berlin")
    _, bob = await member(lore, "bob", "Europe/Berlin")
    _, carol = await member(lore, "carol", "Europe/Berlin")
    noon, afternoon = local_day(1, 12, 5), local_day(1, 15, 30)
    parking = await log_turn(
        lore,
        alice,
        "Where can I park my car?",
        "There are six spaces behind the building [1].",
        noon,
    )
    wifi = await log_turn(
        lore, alice, "What is the guest wifi called?", "It is called Lore-Guest [2].", afternoon
    )
    await log_turn(lore, bob, "What is Bob's secret project?", "Project Falcon.", noon)
    await log_turn(lore, carol, "Where can I park my bike?", "In the shed.", afternoon)
    await log_turn(lore, alice, "Who waters the plants?", "Sam does.", local_day(2, 11))
    for day_back, hour in ((2, 12), (1, 13), (1, 16)):  # the job, as it ran on those days
        await lore.bot.maintenance.build_memory(local_day(day_back, hour))
    today = await log_turn(
        lore, alice, "How do I book a room?", "Use the calendar.", datetime.now(UTC)
    )
    await lore.bot.maintenance.build_memory(datetime.now(UTC))

    turn = await ask(lore.bot, alice_chat, "What did I ask you yesterday?")

    answer = turn.done.answer
    assert turn.tools == ["search_memory"]
    assert turn.done.outcome == "answered"
    assert "Where can I park my car?" in answer
    assert "What is the guest wifi called?" in answer
    assert f"{noon:%Y-%m-%d %H:%M}" in answer
    assert f"{afternoon:%Y-%m-%d %H:%M}" in answer
    for absent in ("Bob", "Falcon", "bike", "plants", "book a room"):
        assert absent not in answer
    # The old answers' citations named that day's sources, so they are gone from the quotes.
    assert "behind the building [1]" not in answer
    assert "Lore-Guest [2]" not in answer
    assert "behind the building.\u201d [" in answer
    assert {c.document_id for c in turn.done.citations} == {parking, wifi}
    assert today not in {c.document_id for c in turn.done.citations}


async def test_search_memory_never_returns_another_members_turns(lore: Lore) -> None:
    names = ("alice", "bob", "carol", "dave")
    members = {name: (await member(lore, name))[1] for name in names}
    now = datetime.now(UTC)
    own: dict[str, set[TurnId]] = {name: set() for name in names}
    for number in range(6):
        for name, user_id in members.items():
            question = f"How do I reset the printer on floor {number}?"
            moment = now - timedelta(minutes=60 - number)
            own[name].add(await log_turn(lore, user_id, question, "Hold the button.", moment))
    await lore.bot.maintenance.build_memory(now)
    index = memory_index(lore)
    dense = await lore.embedder.embed_query("reset the printer")
    for name, user_id in members.items():
        hits = await index.search_memory(dense, user_id=user_id, limit=50)
        assert {hit.turn_id for hit in hits} == own[name]
    with pytest.raises(ValueError, match="user's id"):
        await index.search_memory(dense, user_id=UserId(""))


async def test_group_chats_do_not_offer_search_memory(lore: Lore) -> None:
    alice_chat, alice = await member(lore, "alice")
    await log_turn(lore, alice, "Where can I park?", "Behind the building.", datetime.now(UTC))
    await lore.bot.maintenance.build_memory(datetime.now(UTC))
    group = TurnInput("t", alice, "member", "telegram", "room", True, "hi", "UTC", "")
    private = TurnInput("t", alice, "member", "telegram", "alice", False, "hi", "UTC", "")
    assert "search_memory" not in {tool.name for tool in offered_tools(group)}
    assert "search_memory" in {tool.name for tool in offered_tools(private)}

    turn = await ask(lore.bot, alice_chat, "What did I ask you today?", group=True)

    assert "search_memory" not in turn.tools
    assert "park" not in turn.done.answer
    assert "private chat" in turn.done.answer


async def test_forget_removes_memory_points_for_good(lore: Lore) -> None:
    alice_chat, alice = await member(lore, "alice")
    _, bob = await member(lore, "bob")
    now = datetime.now(UTC)
    await log_turn(lore, alice, "Where is the bike shed?", "Behind B.", now - timedelta(minutes=5))
    await log_turn(lore, bob, "Who orders toner?", "Facilities.", now - timedelta(minutes=5))
    await lore.bot.maintenance.build_memory(now)
    index = memory_index(lore)
    assert (await index.count(alice), await index.count(bob)) == (1, 1)

    await lore.bot.forget(alice_chat)
    after_forget = (await index.count(alice), await index.count(bob))
    await lore.bot.maintenance.build_memory(now)  # the next run must not bring it back

    assert after_forget == (0, 1)
    assert (await index.count(alice), await index.count(bob)) == (0, 1)


async def test_an_ambiguous_date_gets_a_question_back(lore: Lore) -> None:
    alice_chat, alice = await member(lore, "alice", "Europe/Berlin")
    await log_turn(lore, alice, "Where can I park?", "Behind the building.", local_day(7, 12))
    await lore.bot.maintenance.build_memory(local_day(7, 13))
    weekday = f"{datetime.now(UTC).astimezone(BERLIN):%A}"  # today, or a week ago?

    same_weekday = await ask(lore.bot, alice_chat, f"What did I ask you on {weekday}?")
    numeric = await ask(lore.bot, alice_chat, "What did I ask you on 03/04?")

    assert same_weekday.tools == numeric.tools == []
    assert same_weekday.done.answer.startswith("Do you mean today or ")
    assert "park" not in same_weekday.done.answer
    assert "day/month or month/day" in numeric.done.answer
    assert same_weekday.done.outcome == numeric.done.outcome == "answered"
    assert await TurnRepository(lore.database).unanswered() == []


async def test_nothing_remembered_is_a_refusal_but_not_an_unanswered_question(lore: Lore) -> None:
    alice_chat, _ = await member(lore, "alice")
    await lore.bot.maintenance.build_memory(datetime.now(UTC))

    turn = await ask(lore.bot, alice_chat, "What did I ask you yesterday?")

    assert turn.tools == ["search_memory"]
    assert turn.done.outcome == "refused"
    assert turn.done.answer.startswith("I found no conversation with you on ")
    assert await TurnRepository(lore.database).unanswered() == []


# -- a real LLM's memory citations (invariant 5) ------------------------------------------------


async def test_invariant_5_memory_citations_name_the_members_own_turns(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        alice_chat, alice = await member(core, "alice")
        moment = datetime.now(UTC) - timedelta(minutes=5)
        parking = await log_turn(core, alice, "Where can I park?", "Behind the building.", moment)
        await core.bot.maintenance.build_memory(datetime.now(UTC))
        today = f"{datetime.now(UTC):%Y-%m-%d}"
        arguments = {"query": "parking", "day_from": today, "day_to": None}
        fake_openai.enqueue_tool_call("search_memory", json.dumps(arguments))
        fake_openai.enqueue_text("You asked where to park [1]; see also [7].")
        cited = await ask(core.bot, alice_chat, "What did I ask about parking today?")
        fake_openai.enqueue_tool_call(
            "search_memory", json.dumps({"query": "x", "day_from": "2026-02-30", "day_to": None})
        )
        fake_openai.enqueue_text("You asked about parking.")
        bad_day = await ask(core.bot, alice_chat, "What did I ask on the 30th of February?")

    first_request = fake_openai.requests[0]
    [spec] = [t for t in first_request.body["tools"] if t["function"]["name"] == "search_memory"]
    parameters = spec["function"]["parameters"]
    assert parameters["required"] == ["query", "day_from", "day_to"]
    assert parameters["properties"]["day_from"]["type"] == ["string", "null"]
    assert parameters["additionalProperties"] is False
    # The memory search every such question gets, over the day it names, before the model.
    [result] = [m for m in first_request.body["messages"] if m["role"] == "tool"]
    [exchange] = json.loads(unwrap_data(result["content"]))["exchanges"]
    assert exchange["question"] == "Where can I park?"
    assert exchange["ref"] == 1
    assert [(c.ref, c.document_id) for c in cited.done.citations] == [(1, parking)]
    assert cited.done.answer == "You asked where to park [1]; see also."
    error = [m for m in fake_openai.requests[3].body["messages"] if m["role"] == "tool"][-1]
    assert "must be a date like" in error["content"]
    assert bad_day.done.outcome == "refused"


# -- arguments and the offline model's day resolution --------------------------------------------


def test_search_memory_arguments_are_checked_against_the_schema() -> None:
    tool = TOOLS["search_memory"]
    assert parse_arguments(tool, '{"query": "parking", "day_from": null, "day_to": ""}') == {
        "query": "parking"
    }
    assert parse_arguments(tool, '{"query": "x", "day_from": "2026-11-28"}') == {
        "query": "x",
        "day_from": "2026-11-28",
    }
    for raw in (
        '{"day_from": "2026-11-28"}',
        '{"query": "x", "day_from": "28.11.2026"}',
        '{"query": "x", "day_to": "2026-13-01"}',
        '{"query": "x", "day_to": 20261128}',
        '{"query": "x", "user_id": "someone-else"}',
    ):
        with pytest.raises(ToolArgumentError):
            parse_arguments(tool, raw)
    assert parse_arguments(TOOLS["search_knowledge"], '{"query": " wifi "}') == {"query": "wifi"}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I ask you yesterday?", DaySpan(date(2026, 11, 28), date(2026, 11, 28))),
        ("what did I ask you last week?", DaySpan(date(2026, 11, 16), date(2026, 11, 22))),
        ("What did I ask you on Monday?", DaySpan(date(2026, 11, 23), date(2026, 11, 23))),
        ("what did I ask you on 2026-11-20?", DaySpan(date(2026, 11, 20), date(2026, 11, 20))),
        ("what did I ask you on 28 November?", DaySpan(date(2026, 11, 28), date(2026, 11, 28))),
        ("what did we talk about 3 days ago?", DaySpan(date(2026, 11, 26), date(2026, 11, 26))),
        ("what did I ask you about parking?", DaySpan()),
    ],
)
def test_offline_days_resolve_from_the_system_prompt(question: str, expected: DaySpan) -> None:
    assert today_from_prompt(SYSTEM) == date(2026, 11, 29)
    assert memory_request(question, date(2026, 11, 29))[1] == expected


@pytest.mark.parametrize(
    "question",
    [
        "what did I ask you last Friday?",  # on a Sunday: the 27th or the 20th?
        "what did I ask you on Sunday?",  # today, or a week ago?
        "what did I ask you on 03/04?",
        "what did I ask you next week?",
    ],
)
def test_offline_ambiguous_days_are_asked_about(question: str) -> None:
    assert isinstance(memory_request(question, date(2026, 11, 29))[1], Clarify)


async def test_offline_model_calls_search_memory_with_the_resolved_days() -> None:
    async def first_call(text: str, tools: tuple[ToolSpec, ...]) -> Completion:
        messages = [ChatMessage("system", SYSTEM), ChatMessage("user", text)]
        events = [event async for event in OfflineModel().stream(messages, tools=tools)]
        assert isinstance(events[-1], Completion)
        return events[-1]

    yesterday = await first_call("What did I ask you yesterday?", MEMORY_TOOLS)
    topic = await first_call("What did I ask you about parking last week?", MEMORY_TOOLS)
    friday = await first_call("What did I ask you last Friday?", MEMORY_TOOLS)
    in_group = await first_call("What did I ask you yesterday?", MEMORY_TOOLS[:1])
    notes = await first_call("What did I write about the offsite?", MEMORY_TOOLS)

    [call] = yesterday.tool_calls
    assert (call.name, json.loads(call.arguments)) == (
        "search_memory",
        {
            "query": "What did I ask you yesterday?",
            "day_from": "2026-11-28",
            "day_to": "2026-11-28",
        },
    )
    assert json.loads(topic.tool_calls[0].arguments) == {
        "query": "parking",
        "day_from": "2026-11-16",
        "day_to": "2026-11-22",
    }
    assert friday.tool_calls == ()
    assert "Friday 27 November 2026 or Friday 20 November 2026" in friday.text
    assert in_group.tool_calls == ()
    assert "private chat" in in_group.text
    assert "search_memory" not in {c.name for c in notes.tool_calls}


async def test_the_memory_job_calls_build_memory_at_its_clock(lore: Lore) -> None:
    _, alice = await member(lore, "alice")
    at = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
    turn_id = await log_turn(lore, alice, "Where is the bike shed?", "Behind B.", at)
    spec = JobSpec("build_memory", 1800.0, build_memory)

    ran = await run_job(lore.bot, spec, lambda: at + timedelta(minutes=30))

    assert ran
    assert await memory_index(lore).point_ids() == {memory_point_id(turn_id)}
