"""The OpenAI-compatible provider against a real fake server, and the pricing math."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from graphs.llm.openai_compat import OpenAICompatibleModel
from graphs.llm.openai_stream import SseParser
from graphs.llm.pricing import (
    DEFAULT_PRICES,
    ModelPrice,
    call_cost,
    estimate_tokens,
    parse_price_table,
    price_for,
    worst_case_cost,
)
from graphs.llm.types import (
    ChatMessage,
    Completion,
    ProviderError,
    ProviderStreamError,
    ProviderUnavailableError,
    TextDelta,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
)
from storage.money import Money
from tests.fakes.openai_server import FakeOpenAI, ScriptedCall, split_text

KEY = "sk-test-0123456789abcdef"
QUESTION = (ChatMessage("system", "Answer briefly."), ChatMessage("user", "Hi?"))
SEARCH = ToolSpec(
    name="search_knowledge",
    description="Search the shared knowledge base.",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
        "additionalProperties": False,
    },
)


class RecordedSleeps:
    """The `sleep` the provider is given: records each backoff, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
def sleeps() -> RecordedSleeps:
    return RecordedSleeps()


@contextlib.asynccontextmanager
async def open_model(
    fake: FakeOpenAI, sleeps: RecordedSleeps | None = None, **options: Any
) -> AsyncIterator[OpenAICompatibleModel]:
    settings: dict[str, Any] = {
        "base_url": fake.base_url,
        "api_key": KEY,
        "model": "gpt-test",
        "backoff_base": 0.01,
        "backoff_cap": 0.02,
        "sleep": sleeps or RecordedSleeps(),
    }
    async with OpenAICompatibleModel(**(settings | options)) as model:
        yield model


async def run(
    model: OpenAICompatibleModel,
    messages: Sequence[ChatMessage] = QUESTION,
    *,
    deltas: list[str] | None = None,
    tools: Sequence[ToolSpec] = (),
    tool_choice: ToolChoice = "auto",
    max_tokens: int = 256,
) -> Completion:
    """Consume one call; text deltas go to `deltas` (kept when the call fails)."""
    seen = [] if deltas is None else deltas
    completions: list[Completion] = []
    stream = model.stream(messages, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens)
    async with contextlib.aclosing(stream) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                assert not completions, "text after the Completion"
                seen.append(event.text)
            else:
                completions.append(event)
    assert len(completions) == 1
    return completions[0]


# -- streaming ---------------------------------------------------------------------------------


async def test_text_arrives_as_ordered_deltas_with_openai_cached_usage(fake: FakeOpenAI) -> None:
    text = "Hello brave new wörld, streamed"
    fake.enqueue_text(text, chunks=4, usage=(1200, 7, 1024))
    deltas: list[str] = []
    async with open_model(fake) as model:
        completion = await run(model, deltas=deltas)
    assert deltas == split_text(text, 4)
    assert len(deltas) == 4
    assert completion == Completion(
        text=text,
        tool_calls=(),
        usage=Usage(prompt_tokens=1200, completion_tokens=7, cached_tokens=1024),
        model="gpt-test",
        finish_reason="stop",
    )


async def test_deepseek_cache_hit_tokens_are_cached_tokens(fake: FakeOpenAI) -> None:
    fake.enqueue_text("Ni hao", usage=(900, 2, 640), cache_field="deepseek")
    async with open_model(fake) as model:
        completion = await run(model)
    assert completion.usage == Usage(prompt_tokens=900, completion_tokens=2, cached_tokens=640)


async def test_missing_usage_chunk_completes_with_zero_usage(fake: FakeOpenAI) -> None:
    fake.enqueue_text("No usage here", usage=None)
    async with open_model(fake) as model:
        completion = await run(model)
    assert completion.text == "No usage here"
    assert completion.usage == Usage()


async def test_first_delta_is_yielded_before_the_stream_ends(fake: FakeOpenAI) -> None:
    fake.enqueue_text("one two three", chunks=3, hold_after=1)
    async with open_model(fake) as model:
        events = model.stream(QUESTION)
        first = await anext(events)  # the server is paused after the first delta
        assert first == TextDelta(split_text("one two three", 3)[0])
        fake.release()
        rest = [event async for event in events]
    assert [e.text for e in rest if isinstance(e, TextDelta)] == split_text("one two three", 3)[1:]
    assert isinstance(rest[-1], Completion)
    assert rest[-1].text == "one two three"


