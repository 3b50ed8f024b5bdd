"""OfflineModel: routing, extractive answers with citations, refusals, approvals, streaming."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

import pytest

from graphs.llm.offline import DEFAULT_THRESHOLD, MODEL_NAME, OfflineModel, is_refusal
from graphs.llm.types import (
    ChatMessage,
    ChatModel,
    Completion,
    TextDelta,
    ToolCall,
    ToolChoice,
    ToolSpec,
)

PRIVATE_TOOLS = tuple(
    ToolSpec(name, f"the {name} tool")
    for name in (
        "search_knowledge",
        "search_private",
        "get_entry",
        "draft_contact_message",
        "share_to_knowledge",
    )
)
GROUP_TOOLS = tuple(tool for tool in PRIVATE_TOOLS if tool.name != "search_private")
HIGH_RISK = {"draft_contact_message", "share_to_knowledge"}
SYSTEM = ChatMessage("system", "You are Lore. Today is 2025-03-14.")

PRINTER_TEXT = (
    "# Office guide\n\n## Printers\n\nThe office has two printers. The colour printer on "
    "floor 2 needs a badge to release jobs. Paper is kept in the cupboard next to the "
    "kitchen.\n\nToner is ordered by the facilities team."
)
WIFI_TEXT = (
    "## Wifi\n\nThe guest wifi is called Lore-Guest. Its password changes every Monday "
    "and is printed on the kitchen notice board."
)
FAQ_TEXT = (
    "# FAQ\n\n## How do I book a meeting room?\n\nUse the booking calendar. Rooms can be "
    "booked two weeks ahead, and a booking expires after 15 minutes without check-in.\n\n"
    "## Parking\n\nThere are six parking spaces behind the building."
)


def passage(ref: int, text: str, relevance: float, **extra: Any) -> dict[str, Any]:
    return {
        "ref": ref,
        "document_id": extra.get("document_id", f"doc-{ref}"),
        "title": extra.get("title", f"Document {ref}"),
        "source": extra.get("source", f"doc{ref}.md"),
        "section": extra.get("section", ""),
        "text": text,
        "relevance": relevance,
        "private": extra.get("private", False),
    }


def turn(
    question: str, *results: tuple[str, dict[str, Any]], history: Sequence[ChatMessage] = ()
) -> list[ChatMessage]:
    """A conversation ending in `question` and one tool round per result."""
    messages = [SYSTEM, *history, ChatMessage("user", question)]
    for index, (name, payload) in enumerate(results):
        call = ToolCall(f"call-{index}", name, "{}")
        messages.append(ChatMessage("assistant", "", tool_calls=(call,)))
        messages.append(ChatMessage("tool", json.dumps(payload), tool_call_id=call.id, name=name))
    return messages


async def run(
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSpec] = PRIVATE_TOOLS,
    *,
    tool_choice: ToolChoice = "auto",
    model: ChatModel | None = None,
) -> tuple[list[str], Completion]:
    """The text deltas and the completion of one call; checks the stream's shape."""
    events = [
        event
        async for event in (model or OfflineModel()).stream(
            messages, tools=tools, tool_choice=tool_choice
        )
    ]
    *deltas, final = events
    assert isinstance(final, Completion)
    assert all(isinstance(event, TextDelta) for event in deltas)
    texts = [event.text for event in deltas if isinstance(event, TextDelta)]
    assert "".join(texts) == final.text
    return texts, final


def calls(completion: Completion) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, json.loads(call.arguments)) for call in completion.tool_calls]


def both_searches(query: str, *, private_first: bool = False) -> list[tuple[str, dict[str, Any]]]:
    order = ["search_private", "search_knowledge"]
    if not private_first:
        order.reverse()
    return [(name, {"query": query}) for name in order]


