"""Cite or refuse with a real model (invariant 5): responses recorded from llama.cpp's server
running SmolLM2-135M-Instruct (`benchmarks/record_provider_streams.py`), replayed byte for
byte by the fake server, through the whole core. Whatever the small model does (answer from
nothing, loop, echo a tool response, write a tool call as text, break its tool call, overflow
the context), the person gets a cited answer or a clear refusal, and never sees the junk."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from bot.app import Lore, open_lore
from bot.events import Identity
from bot.settings import load_settings
from graphs.agent.generate_node import UNREADABLE_REPLY
from graphs.agent.verify import FALLBACK_NOTES
from graphs.llm.data_blocks import unwrap_data
from tests.chat_turns import Turn, ask, invite, remember
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest

pytestmark = pytest.mark.asyncio(loop_scope="module")

BACKUP = (
    "Backups: to back up Lore, run `lore backup PATH`. It writes a consistent snapshot of "
    "DATA_DIR, also while the bot runs."
)
FAQ = "Lore FAQ: Lore runs without any API key; its offline answerer quotes the knowledge base."
#: What no answer may show: the markup and loops the recorded model produced.
JUNK = ("<tool_call>", "<tool_response>", '"name"', '"ref"', "backup.backup", "_to_file_to")


@dataclass
class Setup:
    """One core for the module, beside one fake model server."""

    lore: Lore
    fake: FakeOpenAI

    async def member(self) -> Identity:
        return await invite(self.lore.bot, f"m{uuid.uuid4().hex[:8]}")

    def since(self, start: int) -> list[RecordedRequest]:
        return self.fake.requests[start:]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> AsyncIterator[Setup]:
    async with FakeOpenAI() as fake:
        settings = load_settings(
            _env_file=None,
            data_dir=tmp_path_factory.mktemp("real-model") / "data",
            MODELS_DIR=models_dir,
            sample_docs_dir="",
            chunk_tokens=128,
            chunk_overlap_tokens=16,
            llm_base_url=fake.base_url,
            llm_model="smollm2-135m-instruct",
            llm_api_key="local-test-key",
        )
        async with open_lore(settings) as lore:
            await remember(lore.bot, None, text=BACKUP, title="Backups")
            await remember(lore.bot, None, text=FAQ, title="Lore FAQ")
            yield Setup(lore, fake)


def assert_no_junk(turn: Turn) -> None:
    for text in (turn.streamed, turn.done.answer):
        assert not [junk for junk in JUNK if junk in text], text


def backup_ref(request: RecordedRequest) -> int:
    """The number the backup passage has in the search results a request carried."""
    for message in request.body["messages"]:
        if message["role"] == "tool":
            for passage in json.loads(unwrap_data(message["content"])).get("passages", []):
                if "lore backup PATH" in passage["text"]:
                    return int(passage["ref"])
    raise AssertionError("the request carried no backup passage")


async def test_a_model_that_answers_from_nothing_in_a_loop_is_stopped_and_the_sources_answer(
    setup: Setup,
) -> None:
    setup.fake.enqueue_recording("llamacpp_text_no_tool")  # "lore.backup.backup.backup..."
    turn = await ask(setup.lore.bot, await setup.member(), "How do I back up Lore?")
    assert_no_junk(turn)
    assert turn.done.fallback == "incomplete"
    assert "lore backup PATH" in turn.done.answer
    assert turn.done.citations
    assert turn.done.answer.endswith(FALLBACK_NOTES["incomplete"])


@pytest.mark.parametrize(
    ("recording", "reason"),
    [
        ("llamacpp_text_after_search", "unverified"),
        ("llamacpp_tool_response_echo", "incomplete"),  # and cut at the token limit
    ],
)
async def test_an_imitated_tool_response_is_never_shown(
    setup: Setup, recording: str, reason: str
) -> None:
    setup.fake.enqueue_recording(recording)
    turn = await ask(setup.lore.bot, await setup.member(), "Does Lore need an API key?")
    assert_no_junk(turn)
    assert turn.streamed == ""
    assert turn.done.fallback == reason
    assert "without any API key" in turn.done.answer
    assert [c.title for c in turn.done.citations] == ["Lore FAQ"]


@pytest.mark.parametrize(
    "recording",
    [
        "llamacpp_text_tool_call",  # no tools offered: written as text, then more text
        "llamacpp_tool_call",  # parsed by the server, cut by max_tokens after it was whole
    ],
)
async def test_a_tool_call_is_run_however_the_model_wrote_it(setup: Setup, recording: str) -> None:
    start = len(setup.fake.requests)
    setup.fake.enqueue_recording(recording)
    setup.fake.enqueue_text(
        lambda request: f"Run `lore backup PATH` to snapshot DATA_DIR [{backup_ref(request)}]."
    )
    turn = await ask(setup.lore.bot, await setup.member(), "How do I back up Lore?")
    _, second = setup.since(start)
    assert_no_junk(turn)
    # The search every question gets, then the model's own ("back up Lore").
    assert turn.tools == ["search_knowledge", "search_private", "search_knowledge"]
    [asked] = [m for m in second.body["messages"][2:] if m.get("tool_calls")][-1:]
    call = asked["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == (
        "search_knowledge",
        {"query": "back up Lore"},
    )
    assert turn.done.fallback == ""
    assert turn.done.answer == "Run `lore backup PATH` to snapshot DATA_DIR [1]."
    assert [c.title for c in turn.done.citations] == ["Backups"]


@pytest.mark.parametrize(
    "recording", ["llamacpp_broken_tool_call", "llamacpp_tool_call_then_error"]
)
async def test_a_broken_tool_call_is_told_to_the_model_once_not_an_outage(
    setup: Setup, recording: str
) -> None:
    start = len(setup.fake.requests)
    setup.fake.enqueue_recording(recording)  # the server's error event, mid-stream
    setup.fake.enqueue_text(lambda request: f"Run `lore backup PATH` [{backup_ref(request)}].")
    turn = await ask(setup.lore.bot, await setup.member(), "How do I back up Lore?")
    first, second = setup.since(start)  # no retry of the same request: the model is told
    assert second.body["messages"][-1] == {"role": "system", "content": UNREADABLE_REPLY}
    assert UNREADABLE_REPLY not in json.dumps(first.body)
    assert turn.errors == []
    assert turn.done.fallback == ""
    assert turn.done.answer == "Run `lore backup PATH` [1]."


async def test_a_tool_call_cut_by_the_token_limit_is_a_tool_error_the_model_sees(
    setup: Setup,
) -> None:
    start = len(setup.fake.requests)
    setup.fake.enqueue_recording("llamacpp_tool_call_cut")  # arguments: '{"query": "back_...'
    setup.fake.enqueue_text("Sorry, could you say that again?")
    turn = await ask(setup.lore.bot, await setup.member(), "How do I back up Lore?")
    _, second = setup.since(start)
    [error] = [m for m in second.body["messages"] if "not valid JSON" in (m["content"] or "")]
    assert error["role"] == "tool"
    # A question back answers no question: the sources answer it.
    assert turn.done.fallback == "unverified"
    assert "lore backup PATH" in turn.done.answer


@pytest.mark.parametrize(
    ("recording", "reason"),
    [
        ("llamacpp_length", "incomplete"),  # cut at max_tokens mid-sentence
        ("llamacpp_context_overflow", "context"),  # HTTP 400 exceed_context_size_error
        ("llamacpp_invalid_request", "unavailable"),  # HTTP 400, never retried
    ],
)
async def test_a_failed_or_cut_answer_is_answered_from_the_sources(
    setup: Setup, recording: str, reason: str
) -> None:
    start = len(setup.fake.requests)
    setup.fake.enqueue_recording(recording)
    turn = await ask(setup.lore.bot, await setup.member(), "How do I back up Lore?")
    assert len(setup.since(start)) == 1
    assert_no_junk(turn)
    assert turn.errors == []
    assert turn.done.fallback == reason
    assert "lore backup PATH" in turn.done.answer
    assert turn.done.answer.endswith(FALLBACK_NOTES[reason])