@pytest.mark.parametrize(("line_ending", "split"), [("\r\n", True), ("\r\n", False), ("\n", False)])
async def test_line_endings_and_event_splits_are_parsed(line_ending: str, split: bool) -> None:
    async with FakeOpenAI(line_ending=line_ending, split_events=split) as fake:
        fake.enqueue_text("Grüße aus Köln", chunks=3)
        deltas: list[str] = []
        async with open_model(fake) as model:
            completion = await run(model, deltas=deltas)
    assert deltas == split_text("Grüße aus Köln", 3)
    assert completion.text == "Grüße aus Köln"


async def test_leaving_the_stream_early_closes_cleanly(fake: FakeOpenAI) -> None:
    fake.enqueue_text("a long answer nobody reads to the end", chunks=5, hold_after=1)
    fake.enqueue_text("next")
    async with open_model(fake) as model:
        async with contextlib.aclosing(model.stream(QUESTION)) as events:
            assert isinstance(await anext(events), TextDelta)
        completion = await run(model)
    assert completion.text == "next"
    assert len(fake.requests) == 2


def test_sse_parser_handles_every_split_point() -> None:
    stream = (
        ": ping\r\n\r\n"
        'data: {"a": "é"}\r\n\r\n'
        "event: message\nid: 7\ndata: first\ndata: second\n\n"
        "data: one\r\ndata: two\r\n\r\n"
        "data:[DONE]\r\r"
    ).encode()
    expected = ['{"a": "é"}', "first\nsecond", "one\ntwo", "[DONE]"]
    for cut in range(len(stream) + 1):
        parser = SseParser()
        events = parser.feed(stream[:cut]) + parser.feed(stream[cut:]) + parser.close()
        assert events == expected, cut
    byte_by_byte = SseParser()
    events = [e for i in range(len(stream)) for e in byte_by_byte.feed(stream[i : i + 1])]
    assert events + byte_by_byte.close() == expected


# -- tool calls and the request ------------------------------------------------------------------


@pytest.mark.parametrize("interleave", [False, True])
async def test_parallel_tool_calls_are_assembled_from_fragments(
    fake: FakeOpenAI, interleave: bool
) -> None:
    first = ScriptedCall("search_knowledge", '{"query": "vacation policy"}', "call_a", 4)
    second = ScriptedCall("search_private", '{"query": "my notes on Ünïcode"}', "call_b", 3)
    fake.enqueue_tool_calls([first, second], interleave=interleave)
    deltas: list[str] = []
    async with open_model(fake) as model:
        completion = await run(model, deltas=deltas, tools=[SEARCH])
    assert deltas == []
    assert completion.tool_calls == (
        ToolCall("call_a", "search_knowledge", '{"query": "vacation policy"}'),
        ToolCall("call_b", "search_private", '{"query": "my notes on Ünïcode"}'),
    )
    assert completion.finish_reason == "tool_calls"


async def test_request_carries_tools_choice_limit_key_and_mapped_messages(
    fake: FakeOpenAI,
) -> None:
    fake.enqueue_text("Done.")
    call = ToolCall("call_1", "search_knowledge", '{"query": "wifi"}')
    conversation = [
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "What is the wifi password?", name="alice"),
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", '{"hits": []}', tool_call_id="call_1"),
    ]
    async with open_model(fake) as model:
        await run(model, conversation, tools=[SEARCH], tool_choice="none", max_tokens=321)
    request = fake.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 321
    assert body["tool_choice"] == "none"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search_knowledge",
                "description": "Search the shared knowledge base.",
                "parameters": dict(SEARCH.parameters),
                "strict": True,
            },
        }
    ]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the wifi password?", "name": "alice"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_knowledge", "arguments": '{"query": "wifi"}'},
                }
            ],
        },
        {"role": "tool", "content": '{"hits": []}', "tool_call_id": "call_1"},
    ]