ROUTES: list[tuple[str, Sequence[ToolSpec], list[tuple[str, dict[str, Any]]]]] = [
    (
        "tell the owner that the printer is broken",
        PRIVATE_TOOLS,
        [("draft_contact_message", {"message": "The printer is broken."})],
    ),
    (
        "ask the admin to add me",
        PRIVATE_TOOLS,
        [("draft_contact_message", {"message": "Please add me."})],
    ),
    (
        "Send a message to the owner: the wifi is down again!",
        PRIVATE_TOOLS,
        [("draft_contact_message", {"message": "The wifi is down again!"})],
    ),
    (
        "Could you please let the admin know the coffee machine is empty?",
        GROUP_TOOLS,
        [("draft_contact_message", {"message": "The coffee machine is empty."})],
    ),
    (
        "ask the owner whether the office is open on Friday",
        PRIVATE_TOOLS,
        [
            (
                "draft_contact_message",
                {"message": "Could you tell me whether the office is open on Friday?"},
            )
        ],
    ),
    (
        "share my note about the offsite with everyone",
        PRIVATE_TOOLS,
        [("search_private", {"query": "the offsite"})],
    ),
    ("make my packing list public", PRIVATE_TOOLS, [("search_private", {"query": "packing list"})]),
    ("open document 4f9e21ab", PRIVATE_TOOLS, [("get_entry", {"document_id": "4f9e21ab"})]),
    ("how does sharing work?", PRIVATE_TOOLS, both_searches("how does sharing work?")),
    (
        "who is the owner of the wifi?",
        PRIVATE_TOOLS,
        both_searches("who is the owner of the wifi?"),
    ),
    (
        "what does share_to_knowledge do?",
        PRIVATE_TOOLS,
        both_searches("what does share_to_knowledge do?"),
    ),
    (
        "how do I contact the owner?",
        PRIVATE_TOOLS,
        both_searches("how do I contact the owner?"),
    ),
    (
        "Can I share my notes with everyone?",
        PRIVATE_TOOLS,
        both_searches("Can I share my notes with everyone?", private_first=True),
    ),
    (
        "what did I write about the offsite?",
        PRIVATE_TOOLS,
        both_searches("what did I write about the offsite?", private_first=True),
    ),
    (
        "what did I write about the offsite?",
        GROUP_TOOLS,
        [("search_knowledge", {"query": "what did I write about the offsite?"})],
    ),
    (
        "how does sharing work?",
        GROUP_TOOLS,
        [("search_knowledge", {"query": "how does sharing work?"})],
    ),
    ("Where is the printer?", PRIVATE_TOOLS, both_searches("Where is the printer?")),
]


@pytest.mark.parametrize(("question", "tools", "expected"), ROUTES)
async def test_routing_table(
    question: str, tools: Sequence[ToolSpec], expected: list[tuple[str, dict[str, Any]]]
) -> None:
    deltas, completion = await run(turn(question), tools)
    assert calls(completion) == expected
    assert completion.finish_reason == "tool_calls"
    assert completion.text == ""
    assert deltas == []


@pytest.mark.parametrize(
    "question",
    [
        "how does sharing work?",
        "who is the owner of the wifi?",
        "what does share_to_knowledge do?",
        "what does draft_contact_message do?",
        "can I share my notes?",
        "how do I contact the owner?",
        "should I tell the owner about bugs?",
        "is the admin allowed to publish my notes?",
        "don't tell the owner that I was late",
    ],
)
async def test_mentioning_owners_or_sharing_never_picks_a_high_risk_tool(question: str) -> None:
    _, completion = await run(turn(question))
    names = {name for name, _ in calls(completion)}
    assert names
    assert not names & HIGH_RISK


@pytest.mark.parametrize("question", [q for q, _, _ in ROUTES] + ["share my note about tea"])
async def test_group_chats_never_call_tools_that_are_not_offered(question: str) -> None:
    _, completion = await run(turn(question), GROUP_TOOLS)
    offered = {tool.name for tool in GROUP_TOOLS}
    assert {name for name, _ in calls(completion)} <= offered
    assert "search_private" not in {name for name, _ in calls(completion)}


async def test_sharing_from_a_group_chat_is_explained_without_tools() -> None:
    _, completion = await run(turn("share my note about the offsite with everyone"), GROUP_TOOLS)
    assert completion.tool_calls == ()
    assert "private chat" in completion.text


@pytest.mark.parametrize("greeting", ["hi", "Hello Lore!", "what can you do?", "thanks", ""])
async def test_greetings_and_help_answer_directly(greeting: str) -> None:
    _, completion = await run(turn(greeting))
    assert completion.tool_calls == ()
    assert "Lore" in completion.text
    assert "your private notes" in completion.text
    _, in_group = await run(turn(greeting), GROUP_TOOLS)
    assert "private notes" not in in_group.text


