"""The chat-model interface every provider implements, and the messages and events it speaks.

Messages follow the OpenAI chat shape (system, user, assistant with tool calls, tool
results), as frozen dataclasses. A provider streams `ModelEvent`s: text deltas as they
arrive, then exactly one `Completion` with the whole text, the tool calls and the usage.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "ChatMessage",
    "ChatModel",
    "Completion",
    "ContextTooLongError",
    "ModelEvent",
    "ModelOutputError",
    "ProviderError",
    "ProviderStreamError",
    "ProviderUnavailableError",
    "Role",
    "TextDelta",
    "ToolCall",
    "ToolChoice",
    "ToolSpec",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]
ToolChoice = Literal["auto", "none", "required"]


class ProviderError(Exception):
    """The model call failed; the message is safe to log (no key, no prompt)."""


class ProviderUnavailableError(ProviderError):
    """Failed before anything was streamed, after the allowed retries."""


class ContextTooLongError(ProviderUnavailableError):
    """The server refused the prompt as longer than the model's context; never retried."""


class ModelOutputError(ProviderUnavailableError):
    """The server could not read what the model wrote (a malformed tool call, llama.cpp's
    "does not match the expected format"): the model's fault, not an outage; never retried."""


class ProviderStreamError(ProviderError):
    """Failed after text had been streamed; the turn must end, never restart the answer."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool the model asked for; `arguments` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message of a conversation."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model: name, description and a strict JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens a call consumed, as the provider reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of answer text, streamed as it arrives."""

    text: str


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of one model call: all text, tool calls, usage and the model's name."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    model: str
    finish_reason: str = "stop"


ModelEvent = TextDelta | Completion


class ChatModel(Protocol):
    """A streaming chat model with tool calling."""

    @property
    def name(self) -> str:
        """The model name used for pricing and the turn log."""

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: Sequence[ToolSpec] = (),
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 1024,
    ) -> AsyncIterator[ModelEvent]:
        """Stream text deltas, then one `Completion`. Raises `ProviderError` subclasses."""
