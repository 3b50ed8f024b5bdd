"""A `ChatModel` for any OpenAI-compatible `/chat/completions` endpoint, streamed over httpx.

Works with OpenAI, DeepSeek, Gemini's OpenAI endpoint, vLLM and Ollama. Text deltas are
yielded as they arrive; tool calls are assembled from their fragments by `index` and returned
in the final `Completion` together with the usage of the final chunk.

Failures, and whether a call is retried (exponential backoff with jitter, `Retry-After`
honoured up to a cap, everything inside the total timeout):

* 401/403: `ProviderUnavailableError("authentication failed")`, never retried.
* 408, 409, 429 (except `insufficient_quota`), 5xx, connection errors, timeouts, and a stream
  that breaks before any text was yielded (tool-call fragments are never shown, so they may
  be re-asked for; the provider may bill both attempts): retried, then
  `ProviderUnavailableError`.
* Other 4xx: `ProviderUnavailableError` with the server's message, trimmed, never retried.
* Malformed SSE or JSON: never retried (it would most likely come back the same).
* A prompt longer than the model's context (OpenAI's `context_length_exceeded`, llama.cpp's
  `exceed_context_size_error`, vLLM's "maximum context length"): `ContextTooLongError`,
  never retried.
* The server could not read what the model wrote (llama.cpp answers a malformed tool call
  with an error event: "does not match the expected ... format"): `ModelOutputError`, never
  retried; the agent shows the model its mistake once instead (`graphs.agent.nodes`).
* Anything after a `TextDelta` was yielded: `ProviderStreamError`, never retried, because a
  retry would restart an answer the user has half seen.

A stream that ends without a usage chunk (a server ignoring `stream_options`) completes with
`Usage()` zeros; estimating the cost then is the caller's job. The API key and message
contents are never logged; DEBUG logs carry only sizes, statuses and attempt numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import math
import random
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, Self

import httpx

from graphs.llm.openai_stream import (
    AttemptFailedError,
    error_text,
    model_output_failure,
    read_events,
    transport_failure,
)
from graphs.llm.types import (
    ChatMessage,
    ContextTooLongError,
    ModelEvent,
    ModelOutputError,
    ProviderStreamError,
    ProviderUnavailableError,
    TextDelta,
    ToolChoice,
    ToolSpec,
)

__all__ = ["OpenAICompatibleModel"]

logger = logging.getLogger(__name__)

_RETRY_STATUSES = frozenset({408, 409, 429})
_MAX_ERROR_BODY = 64 * 1024
#: Shorter API keys are not scrubbed from error texts: replacing them would mangle words.
_MIN_SCRUBBED_KEY = 8
_CONTEXT_TOO_LONG = re.compile(
    r"context[_ ]length[_ ]exceeded|exceed\w*[_ ](?:the[_ ])?(?:available[_ ])?context"
    r"|maximum context length|context (?:size|window|length) (?:of|is|exceeded)"
    r"|prompt is too long|too many (?:input )?tokens",
    re.IGNORECASE,
)
_UNAVAILABLE = {
    "context": ContextTooLongError,
    "model_output": ModelOutputError,
}


class OpenAICompatibleModel:
    """Streams chat completions from `{base_url}/chat/completions`; use with `async with`.

    `max_tokens_field` names the output limit in the request: `max_tokens` is understood by
    OpenAI's chat models, DeepSeek, Gemini's OpenAI endpoint, vLLM and Ollama; OpenAI's
    reasoning models (o-series, gpt-5) reject it and need `max_completion_tokens`.
    `strict_tools` marks tool schemas `strict: true`; OpenAI enforces it (all properties
    required, `additionalProperties: false`), DeepSeek only on its beta endpoint, and the
    others ignore it, so switch it off only for a server that rejects the field.
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        total_timeout: float = 300.0,
        max_retries: int = 2,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        retry_after_cap: float = 30.0,
        max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        strict_tools: bool = True,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key or None
        self._model = model
        self._timeout = httpx.Timeout(
            connect=connect_timeout, read=read_timeout, write=read_timeout, pool=connect_timeout
        )
        self._total_timeout = total_timeout
        self._max_retries = max_retries
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._retry_after_cap = retry_after_cap
        self._max_tokens_field = max_tokens_field
        self._strict_tools = strict_tools
        self._transport = transport
        self._client = client
        self._owns_client = False
        self._sleep = sleep

    @property
    def name(self) -> str:
        """The configured model name (the server may report a dated variant; pricing uses this)."""
        return self._model

    async def __aenter__(self) -> Self:
        if self._client is None:
            self._client = httpx.AsyncClient(transport=self._transport, timeout=self._timeout)
            self._owns_client = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None
            self._owns_client = False

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 1024,
    ) -> AsyncGenerator[ModelEvent, None]:
        """Stream text deltas, then one `Completion`. Raises `ProviderError` subclasses.

        Close the generator (`contextlib.aclosing`) when leaving early: that closes the HTTP
        response at once instead of whenever it is garbage-collected.
        """
        body = json.dumps(self._request_body(messages, tools, tool_choice, max_tokens)).encode()
        logger.debug(
            "chat request: %d messages, %d tools, %d bytes", len(messages), len(tools), len(body)
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._total_timeout
        attempt = 0
        while True:
            shown = False
            try:
                async with contextlib.aclosing(self._attempt(body, deadline)) as events:
                    async for event in events:
                        shown = shown or isinstance(event, TextDelta)
                        yield event
            except AttemptFailedError as exc:
                reason = self._scrubbed(exc.reason)
                if shown:
                    raise ProviderStreamError(f"stream broke after text: {reason}") from None
                delay = self._retry_delay(attempt, exc)
                if delay is None or loop.time() + delay >= deadline:
                    error = _UNAVAILABLE.get(exc.kind, ProviderUnavailableError)
                    raise error(f"{reason} (after {attempt + 1} attempt(s))") from None
                attempt += 1
                logger.debug("retrying in %.2fs (attempt %d)", delay, attempt + 1)
                await self._sleep(delay)
            else:
                return

    def _scrubbed(self, reason: str) -> str:
        """A failure reason with the key masked, in case a server echoed it back (a key too
        short to tell from ordinary text is never configured: settings refuse it)."""
        key = self._api_key
        return reason.replace(key, "***") if key and len(key) >= _MIN_SCRUBBED_KEY else reason

    def _retry_delay(self, attempt: int, failure: AttemptFailedError) -> float | None:
        if not failure.retryable or attempt >= self._max_retries:
            return None
        if failure.retry_after is not None and math.isfinite(failure.retry_after):
            return min(max(failure.retry_after, 0.0), self._retry_after_cap)
        ceiling = min(self._backoff_cap, self._backoff_base * 2.0**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - jitter, not crypto

    def _request_body(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        tool_choice: ToolChoice,
        max_tokens: int,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [_message_json(message) for message in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            self._max_tokens_field: max_tokens,
        }
        if tools:  # OpenAI rejects `tool_choice` without `tools`.
            body["tools"] = [self._tool_json(tool) for tool in tools]
            body["tool_choice"] = tool_choice
        return body

    def _tool_json(self, tool: ToolSpec) -> dict[str, Any]:
        function: dict[str, Any] = {
            "name": tool.name,
            "description": tool.description,
            "parameters": dict(tool.parameters),
        }
        if self._strict_tools:
            function["strict"] = True
        return {"type": "function", "function": function}

    async def _attempt(self, body: bytes, deadline: float) -> AsyncGenerator[ModelEvent, None]:
        if self._client is None:
            raise RuntimeError("OpenAICompatibleModel must be used inside `async with`")
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = self._client.build_request(
            "POST", self._url, content=body, headers=headers, timeout=self._timeout
        )
        try:
            async with asyncio.timeout_at(deadline):
                response = await self._client.send(request, stream=True)
        except TimeoutError:
            raise AttemptFailedError("total timeout reached", retryable=False) from None
        except httpx.TransportError as exc:
            raise transport_failure(exc) from None
        try:
            logger.debug("chat response: HTTP %d", response.status_code)
            if response.status_code != httpx.codes.OK:
                raise await self._status_failure(response, deadline)
            if response.headers.get("content-type", "").startswith("application/json"):
                message = _error_message(await _read_capped(response, deadline))
                raise AttemptFailedError(f"expected a stream, got JSON: {message}", retryable=False)
            async for event in read_events(response, deadline, self._model):
                yield event
        finally:
            await response.aclose()

    async def _status_failure(
        self, response: httpx.Response, deadline: float
    ) -> AttemptFailedError:
        status = response.status_code
        if status in {401, 403}:
            return AttemptFailedError(f"authentication failed (HTTP {status})", retryable=False)
        payload = await _read_capped(response, deadline)
        message = _error_message(payload)
        if _CONTEXT_TOO_LONG.search(payload):
            return AttemptFailedError(
                f"the prompt is too long for the model (HTTP {status}): {message}",
                retryable=False,
                kind="context",
            )
        if model_output_failure(message):
            return AttemptFailedError(
                f"the server could not read the model's output (HTTP {status}): {message}",
                retryable=False,
                kind="model_output",
            )
        retryable = status in _RETRY_STATUSES or status >= 500
        if status == 429 and "insufficient_quota" in payload:
            retryable = False
        retry_after = _retry_after(response.headers) if retryable else None
        return AttemptFailedError(
            f"HTTP {status}: {message}", retryable=retryable, retry_after=retry_after
        )


def _message_json(message: ChatMessage) -> dict[str, Any]:
    result: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        result["content"] = message.content or None
        result["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        if message.tool_call_id is None:
            raise ValueError("a tool message needs the tool_call_id it answers")
        result["tool_call_id"] = message.tool_call_id
    if message.name is not None and message.role != "tool":
        result["name"] = message.name
    return result


async def _read_capped(response: httpx.Response, deadline: float) -> str:
    """An error body, at most `_MAX_ERROR_BODY` bytes; whatever arrived if reading fails."""
    data = bytearray()
    with contextlib.suppress(httpx.TransportError, TimeoutError):
        async with asyncio.timeout_at(deadline):
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) >= _MAX_ERROR_BODY:
                    break
    return data[:_MAX_ERROR_BODY].decode("utf-8", "replace")


def _error_message(payload: str) -> str:
    """The server's error message (OpenAI, vLLM, Ollama and Gemini shapes), trimmed."""
    try:
        parsed: Any = json.loads(payload)
    except ValueError:
        parsed = payload
    return error_text(parsed, fallback=payload)


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds from `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date)."""
    with contextlib.suppress(ValueError):
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return float(value)
    with contextlib.suppress(TypeError, ValueError):
        return (email.utils.parsedate_to_datetime(value) - datetime.now(tz=UTC)).total_seconds()
    return None