async def test_contact_without_a_message_asks_what_to_say() -> None:
    _, completion = await run(turn("message the owner"))
    assert completion.tool_calls == ()
    assert "What should I tell the owner?" in completion.text


async def test_contact_is_not_offered_so_it_is_not_called() -> None:
    tools = tuple(tool for tool in PRIVATE_TOOLS if tool.name != "draft_contact_message")
    _, completion = await run(turn("tell the owner that the printer is broken"), tools)
    assert completion.tool_calls == ()
    assert "can't pass messages" in completion.text


async def test_answer_quotes_best_sentences_with_citations() -> None:
    question = "Which printer needs a badge?"
    result = {
        "passages": [
            passage(1, PRINTER_TEXT, 0.62, title="Office guide", section="Office guide > Printers"),
            passage(2, WIFI_TEXT, 0.41, title="Office guide"),
            passage(3, "Printers are fun. A badge is a badge.", 0.12, title="Noise"),
        ]
    }
    deltas, completion = await run(turn(question, ("search_knowledge", result)))
    text = completion.text
    assert completion.finish_reason == "stop"
    assert completion.tool_calls == ()
    assert len(deltas) >= 3
    assert "\u201cOffice guide\u201d" in text
    assert "The colour printer on floor 2 needs a badge to release jobs." in text
    assert "[1]" in text
    assert "[3]" not in text  # below the threshold
    assert "Noise" not in text
    assert not is_refusal(text)
    # Every quote is verbatim text of the passage it cites.
    for quote, ref in re.findall(r"\u201c([^\u201d]+)\u201d \[(\d+)\]", text):
        source = {"1": PRINTER_TEXT, "2": WIFI_TEXT}[ref]
        for piece in quote.split(" \u2026 "):
            assert piece in " ".join(source.split())


async def test_question_matching_a_heading_quotes_that_section() -> None:
    result = {"passages": [passage(7, FAQ_TEXT, 0.7, title="FAQ")]}
    _, completion = await run(turn("How do I book a meeting room?", ("search_knowledge", result)))
    assert completion.text == (
        "From \u201cFAQ\u201d (How do I book a meeting room?): \u201cUse the booking calendar. "
        "Rooms can be booked two weeks ahead, and a booking expires after 15 minutes without "
        "check-in.\u201d [7]"
    )


async def test_tables_and_lists_are_quoted_as_readable_text() -> None:
    text = (
        "## Limits\n\nLore caps every source:\n\n| cap | setting | default |\n|---|---|---|\n"
        "| file size | `MAX_FILE_BYTES` | 20 MiB |\n| download size | `FETCH_MAX_BYTES` | 10 MiB |"
    )
    result = {"passages": [passage(2, text, 0.55, title="Limits")]}
    _, completion = await run(
        turn("What is the default file size cap?", ("search_knowledge", result))
    )
    assert "file size \u2014 setting: `MAX_FILE_BYTES`; default: 20 MiB" in completion.text
    assert "|" not in completion.text
    assert completion.text.endswith("[2]")


async def test_private_passages_are_named_as_the_users_notes() -> None:
    result = {
        "passages": [
            passage(
                1, "The offsite is in Lisbon from 3 to 5 June.", 0.7, private=True, title="Offsite"
            )
        ]
    }
    _, completion = await run(
        turn("what did I write about the offsite?", ("search_private", result))
    )
    assert completion.text.startswith("From your note \u201cOffsite\u201d")
    assert "Lisbon" in completion.text


async def test_refusal_below_threshold() -> None:
    result = {"passages": [passage(1, PRINTER_TEXT, DEFAULT_THRESHOLD - 0.01)]}
    _, completion = await run(turn("Which printer needs a badge?", ("search_knowledge", result)))
    assert completion.finish_reason == "refusal"
    assert is_refusal(completion.text)
    assert "won't guess" in completion.text
    assert "[" not in completion.text


async def test_threshold_is_a_constructor_parameter() -> None:
    result = {"passages": [passage(1, PRINTER_TEXT, 0.5)]}
    messages = turn("Which printer needs a badge?", ("search_knowledge", result))
    _, strict = await run(messages, model=OfflineModel(threshold=0.6))
    _, lenient = await run(messages, model=OfflineModel(threshold=0.4))
    assert strict.finish_reason == "refusal"
    assert lenient.finish_reason == "stop"
    assert "[1]" in lenient.text