async def test_without_tools_no_tools_or_tool_choice_are_sent(fake: FakeOpenAI) -> None:
    fake.enqueue_text("Plain.")
    async with open_model(fake, api_key=None, max_tokens_field="max_completion_tokens") as model:
        await run(model, max_tokens=64)
    body = fake.requests[0].body
    assert "tools" not in body
    assert "tool_choice" not in body
    assert body["max_completion_tokens"] == 64
    assert "max_tokens" not in body
    assert "authorization" not in fake.requests[0].headers


# -- failures and retries ------------------------------------------------------------------------


async def test_503_is_retried_once_without_duplicated_text(
    fake: FakeOpenAI, sleeps: RecordedSleeps
) -> None:
    fake.enqueue_error(503)
    fake.enqueue_text("Recovered answer", chunks=2)
    deltas: list[str] = []
    async with open_model(fake, sleeps) as model:
        completion = await run(model, deltas=deltas)
    assert deltas == split_text("Recovered answer", 2)
    assert completion.text == "Recovered answer"
    assert len(fake.requests) == 2
    assert len(sleeps.delays) == 1
    assert 0.005 <= sleeps.delays[0] <= 0.01  # base 0.01 with equal jitter


async def test_backoff_grows_up_to_the_cap_then_gives_up(
    fake: FakeOpenAI, sleeps: RecordedSleeps
) -> None:
    for _ in range(4):
        fake.enqueue_error(502)
    async with open_model(fake, sleeps, max_retries=3) as model:
        with pytest.raises(ProviderUnavailableError, match=r"HTTP 502.*after 4 attempt") as info:
            await run(model)
    assert "fake error 502" in str(info.value)
    assert len(fake.requests) == 4
    first, second, third = sleeps.delays
    assert 0.005 <= first <= 0.01
    assert 0.01 <= second <= 0.02
    assert 0.01 <= third <= 0.02  # capped at backoff_cap


@pytest.mark.parametrize(("header", "cap", "expected"), [("2", 30.0, 2.0), ("120", 30.0, 30.0)])
async def test_429_retry_after_is_honoured_up_to_the_cap(
    fake: FakeOpenAI, sleeps: RecordedSleeps, header: str, cap: float, expected: float
) -> None:
    fake.enqueue_error(429, retry_after=header)
    fake.enqueue_text("After the wait")
    async with open_model(fake, sleeps, retry_after_cap=cap) as model:
        completion = await run(model)
    assert completion.text == "After the wait"
    assert sleeps.delays == [expected]
    assert len(fake.requests) == 2


