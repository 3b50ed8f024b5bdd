"""Citations read 1..n in the order the answer first uses them, with the sources listed in
that order: in the streamed text and in the final answer, from any model."""

from __future__ import annotations

import json

from bot.app import Lore, open_lore
from graphs.agent.citation_order import StreamRenumberer, first_use_order, renumber
from graphs.llm.data_blocks import unwrap_data
from tests.chat_turns import ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest
from tests.test_agent import tool_messages

OPENING = "Office hours: the office opens at 8 am on weekdays."
CLOSING = "Office hours: the office closes at 6 pm on weekdays."
KITCHEN = "Office kitchen: the office kitchen is cleaned every Friday."


def test_numbers_follow_first_use_and_other_brackets_are_kept() -> None:
    order = first_use_order([3, 1, 3, 2])
    assert order == {3: 1, 1: 2, 2: 3}
    assert renumber("b [3], a [1], b again [3], c [2], list[0]", order) == (
        "b [1], a [2], b again [1], c [3], list[0]"
    )


def test_a_citation_split_across_deltas_is_renumbered_once_whole() -> None:
    stream = StreamRenumberer(known={1, 2, 3, 4})
    shown = [stream.feed(delta) for delta in ("Opens at 8 [", "4]. Closes [", "2", "] and [4].")]
    shown.append(stream.feed(" See [9] and ["))
    shown.append(stream.flush())
    assert shown == ["Opens at 8 ", "[1]. Closes ", "", "[2] and [1].", " See [9] and ", "["]


async def three_documents(core: Lore) -> None:
    for text in (OPENING, CLOSING, KITCHEN):
        await remember(core.bot, None, text)


def refs(request: RecordedRequest) -> dict[str, int]:
    """Each of the three documents' number in the search results the request carried."""
    passages = json.loads(unwrap_data(tool_messages(request)[0]["content"]))["passages"]
    by_text = {passage["text"]: passage["ref"] for passage in passages}
    return {
        name: by_text[text]
        for name, text in zip(
            ("opening", "closing", "kitchen"), (OPENING, CLOSING, KITCHEN), strict=True
        )
    }


async def test_an_answer_citing_out_of_order_reads_one_two_three_and_lists_sources_so(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        await three_documents(core)
        fake_openai.enqueue_tool_call("search_knowledge", json.dumps({"query": "office"}))
        fake_openai.enqueue_text(
            "Closing [3], opening [1], closing again [3], kitchen [2].", chunks=9
        )
        turn = await ask(core.bot, mia, "What are the office hours?")
    passages = json.loads(unwrap_data(tool_messages(fake_openai.requests[1])[0]["content"]))[
        "passages"
    ]
    by_ref = {passage["ref"]: passage["document_id"] for passage in passages}
    expected = "Closing [1], opening [2], closing again [1], kitchen [3]."
    assert turn.done.answer == expected
    assert turn.streamed == expected  # shown as it will stay: no correction after the stream
    assert [(c.ref, c.document_id) for c in turn.done.citations] == [
        (1, by_ref[3]),
        (2, by_ref[1]),
        (3, by_ref[2]),
    ]


async def test_a_dropped_citation_leaves_no_gap_in_the_numbers(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia = await invite(core.bot, "mia")
        await three_documents(core)
        fake_openai.enqueue_text(
            lambda request: (
                "The office opens at 8 am [{opening}]. It has a pool [9]. "
                "The kitchen is cleaned every Friday [{kitchen}].".format(**refs(request))
            )
        )
        turn = await ask(core.bot, mia, "What are the office hours?")
    # The claim no source holds is gone, with its citation; the numbers leave no gap.
    assert turn.done.answer == (
        "The office opens at 8 am [1]. The kitchen is cleaned every Friday [2]."
    )
    assert [c.ref for c in turn.done.citations] == [1, 2]