async def test_refusal_when_the_passages_share_no_words_with_the_question() -> None:
    result = {"passages": [passage(1, WIFI_TEXT, 0.5)]}
    _, completion = await run(
        turn("Can Lore transcribe voice memos?", ("search_knowledge", result))
    )
    assert completion.finish_reason == "refusal"
    _, ungated = await run(
        turn("Can Lore transcribe voice memos?", ("search_knowledge", result)),
        model=OfflineModel(min_coverage=0.0),
    )
    assert ungated.finish_reason == "stop"


async def test_refusal_after_searching_both_collections_mentions_notes() -> None:
    messages = turn(
        "Where is the printer?",
        ("search_knowledge", {"passages": []}),
        ("search_private", {"passages": []}),
    )
    _, completion = await run(messages)
    assert completion.finish_reason == "refusal"
    assert is_refusal(completion.text)
    assert "your notes" in completion.text


async def test_group_refusal_for_own_material_says_private_notes_are_not_searched() -> None:
    messages = turn("what did I write about the offsite?", ("search_knowledge", {"passages": []}))
    _, completion = await run(messages, GROUP_TOOLS)
    assert is_refusal(completion.text)
    assert "group chats I don't search private notes" in completion.text


async def test_two_step_share_flow() -> None:
    question = "share my note about the offsite with everyone"
    found = {
        "passages": [
            passage(1, "Offsite: Lisbon, 3-5 June.", 0.66, private=True, document_id="note-42"),
            passage(2, "Old offsite ideas.", 0.45, private=True, document_id="note-7"),
        ]
    }
    _, second = await run(turn(question, ("search_private", found)))
    assert calls(second) == [("share_to_knowledge", {"document_id": "note-42"})]

    shared = {"status": "shared", "document_id": "note-42", "title": "Offsite plan"}
    _, third = await run(turn(question, ("search_private", found), ("share_to_knowledge", shared)))
    assert third.tool_calls == ()
    assert "\u201cOffsite plan\u201d is now in the shared knowledge base" in third.text


async def test_share_flow_without_a_matching_note_shares_nothing() -> None:
    question = "share my note about the offsite with everyone"
    weak = {"passages": [passage(1, "Groceries: milk.", 0.1, private=True)]}
    _, completion = await run(turn(question, ("search_private", weak)))
    assert completion.tool_calls == ()
    assert "couldn't find a note of yours about \u201cthe offsite\u201d" in completion.text


async def test_share_flow_ignores_shared_passages() -> None:
    question = "share my note about the offsite"
    shared_only = {"passages": [passage(1, "Offsite policy.", 0.8, private=False)]}
    _, completion = await run(turn(question, ("search_private", shared_only)))
    assert completion.tool_calls == ()


@pytest.mark.parametrize(
    ("tool", "payload", "expected"),
    [
        (
            "draft_contact_message",
            {"status": "delivered", "message": "The printer is broken."},
            "Your message was delivered to the owner: \u201cThe printer is broken.\u201d",
        ),
        (
            "draft_contact_message",
            {"status": "rejected", "reason": "Not now."},
            "The owner rejected your message, so it was not sent. Reason: Not now.",
        ),
        (
            "share_to_knowledge",
            {"status": "rejected", "reason": "Contains names."},
            "The owner rejected sharing that note, so it stays private. Reason: Contains names.",
        ),
    ],
)
async def test_approval_outcomes_are_confirmed(
    tool: str, payload: dict[str, Any], expected: str
) -> None:
    _, completion = await run(turn("tell the owner that the printer is broken", (tool, payload)))
    assert completion.text == expected
    assert completion.tool_calls == ()
    assert completion.finish_reason == "stop"


async def test_tool_errors_are_reported_politely() -> None:
    error = {"error": "The knowledge base is busy; please try again in a minute."}
    _, completion = await run(turn("Where is the printer?", ("search_knowledge", error)))
    assert completion.text == (
        "Sorry, I couldn't complete that: The knowledge base is busy; please try again in a minute."
    )
    assert completion.tool_calls == ()


async def test_unreadable_tool_output_is_an_error_not_a_crash() -> None:
    messages = [
        *turn("Where is the printer?"),
        ChatMessage("tool", "not json", tool_call_id="x", name="search_knowledge"),
    ]
    _, completion = await run(messages)
    assert completion.text.startswith("Sorry, I couldn't complete that")


