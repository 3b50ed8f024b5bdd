"""Reading one streamed chat completion: SSE events to text deltas, tool calls and usage.

Used by `openai_compat`; the server-sent events may be split anywhere between network
chunks, use `\\r\\n` or `\\n`, and carry `: ping` keepalive comments.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from graphs.llm.types import Completion, ModelEvent, TextDelta, ToolCall, Usage

__all__ = [
    "AttemptFailedError",
    "FailureKind",
    "SseParser",
    "StreamState",
    "error_text",
    "model_output_failure",
    "normal_finish_reason",
    "read_events",
    "transport_failure",
]

_MAX_EVENT_CHARS = 1024 * 1024
_MAX_MESSAGE_CHARS = 300
_LINE_END = re.compile(r"\r\n|\r|\n")
#: What servers say when the model's own output broke their parser (llama.cpp: "The model
#: produced output that does not match the expected peg-native format"; vLLM and proxies:
#: "failed to parse tool call", "invalid function call").
_MODEL_OUTPUT = re.compile(
    r"does not match the expected|fail\w* to parse|could not parse|pars\w* error"
    r"|invalid (?:tool|function)[ _]call|malformed (?:tool|function)",
    re.IGNORECASE,
)
#: `finish_reason` spellings of other servers, as OpenAI's.
_FINISH_REASONS = {
    "tool_use": "tool_calls",
    "function_call": "tool_calls",
    "max_tokens": "length",
    "max_output_tokens": "length",
    "model_length": "length",
    "end_turn": "stop",
    "eos": "stop",
    "eos_token": "stop",
    "stop_sequence": "stop",
    "safety": "content_filter",
    "recitation": "content_filter",
}

#: Why an attempt failed, which decides the error the caller sees: `model_output` (the server
#: could not read what the model wrote) and `context` (the prompt is too long) are the
#: model's or the prompt's doing, not an outage.
FailureKind = Literal["transport", "status", "context", "model_output", "stream"]


class AttemptFailedError(Exception):
    """One attempt failed; `reason` is safe to show (no key, no prompt)."""

    def __init__(
        self,
        reason: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        kind: FailureKind = "status",
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind


def model_output_failure(message: str) -> bool:
    """Whether a server's error message says the model's own output could not be read."""
    return _MODEL_OUTPUT.search(message) is not None


def transport_failure(exc: httpx.TransportError) -> AttemptFailedError:
    """A retryable failure for an httpx connection error or timeout (type name only)."""
    if isinstance(exc, httpx.TimeoutException):
        return AttemptFailedError(
            f"timed out ({type(exc).__name__})", retryable=True, kind="transport"
        )
    return AttemptFailedError(
        f"connection failed ({type(exc).__name__})", retryable=True, kind="transport"
    )


def normal_finish_reason(reason: str) -> str:
    """A `finish_reason` as OpenAI spells it ("STOP", "max_tokens", "tool_use" ...)."""
    lowered = reason.strip().lower()
    return _FINISH_REASONS.get(lowered, lowered)


def error_text(parsed: Any, *, fallback: str) -> str:
    """The message in a parsed error body (OpenAI, vLLM, Ollama, Gemini shapes), trimmed."""
    return _trimmed(_message_in(parsed) or fallback)


def _message_in(parsed: Any) -> str | None:
    for _ in range(4):  # {"error": {"message": ...}}, [{"error": ...}], {"message": ...}
        if isinstance(parsed, str):
            return parsed
        if isinstance(parsed, list) and parsed:
            parsed = parsed[0]
        elif isinstance(parsed, dict):
            parsed = parsed.get("message", parsed.get("error"))
        else:
            return None
    return None


def _trimmed(text: str) -> str:
    text = " ".join(text.split()) or "no error message"
    if len(text) > _MAX_MESSAGE_CHARS:
        text = text[: _MAX_MESSAGE_CHARS - 1] + "…"
    return text


async def read_events(
    response: httpx.Response, deadline: float, model: str
) -> AsyncGenerator[ModelEvent, None]:
    """Text deltas as they arrive, then the `Completion`; raises `AttemptFailedError`."""
    parser = SseParser()
    state = StreamState()
    chunks = response.aiter_bytes()
    while not state.done:
        try:
            async with asyncio.timeout_at(deadline):
                chunk = await anext(chunks, None)
        except TimeoutError:
            raise AttemptFailedError("total timeout reached", retryable=False) from None
        except httpx.TransportError as exc:
            raise transport_failure(exc) from None
        events = parser.feed(chunk) if chunk is not None else parser.close()
        for data in events:
            text = state.apply(data)
            if text:
                yield TextDelta(text)
            if state.done:
                break
        if chunk is None:
            break
    yield state.completion(model)


class SseParser:
    """Server-sent events to their `data` payloads; bytes may split anywhere."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self._buffer = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes, *, final: bool = False) -> list[str]:
        """The data of every event completed by `chunk`."""
        try:
            self._buffer += self._decoder.decode(chunk, final=final)
        except UnicodeDecodeError:
            raise AttemptFailedError("malformed stream: invalid UTF-8", retryable=False) from None
        events: list[str] = []
        while (match := _LINE_END.search(self._buffer)) is not None:
            if match.group() == "\r" and match.end() == len(self._buffer):
                break  # maybe the first half of "\r\n"
            line = self._buffer[: match.start()]
            self._buffer = self._buffer[match.end() :]
            events.extend(self._line(line))
        if len(self._buffer) > _MAX_EVENT_CHARS:
            raise AttemptFailedError("malformed stream: line too long", retryable=False)
        return events

    def close(self) -> list[str]:
        """At the end of the stream: a last unterminated line and event are dispatched."""
        events = self.feed(b"", final=True)
        line, self._buffer = self._buffer, ""
        events.extend(self._line(line.rstrip("\r")))
        events.extend(self._line(""))
        return events

    def _line(self, line: str) -> list[str]:
        if not line:
            data, self._data = self._data, []
            return ["\n".join(data)] if data else []
        if line.startswith(":"):
            return []  # a comment, e.g. a ": ping" keepalive
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value.removeprefix(" "))
        return []  # `event:`, `id:` and `retry:` mean nothing here


