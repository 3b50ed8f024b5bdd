"""Hardening row H: the daily cap is a cap. Reservations use an upper bound on prompt tokens
that no text can undercut, so concurrent CJK turns never settle above the cap."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.app import open_lore
from graphs.llm.pricing import (
    estimate_prompt_tokens,
    estimate_tokens,
    rough_tokens,
)
from graphs.llm.types import ChatMessage, ToolCall, ToolSpec
from tests.chat_turns import OWNER, ask, invite
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest

# ~3,900 CJK characters: under MAX_MESSAGE_CHARS (4,000), 3 UTF-8 bytes each.
CJK = ("東京の事務所は平日の朝八時に開き、夕方六時に閉まります。会議室の予約は前日までに。" * 100)[
    :3900
]
ANSWER_TOKENS = 40


def tokenizer_usage(request: RecordedRequest) -> tuple[int, int, int]:
    """Prompt tokens as a GPT-style tokenizer counts them: about a quarter of the ASCII
    characters, two tokens for each other character (common CJK characters are one or two
    tokens in cl100k/o200k, rarer ones three), and 4 per message. The answer is short."""
    prompt = 0
    for message in request.body["messages"]:
        text = message.get("content") or ""
        ascii_chars = sum(1 for c in text if c.isascii())
        prompt += 4 + -(-ascii_chars // 4) + 2 * (len(text) - ascii_chars)
    prompt += -(-len(json.dumps(request.body.get("tools", []))) // 4)
    return prompt, ANSWER_TOKENS, 0


async def test_row_h_concurrent_cjk_turns_never_settle_above_the_cap(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    cap_micros = 40_000  # $0.04 at $1 per million input tokens, $2 per million output tokens
    settings = llm_settings(daily_budget_usd=cap_micros / 1_000_000)
    async with open_lore(settings) as core:
        members = [await invite(core.bot, f"member{n}") for n in range(20)]
        for n in range(20):
            fake_openai.enqueue_text(f"回答 {n}。", usage=tokenizer_usage)
        turns = await asyncio.gather(*(ask(core.bot, who, CJK) for who in members))
        spent = round((await core.bot.budget_report(OWNER)).spent_usd * 1_000_000)
        settled = await core.database.fetch_all(
            "SELECT reserved_micros, settled_micros FROM budget_ledger WHERE status = 'settled'"
        )
    called = len(fake_openai.requests)
    from_sources = [turn for turn in turns if turn.done.fallback == "budget_spent"]
    assert called >= 1
    # Every turn either reached the model or was answered from the sources for nothing.
    assert len(from_sources) == 20 - called
    assert all(turn.done.cost_usd == 0 for turn in from_sources)
    real = [tokenizer_usage(request) for request in fake_openai.requests]
    assert all(prompt > 3900 for prompt, _, _ in real)  # the usage really is large
    assert spent <= cap_micros
    assert all(row["settled_micros"] <= row["reserved_micros"] for row in settled)


@pytest.mark.parametrize(
    "text",
    ["", "plain English words", CJK, "😀" * 50, "مرحبا بالعالم", "\u200b" * 30, "a" * 1000],
)
def test_row_h_the_estimate_is_never_below_the_utf8_bytes(text: str) -> None:
    # A byte-level BPE never makes more tokens than bytes: bytes are the upper bound.
    assert estimate_tokens(text) == len(text.encode())
    messages = [ChatMessage("system", "You are Lore."), ChatMessage("user", text)]
    assert estimate_prompt_tokens(messages) > len(text.encode()) + len(b"You are Lore.")


def test_row_h_tool_calls_and_tool_definitions_count_too() -> None:
    call = ToolCall("call_1", "search_knowledge", json.dumps({"query": "会議室の予約" * 20}))
    spec = ToolSpec("search_knowledge", "Search the notes.", {"type": "object"})
    bare = estimate_prompt_tokens([ChatMessage("assistant", "")])
    with_call = estimate_prompt_tokens([ChatMessage("assistant", "", (call,))])
    assert with_call - bare > len(call.arguments.encode())
    assert estimate_prompt_tokens([], [spec]) > len(b"search_knowledgeSearch the notes.")


def test_rough_tokens_are_for_sizing_only() -> None:
    assert [rough_tokens(t) for t in ["", "a", "abcd", "abcde", "x" * 400]] == [0, 1, 1, 2, 100]
    assert rough_tokens(CJK) < estimate_tokens(CJK) // 4