async def test_get_entry_shows_the_document() -> None:
    document = {
        "document": {
            "ref": 4,
            "document_id": "4f9e21ab",
            "title": "Office guide",
            "source": "guide.md",
            "text": PRINTER_TEXT,
        }
    }
    _, completion = await run(turn("open document 4f9e21ab", ("get_entry", document)))
    assert completion.text.startswith("Here is \u201cOffice guide\u201d (guide.md) [4]:")
    assert "The office has two printers." in completion.text


async def test_tool_choice_none_forces_text() -> None:
    _, fresh = await run(turn("Where is the printer?"), tool_choice="none")
    assert fresh.tool_calls == ()
    assert is_refusal(fresh.text)

    found = {"passages": [passage(1, "Offsite: Lisbon.", 0.66, private=True)]}
    messages = turn("share my note about the offsite", ("search_private", found))
    _, pending_share = await run(messages, tool_choice="none")
    assert pending_share.tool_calls == ()
    assert pending_share.text.startswith("I found your note")
    assert "did not get to share it" in pending_share.text


async def test_share_flow_errors_are_reported_not_taken_for_a_missing_note() -> None:
    question = "share my note about the offsite"
    found = {"passages": [passage(1, "Offsite: Lisbon.", 0.66, private=True)]}
    error = {"error": "Sharing is switched off on this Lore."}
    _, completion = await run(
        turn(question, ("search_private", found), ("share_to_knowledge", error))
    )
    assert completion.tool_calls == ()
    assert (
        completion.text == "Sorry, I couldn't complete that: Sharing is switched off on this Lore."
    )


async def test_tool_choice_required_calls_a_tool_even_for_a_greeting() -> None:
    _, completion = await run(turn("hi"), tool_choice="required")
    assert calls(completion) == [("search_knowledge", {"query": "hi"})]


async def test_same_input_same_output() -> None:
    result = {"passages": [passage(1, PRINTER_TEXT, 0.62), passage(2, WIFI_TEXT, 0.55)]}
    messages = turn(
        "Where do I find the wifi password and the printer?", ("search_knowledge", result)
    )
    first = await run(messages)
    second = await run(messages, model=OfflineModel())
    assert first == second
    routed = [await run(turn("how does sharing work?")) for _ in range(2)]
    assert routed[0] == routed[1]
    assert [call.id for call in routed[0][1].tool_calls] == ["offline-2-0", "offline-2-1"]


async def test_streams_several_deltas_then_exactly_one_completion() -> None:
    result = {"passages": [passage(1, PRINTER_TEXT, 0.62), passage(2, WIFI_TEXT, 0.55)]}
    messages = turn(
        "Where is the wifi password and which printer needs a badge?", ("search_knowledge", result)
    )
    events = [event async for event in OfflineModel().stream(messages, tools=PRIVATE_TOOLS)]
    completions = [event for event in events if isinstance(event, Completion)]
    assert len(completions) == 1
    assert events[-1] is completions[0]
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    assert len(deltas) >= 3
    assert "".join(deltas) == completions[0].text
    assert "[1]" in completions[0].text
    assert "[2]" in completions[0].text


async def test_usage_and_name() -> None:
    model = OfflineModel()
    messages = turn("Where is the printer?")
    _, completion = await run(messages, model=model)
    prompt_chars = sum(len(m.content) for m in messages)
    call_chars = sum(len(c.name) + len(c.arguments) for c in completion.tool_calls)
    assert model.name == MODEL_NAME == "offline-extractive"
    assert completion.model == "offline-extractive"
    assert completion.usage.prompt_tokens == math.ceil(prompt_chars / 4)
    assert completion.usage.completion_tokens == math.ceil(call_chars / 4)
    assert completion.usage.cached_tokens == 0


async def test_only_the_current_turn_counts() -> None:
    old = turn(
        "Where is the printer?", ("search_knowledge", {"passages": [passage(1, PRINTER_TEXT, 0.7)]})
    )
    history = [*old[1:], ChatMessage("assistant", "From ... [1]")]
    _, completion = await run(turn("tell the owner that toner is low", history=history))
    assert calls(completion) == [("draft_contact_message", {"message": "Toner is low."})]