async def test_insufficient_quota_429_is_not_retried(fake: FakeOpenAI) -> None:
    body = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    fake.enqueue_error(429, body)
    async with open_model(fake) as model:
        with pytest.raises(ProviderUnavailableError, match="exceeded your current quota"):
            await run(model)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failure_names_no_key_and_is_not_retried(fake: FakeOpenAI, status: int) -> None:
    fake.enqueue_error(status, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    async with open_model(fake) as model:
        with pytest.raises(ProviderUnavailableError, match="authentication failed") as info:
            await run(model)
    assert KEY not in str(info.value)
    assert len(fake.requests) == 1


async def test_400_reports_the_server_message_trimmed_and_key_free(fake: FakeOpenAI) -> None:
    message = f"Invalid 'max_tokens': too large   for this model (key {KEY}) " + "x" * 500
    fake.enqueue_error(400, {"error": {"message": message, "type": "invalid_request_error"}})
    async with open_model(fake) as model:
        with pytest.raises(ProviderUnavailableError) as info:
            await run(model)
    text = str(info.value)
    assert "HTTP 400: Invalid 'max_tokens': too large for this model (key ***)" in text
    assert KEY not in text
    assert len(text) < 400
    assert len(fake.requests) == 1


async def test_drop_mid_stream_raises_stream_error_after_the_shown_deltas(
    fake: FakeOpenAI,
) -> None:
    fake.enqueue_drop_after("Half of an answer", 2)
    fake.enqueue_text("A second answer that must never be asked for")
    deltas: list[str] = []
    async with open_model(fake) as model:
        with pytest.raises(ProviderStreamError, match="stream broke after text"):
            await run(model, deltas=deltas)
    assert deltas == split_text("Half of an answer", 2)
    assert len(fake.requests) == 1


async def test_drop_before_any_text_is_retried(fake: FakeOpenAI) -> None:
    fake.enqueue_drop_after("", 0)
    fake.enqueue_text("Fresh start")
    deltas: list[str] = []
    async with open_model(fake) as model:
        completion = await run(model, deltas=deltas)
    assert "".join(deltas) == completion.text == "Fresh start"
    assert len(fake.requests) == 2


async def test_stream_ending_after_tool_fragments_only_is_retried(fake: FakeOpenAI) -> None:
    fragment = (
        '{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_x", '
        '"function": {"name": "search_knowledge", "arguments": "{\\"qu"}}]}}]}'
    )
    fake.enqueue_sse(f"data: {fragment}\n\n")  # ends without finish_reason or [DONE]
    fake.enqueue_tool_call("search_knowledge", '{"query": "wifi"}', call_id="call_y")
    async with open_model(fake) as model:
        completion = await run(model, tools=[SEARCH])
    assert completion.tool_calls == (ToolCall("call_y", "search_knowledge", '{"query": "wifi"}'),)
    assert len(fake.requests) == 2


@pytest.mark.parametrize(("retries", "expected_successes"), [(0, 5), (2, 10)])
async def test_fail_every_second_request_never_gives_partial_or_duplicated_answers(
    fake: FakeOpenAI, retries: int, expected_successes: int
) -> None:
    answers = [f"Answer number {i} in full" for i in range(10)]
    for answer in answers:
        fake.enqueue_text(answer, chunks=3)
    fake.fail_every(2)
    served = iter(answers)  # injected 503s do not use up a script
    successes = 0
    async with open_model(fake, max_retries=retries) as model:
        for _ in range(10):
            deltas: list[str] = []
            try:
                completion = await run(model, deltas=deltas)
            except ProviderUnavailableError:
                assert deltas == []
            else:
                expected = next(served)
                assert deltas == split_text(expected, 3)
                assert completion.text == expected
                successes += 1
    assert successes == expected_successes


@pytest.mark.parametrize("raw", ["data: {not json\n\n", 'data: ["a list"]\n\n', "data: 42\n\n"])
async def test_malformed_sse_before_text_is_a_clean_unavailable_error(
    fake: FakeOpenAI, raw: str
) -> None:
    fake.enqueue_sse(raw)
    async with open_model(fake) as model:
        with pytest.raises(ProviderUnavailableError, match="malformed stream"):
            await run(model)
    assert len(fake.requests) == 1


async def test_malformed_sse_after_text_is_a_stream_error(fake: FakeOpenAI) -> None:
    good = '{"choices": [{"index": 0, "delta": {"content": "Hi"}}]}'
    fake.enqueue_sse(f"data: {good}\n\ndata: {{broken\n\n")
    deltas: list[str] = []
    async with open_model(fake) as model:
        with pytest.raises(ProviderStreamError, match="malformed stream"):
            await run(model, deltas=deltas)
    assert deltas == ["Hi"]
    assert len(fake.requests) == 1


async def test_error_event_inside_the_stream_is_reported(fake: FakeOpenAI) -> None:
    fake.enqueue_sse('data: {"error": {"message": "upstream overloaded"}}\n\n')
    async with open_model(fake, max_retries=0) as model:
        with pytest.raises(ProviderUnavailableError, match="upstream overloaded"):
            await run(model)


async def test_json_instead_of_a_stream_is_reported_not_retried(fake: FakeOpenAI) -> None:
    fake.enqueue_error(200, {"error": {"message": "streaming is not supported"}})
    async with open_model(fake) as model:
        with pytest.raises(ProviderUnavailableError, match="got JSON: streaming is not supported"):
            await run(model)
    assert len(fake.requests) == 1


async def test_idle_stream_times_out(fake: FakeOpenAI) -> None:
    fake.enqueue_text("stuck", chunks=2, hold_after=1)
    deltas: list[str] = []
    async with open_model(fake, read_timeout=0.5) as model:
        with pytest.raises(ProviderStreamError, match="timed out"):
            await run(model, deltas=deltas)
    assert deltas == ["stu"]


async def test_total_timeout_bounds_the_call(fake: FakeOpenAI) -> None:
    fake.enqueue_text("stuck", chunks=2, hold_after=0)
    async with open_model(fake, read_timeout=30.0, total_timeout=0.5) as model:
        with pytest.raises(ProviderUnavailableError, match="total timeout"):
            await run(model)
    assert len(fake.requests) == 1


async def test_unscripted_request_fails_loudly(fake: FakeOpenAI) -> None:
    async with open_model(fake, max_retries=0) as model:
        with pytest.raises(ProviderError, match="no scripted answer for request 1"):
            await run(model)


async def test_unreachable_server_is_unavailable_after_retries(sleeps: RecordedSleeps) -> None:
    async with FakeOpenAI() as gone:
        base_url = gone.base_url
    async with OpenAICompatibleModel(
        base_url=base_url, api_key=KEY, model="m", backoff_base=0.01, backoff_cap=0.01, sleep=sleeps
    ) as model:
        with pytest.raises(ProviderUnavailableError, match=r"connection failed.*3 attempt"):
            await run(model)
    assert len(sleeps.delays) == 2


async def test_fake_counts_requests_without_polling(fake: FakeOpenAI) -> None:
    fake.enqueue_text("one")
    fake.enqueue_text("two")
    async with open_model(fake) as model:
        calls = asyncio.gather(run(model), run(model))
        async with asyncio.timeout(5):
            await fake.wait_for_requests(2)
        texts = sorted(completion.text for completion in await calls)
    assert texts == ["one", "two"]


# -- pricing -------------------------------------------------------------------------------------

PRICE = ModelPrice(input_per_million=1.0, cached_input_per_million=0.5, output_per_million=2.0)


def test_call_cost_bills_cached_tokens_at_the_cached_rate() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=500_000, cached_tokens=400_000)
    assert call_cost(PRICE, usage).dollars == pytest.approx(0.6 + 0.2 + 1.0)
    clamped = Usage(prompt_tokens=100, completion_tokens=0, cached_tokens=900)
    assert call_cost(PRICE, clamped).dollars == pytest.approx(100 * 0.5 / 1_000_000)
    assert call_cost(PRICE, Usage()) == Money.zero()


