"""A fake OpenAI-compatible chat server on 127.0.0.1:0 that streams scripted SSE answers.

    async with FakeOpenAI() as fake:
        fake.enqueue_text("Hello world", chunks=3, usage=(12, 3, 8))
        model = OpenAICompatibleModel(base_url=fake.base_url, api_key="k", model="m")
        ...
        assert fake.requests[0].body["stream"] is True

Answers are served in the order they were enqueued, one per request to
`POST /v1/chat/completions`; `fail_every(n)` answers every n-th request with a 503 without
using up a script. A request nobody scripted gets a loud 500. Streams use chunked transfer
encoding, and by default every SSE event is cut in two HTTP chunks (through a multi-byte
character when there is one), preceded by a `: ping` keepalive, so clients see events
split across network reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Literal, Self

__all__ = ["FakeOpenAI", "RecordedRequest", "ScriptedCall", "split_text"]

_PATH = "/v1/chat/completions"
RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "provider_streams"

Writer = asyncio.StreamWriter
Reply = Callable[[Writer, "RecordedRequest"], Awaitable[None]]
UsageFor = Callable[["RecordedRequest"], tuple[int, int, int]]
TextFor = Callable[["RecordedRequest"], str]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake received: path, lower-cased headers and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """A tool call to stream: its arguments are sent in `fragments` pieces."""

    name: str
    arguments: str
    call_id: str
    fragments: int = 3


def split_text(text: str, pieces: int) -> list[str]:
    """`text` cut into `pieces` non-empty parts of near-equal length (fewer if it is short)."""
    pieces = max(1, min(pieces, len(text)))
    size, extra = divmod(len(text), pieces)
    parts, start = [], 0
    for i in range(pieces):
        end = start + size + (1 if i < extra else 0)
        parts.append(text[start:end])
        start = end
    return parts


class FakeOpenAI:
    """A real HTTP/1.1 server that answers chat completions from a script."""

    def __init__(
        self,
        *,
        line_ending: str = "\n",
        split_events: bool = True,
        keepalive: bool = True,
    ) -> None:
        self.requests: list[RecordedRequest] = []
        self._line_ending = line_ending
        self._split_events = split_events
        self._keepalive = keepalive
        self._script: deque[Reply] = deque()
        self._fail_every = 0
        self._arrived = asyncio.Event()
        self._released = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._port = 0
        self._connections: dict[asyncio.Task[None], Writer] = {}

    @property
    def base_url(self) -> str:
        """What a client takes as `base_url` (it appends `/chat/completions`)."""
        return f"http://127.0.0.1:{self._port}/v1"

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self._port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop listening, let paused streams go, cut open connections, and wait for them.

        Handlers end on their own rather than being cancelled: Python 3.11's asyncio logs
        an error for a cancelled connection handler.
        """
        assert self._server is not None
        self._server.close()
        self._released.set()
        for writer in self._connections.values():
            writer.transport.abort()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    # -- scripting ---------------------------------------------------------------------------

    def enqueue_text(
        self,
        text: str | TextFor,
        *,
        chunks: int = 3,
        usage: tuple[int, int, int] | UsageFor | None = (10, 5, 0),
        cache_field: Literal["openai", "deepseek"] = "openai",
        finish_reason: str = "stop",
        hold_after: int | None = None,
    ) -> None:
        """Stream `text` as `chunks` content deltas, then finish, usage and `[DONE]`.

        `text` may be a function of the request (an answer that cites the passages the
        request carried, whatever their order). `usage` is (prompt, completion, cached)
        tokens, a function that computes them from the request (a tokenizer's count of what
        was sent), or None to send no usage chunk. With `hold_after=n` the stream pauses
        after n deltas until `release()`.
        """

        def deltas(request: RecordedRequest) -> list[dict[str, Any]]:
            written = text(request) if callable(text) else text
            return [{"content": part} for part in split_text(written, chunks)]

        self._script.append(
            self._stream_reply(deltas, finish_reason, usage, cache_field, hold_after)
        )

    def enqueue_tool_call(
        self, name: str, arguments: str, *, call_id: str = "call_1", text: str = ""
    ) -> None:
        """Stream one tool call, its arguments in fragments (after `text`, if any)."""
        self.enqueue_tool_calls([ScriptedCall(name, arguments, call_id)], text=text)

    def enqueue_tool_calls(
        self,
        calls: Sequence[ScriptedCall],
        *,
        interleave: bool = False,
        usage: tuple[int, int, int] | None = (10, 5, 0),
        text: str = "",
        text_chunks: int = 10,
        hold_after: int | None = None,
    ) -> None:
        """Stream parallel tool calls (one after the other, or fragments interleaved), after
        `text` in `text_chunks` content deltas when there is text (a model that writes
        before it calls a tool); `hold_after` as in `enqueue_text`."""
        per_call = [_tool_fragments(index, call) for index, call in enumerate(calls)]
        if interleave:
            longest = max(len(fragments) for fragments in per_call)
            order = [f[i] for i in range(longest) for f in per_call if i < len(f)]
        else:
            order = [fragment for fragments in per_call for fragment in fragments]
        deltas = [{"content": part} for part in split_text(text, text_chunks)] if text else []
        deltas += [{"tool_calls": [fragment]} for fragment in order]
        self._script.append(
            self._stream_reply(lambda _: deltas, "tool_calls", usage, "openai", hold_after)
        )

    def enqueue_error(
        self,
        status: int,
        body: str | dict[str, Any] | None = None,
        *,
        retry_after: str | float | None = None,
    ) -> None:
        """Answer with `status` before any stream; the body defaults to OpenAI's error shape."""
        if body is None:
            body = {"error": {"message": f"fake error {status}", "type": "fake_error"}}
        payload = body if isinstance(body, str) else json.dumps(body)
        extra = {} if retry_after is None else {"Retry-After": str(retry_after)}

        async def reply(writer: Writer, request: RecordedRequest) -> None:
            await _answer(writer, status, payload.encode(), extra)

        self._script.append(reply)

    def enqueue_drop_after(self, text: str, n_chunks: int) -> None:
        """Stream `text` as `n_chunks` deltas (0: none), then cut the connection abruptly."""
        deltas = [{"content": part} for part in split_text(text, n_chunks)] if n_chunks else []

        async def reply(writer: Writer, request: RecordedRequest) -> None:
            await self._start_stream(writer)
            for delta in deltas:
                await self._send_event(writer, _chunk_json(delta))
            writer.close()  # mid-body: the client sees an incomplete chunked response
            await writer.wait_closed()

        self._script.append(reply)

    def enqueue_sse(self, raw: str) -> None:
        """Stream `raw` as the whole SSE body, exactly as given (for malformed streams)."""

        async def reply(writer: Writer, request: RecordedRequest) -> None:
            await self._start_stream(writer)
            await _send_chunk(writer, raw.encode())
            await _send_chunk(writer, b"")

        self._script.append(reply)

    def enqueue_recording(self, name: str) -> None:
        """Answer with a real server's recorded response (`tests/fixtures/provider_streams/
        NAME.json`, made by `benchmarks/record_provider_streams.py`), byte for byte: its
        status, content type and body, a stream sent event by event as the server did."""
        record = json.loads((RECORDINGS / f"{name}.json").read_text("utf-8"))
        body = record["body"].encode()
        status, content_type = int(record["status"]), str(record["content_type"])

        async def reply(writer: Writer, request: RecordedRequest) -> None:
            if status != HTTPStatus.OK or not content_type.startswith("text/event-stream"):
                await _answer(writer, status, body, {"Content-Type": content_type})
                return
            fields = {"Content-Type": content_type, "Transfer-Encoding": "chunked"}
            writer.write(_head(200, {**fields, "Connection": "close"}))
            for event in re.split(rb"(?<=\n\n)", body):
                if event:
                    await _send_chunk(writer, event)
            await _send_chunk(writer, b"")

        self._script.append(reply)

    def fail_every(self, n: int) -> None:
        """Answer every n-th request (counting all of them) with a 503; 0 turns it off."""
        self._fail_every = n

    def release(self) -> None:
        """Let streams paused by `hold_after` go on."""
        self._released.set()

    async def wait_for_requests(self, n: int) -> None:
        """Return once at least `n` requests have arrived (wrap in `asyncio.timeout`)."""
        while len(self.requests) < n:
            self._arrived.clear()
            await self._arrived.wait()

    # -- serving -----------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        try:
            await self._handle(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away, or the fake is shutting down
        finally:
            del self._connections[task]
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        head_lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, path, _ = head_lines[0].split(" ", 2)
        headers = {}
        for line in filter(None, head_lines[1:]):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        body = json.loads(raw) if raw else {}
        request = RecordedRequest(path, headers, body)
        self.requests.append(request)
        self._arrived.set()
        number = len(self.requests)
        if (method, path) != ("POST", _PATH):
            await _json_error(writer, 404, f"FakeOpenAI: no route {method} {path}")
        elif self._fail_every and number % self._fail_every == 0:
            await _json_error(writer, 503, "FakeOpenAI: injected failure")
        elif self._script:
            await self._script.popleft()(writer, request)
        else:
            await _json_error(writer, 500, f"FakeOpenAI: no scripted answer for request {number}")

    def _stream_reply(
        self,
        deltas: Callable[[RecordedRequest], list[dict[str, Any]]],
        finish_reason: str,
        usage: tuple[int, int, int] | UsageFor | None,
        cache_field: str,
        hold_after: int | None,
    ) -> Reply:
        async def reply(writer: Writer, request: RecordedRequest) -> None:
            await self._start_stream(writer)
            await self._send_event(writer, _chunk_json({"role": "assistant", "content": ""}))
            for sent, delta in enumerate(deltas(request)):
                if sent == hold_after:
                    await self._released.wait()
                await self._send_event(writer, _chunk_json(delta))
            await self._send_event(writer, _chunk_json({}, finish_reason))
            if usage is not None:
                counts = usage(request) if callable(usage) else usage
                await self._send_event(writer, _usage_json(counts, cache_field))
            await self._send_event(writer, "[DONE]")
            await _send_chunk(writer, b"")

        return reply

    async def _start_stream(self, writer: Writer) -> None:
        fields = {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
            "Connection": "close",
        }
        writer.write(_head(200, fields))
        if self._keepalive:
            await _send_chunk(writer, f": ping{self._line_ending}{self._line_ending}".encode())

    async def _send_event(self, writer: Writer, data: str) -> None:
        event = f"data: {data}{self._line_ending}{self._line_ending}".encode()
        if not self._split_events:
            await _send_chunk(writer, event)
            return
        cut = _cut_point(event)
        await _send_chunk(writer, event[:cut])
        await _send_chunk(writer, event[cut:])


def _cut_point(event: bytes) -> int:
    """Inside the first multi-byte character if there is one, else the middle."""
    for position, byte in enumerate(event):
        if byte >= 0xC0:
            return position + 1
    return len(event) // 2


def _tool_fragments(index: int, call: ScriptedCall) -> list[dict[str, Any]]:
    first = {
        "index": index,
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    rest = [
        {"index": index, "function": {"arguments": part}}
        for part in split_text(call.arguments, call.fragments)
    ]
    return [first, *rest]


def _chunk_json(delta: dict[str, Any], finish_reason: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return json.dumps(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "fake-model",
            "choices": [choice],
        },
        ensure_ascii=False,
    )


def _usage_json(usage: tuple[int, int, int], cache_field: str) -> str:
    prompt, completion, cached = usage
    fields: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cache_field == "deepseek":
        fields["prompt_cache_hit_tokens"] = cached
        fields["prompt_cache_miss_tokens"] = prompt - cached
    else:
        fields["prompt_tokens_details"] = {"cached_tokens": cached}
    return json.dumps({"id": "chatcmpl-fake", "choices": [], "usage": fields})


async def _send_chunk(writer: Writer, data: bytes) -> None:
    """One HTTP chunk; an empty one ends the body."""
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    await writer.drain()


async def _json_error(writer: Writer, status: int, message: str) -> None:
    body = json.dumps({"error": {"message": message, "type": "fake_error"}}).encode()
    await _answer(writer, status, body, {})


async def _answer(writer: Writer, status: int, body: bytes, headers: dict[str, str]) -> None:
    """A whole response (JSON unless `headers` say otherwise), then the connection closes."""
    fields = {
        "Content-Type": "application/json",
        **headers,
        "Content-Length": str(len(body)),
        "Connection": "close",
    }
    writer.write(_head(status, fields) + body)
    await writer.drain()


def _head(status: int, fields: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in fields.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()
