"""The streams of the OpenAI-compatible servers people plug in, as their documentation and issue
trackers show them, through the whole core: DeepSeek's `reasoning_content`, Gemini's usage in
the last content chunk, Ollama's tool calls in one chunk with `finish_reason` "stop" and no
usage, vLLM's argument fragments, other spellings of `finish_reason`, and 429/503 with and
without `Retry-After`. Every one ends in a delivered, cited answer or a clear refusal."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.app import Lore, open_lore
from bot.settings import load_settings
from graphs.agent.verify import FALLBACK_NOTES
from tests.chat_turns import Turn, ask, invite, remember
from tests.fakes.openai_server import FakeOpenAI

pytestmark = pytest.mark.asyncio(loop_scope="module")

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
ANSWER = "The office opens at 8 am [1]."
QUERY = json.dumps({"query": "office hours"})


def sse(chunks: list[dict[str, Any]], *, done: bool = True) -> str:
    """A stream of `chunks` (each a `chat.completion.chunk` body or its choice's delta)."""
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return "".join(events) + ("data: [DONE]\n\n" if done else "")


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-variant",
        "object": "chat.completion.chunk",
        "model": "variant",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def text_chunks(text: str, finish: str = "stop", **last: Any) -> list[dict[str, Any]]:
    half = len(text) // 2
    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": text[:half]}),
        chunk({"content": text[half:]}),
        chunk({}, finish, **last),
    ]


USAGE = {"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}

VARIANTS: dict[str, list[str]] = {
    "openai, usage in a chunk of its own": [
        sse([*text_chunks(ANSWER), {"id": "x", "choices": [], "usage": USAGE}]),
    ],
    "deepseek, reasoning first, cache fields": [
        sse(
            [
                chunk({"role": "assistant", "content": None, "reasoning_content": "The user "}),
                chunk({"content": None, "reasoning_content": "asks about hours."}),
                *text_chunks(ANSWER)[1:],
                {
                    "id": "x",
                    "choices": [],
                    "usage": {
                        **USAGE,
                        "prompt_cache_hit_tokens": 512,
                        "prompt_cache_miss_tokens": 388,
                    },
                },
            ]
        )
    ],
    "gemini, usage on the last content chunk, no [DONE]": [
        sse(text_chunks(ANSWER, usage=USAGE), done=False),
    ],
    "ollama, no usage at all": [sse(text_chunks(ANSWER))],
    "other spellings of finish_reason": [sse(text_chunks(ANSWER, finish="end_turn"))],
    "ollama, a whole tool call in one chunk, finish_reason stop": [
        sse(
            [
                chunk(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {
                                "id": "call_o1",
                                "index": 0,
                                "type": "function",
                                "function": {"name": "search_knowledge", "arguments": QUERY},
                            }
                        ],
                    }
                ),
                chunk({}, "stop"),
            ]
        ),
        sse(text_chunks(ANSWER)),
    ],
    "vllm, arguments in fragments, content null, usage last": [
        sse(
            [
                chunk({"role": "assistant", "content": None}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "chatcmpl-tool-1",
                                "type": "function",
                                "function": {"name": "search_knowledge"},
                            }
                        ]
                    }
                ),
                *(
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
                    for part in (QUERY[:5], QUERY[5:12], QUERY[12:])
                ),
                chunk({}, "tool_calls"),
                {"id": "x", "choices": [], "usage": USAGE},
            ]
        ),
        sse([*text_chunks(ANSWER), {"id": "x", "choices": [], "usage": USAGE}]),
    ],
}


@dataclass
class Setup:
    lore: Lore
    fake: FakeOpenAI

    async def ask(self, question: str) -> Turn:
        member = await invite(self.lore.bot, f"m{uuid.uuid4().hex[:8]}")
        return await ask(self.lore.bot, member, question)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> AsyncIterator[Setup]:
    async with FakeOpenAI() as fake:
        settings = load_settings(
            _env_file=None,
            data_dir=tmp_path_factory.mktemp("variants") / "data",
            MODELS_DIR=models_dir,
            sample_docs_dir="",
            llm_base_url=fake.base_url,
            llm_model="variant",
            llm_prices="variant=1/0.5/2",
        )
        async with open_lore(settings) as lore:
            await remember(lore.bot, None, text=OFFICE, title="Office hours")
            yield Setup(lore, fake)


@pytest.mark.parametrize("streams", VARIANTS.values(), ids=VARIANTS.keys())
async def test_every_provider_variant_ends_in_a_cited_answer(
    setup: Setup, streams: list[str]
) -> None:
    for stream in streams:
        setup.fake.enqueue_sse(stream)
    turn = await setup.ask("When does the office open?")
    assert turn.errors == []
    assert turn.done.fallback == ""
    assert turn.done.answer == ANSWER
    assert [c.title for c in turn.done.citations] == ["Office hours"]
    assert turn.done.cost_usd > 0  # usage reported, or estimated when none came


@pytest.mark.parametrize(
    ("status", "retry_after", "body"),
    [
        (429, "0", None),  # rate limited, told when to come back
        (429, None, None),
        (503, None, None),
        (503, "0.1", None),
    ],
)
async def test_a_passing_overload_is_retried_and_answered_by_the_model(
    setup: Setup, status: int, retry_after: str | None, body: str | None
) -> None:
    start = len(setup.fake.requests)
    setup.fake.enqueue_error(status, body, retry_after=retry_after)
    setup.fake.enqueue_text(ANSWER)
    turn = await setup.ask("When does the office open?")
    assert len(setup.fake.requests) - start == 2
    assert turn.done.fallback == ""
    assert turn.done.answer == ANSWER


async def test_a_spent_provider_quota_is_not_retried_and_the_sources_answer(setup: Setup) -> None:
    start = len(setup.fake.requests)
    quota = {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota"}}
    setup.fake.enqueue_error(429, quota)
    turn = await setup.ask("When does the office open?")
    assert len(setup.fake.requests) - start == 1
    assert turn.done.fallback == "unavailable"
    assert "8 am" in turn.done.answer
    assert turn.done.answer.endswith(FALLBACK_NOTES["unavailable"])