def test_worst_case_cost_assumes_no_cache_and_full_output() -> None:
    assert worst_case_cost(PRICE, 1000, 500).dollars == pytest.approx(
        (1000 * 1.0 + 500 * 2.0) / 1e6
    )
    usage = Usage(prompt_tokens=1000, completion_tokens=500, cached_tokens=1000)
    assert worst_case_cost(PRICE, 1000, 500) >= call_cost(PRICE, usage)


def test_estimate_tokens_counts_utf8_bytes_an_upper_bound() -> None:
    assert [estimate_tokens(t) for t in ["", "a", "abcd", "\u00e9", "\u6771\u4eac"]] == [
        0,
        1,
        4,
        2,
        6,
    ]


def test_parse_price_table_reads_the_setting() -> None:
    table = parse_price_table(" gpt-4o-mini = 0.15/0.075/0.60 ,deepseek-chat=0.27/0.07/1.10,")
    assert table == {
        "gpt-4o-mini": ModelPrice(0.15, 0.075, 0.60),
        "deepseek-chat": ModelPrice(0.27, 0.07, 1.10),
    }
    assert parse_price_table("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpt-4o-mini", "expected MODEL=INPUT/CACHED_INPUT/OUTPUT"),
        ("=1/2/3", "expected MODEL="),
        ("m=1/2", "three prices"),
        ("m=1/2/3/4", "three prices"),
        ("m=a/0.1/0.2", "must be numbers"),
        ("m=-1/0/0", "finite number >= 0"),
        ("m=nan/0/0", "finite number >= 0"),
        ("m=1/1/1,m=2/2/2", "listed twice"),
    ],
)
def test_parse_price_table_rejects_bad_entries(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        parse_price_table(text)
    assert "price entry" in str(info.value)


def test_unknown_model_gets_the_callers_fallback_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fallback = ModelPrice(10.0, 10.0, 30.0)
    with caplog.at_level(logging.WARNING, logger="graphs.llm.pricing"):
        assert price_for("mystery-model-x", DEFAULT_PRICES, fallback) is fallback
    assert "mystery-model-x" in caplog.text
    assert price_for("gpt-4o-mini", DEFAULT_PRICES, fallback) == ModelPrice(0.15, 0.075, 0.60)
    for price in DEFAULT_PRICES.values():
        assert price.cached_input_per_million <= price.input_per_million