@dataclass
class PartialCall:
    """One tool call while its fragments arrive."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamState:
    """What the chunks said so far: text, tool-call fragments, finish reason, usage."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    done: bool = False

    def apply(self, data: str) -> str:
        """Take one event's data; returns the text it adds (maybe empty)."""
        if data.strip() == "[DONE]":
            self.done = True
            return ""
        try:
            payload = json.loads(data)
            return self._apply_chunk(payload)
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            raise AttemptFailedError("malformed stream: bad JSON chunk", retryable=False) from None

    def _apply_chunk(self, payload: dict[str, Any]) -> str:
        if payload.get("error") is not None:  # OpenAI, vLLM and proxies report errors in-band
            message = error_text(payload["error"], fallback="unknown error")
            if model_output_failure(message):
                raise AttemptFailedError(
                    f"the server could not read the model's output: {message}",
                    retryable=False,
                    kind="model_output",
                )
            raise AttemptFailedError(f"error in stream: {message}", retryable=True, kind="stream")
        if isinstance(payload.get("usage"), dict):
            self.usage = _usage(payload["usage"])
        choices = payload.get("choices") or []
        if not choices:
            return ""
        choice = choices[0]
        if choice.get("finish_reason"):
            self.finish_reason = normal_finish_reason(str(choice["finish_reason"]))
        delta = choice.get("delta") or {}
        for fragment in delta.get("tool_calls") or []:
            self._apply_tool_fragment(fragment)
        if isinstance(delta.get("function_call"), dict):  # the legacy single-call form
            self._apply_tool_fragment({"index": 0, "function": delta["function_call"]})
        # `reasoning_content` (DeepSeek reasoner) and `refusal` are not part of the answer.
        content = delta.get("content")
        if content is None:
            return ""
        if not isinstance(content, str):
            raise TypeError("content is not text")
        self.text.append(content)
        return content

    def _apply_tool_fragment(self, fragment: dict[str, Any]) -> None:
        call_id = fragment.get("id")
        index = fragment.get("index")
        if not isinstance(index, int):  # some servers omit it: match by id, else the last call
            known = [i for i, call in self.calls.items() if call_id and call.id == call_id]
            new = call_id is not None or not self.calls
            following = max(self.calls, default=-1) + 1
            index = known[0] if known else following if new else following - 1
        call = self.calls.setdefault(index, PartialCall())
        if call_id:
            call.id = str(call_id)
        function = fragment.get("function") or {}
        if function.get("name"):
            call.name = str(function["name"])
        arguments = function.get("arguments")
        if arguments:  # a JSON string by the spec; a few servers send the object itself
            call.arguments.append(
                arguments if isinstance(arguments, str) else json.dumps(arguments)
            )

    def completion(self, model: str) -> Completion:
        """The finished call; fails if the stream ended before the model finished."""
        if not self.done and self.finish_reason is None:
            raise AttemptFailedError(
                "stream ended before the answer was finished", retryable=True, kind="stream"
            )
        calls = []
        for index in sorted(self.calls):
            partial = self.calls[index]
            if not partial.name:
                raise AttemptFailedError(
                    "malformed stream: tool call without name", retryable=False
                )
            arguments = "".join(partial.arguments) or "{}"  # "" from some servers for no args
            calls.append(ToolCall(partial.id or f"call_{index}", partial.name, arguments))
        return Completion(
            text="".join(self.text),
            tool_calls=tuple(calls),
            usage=self.usage,
            model=model,
            finish_reason=self.finish_reason or "stop",
        )


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or 0
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        cached_tokens=int(cached),
    )
