"""The contract between the core and the edges: who is talking, where, and the turn events.

Adapters import from here only. Turn events are defined next to the graph that emits them
(`graphs.agent.events`) and re-exported here unchanged. A voice message adds two events of
the core's own before its turn: `Listening` while it is transcribed, `Heard` once it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphs.agent.events import (
    AnswerDelta,
    ApprovalPending,
    CitationEvent,
    RefusalEvent,
    ToolStatus,
    TurnDone,
    TurnError,
    TurnEvent,
)

__all__ = [
    "AnswerDelta",
    "ApprovalPending",
    "ChatEvent",
    "ChatRef",
    "CitationEvent",
    "Heard",
    "Identity",
    "Listening",
    "RefusalEvent",
    "ToolStatus",
    "TurnDone",
    "TurnError",
    "TurnEvent",
]


@dataclass(frozen=True, slots=True)
class Identity:
    """A person as a platform knows them."""

    platform: str
    platform_user_id: str
    display_name: str


@dataclass(frozen=True, slots=True)
class ChatRef:
    """Where a message was written: a private chat or a group, and the thread within it
    (a Slack `thread_ts`, a Discord thread, a Telegram topic) where the platform has one.
    Answers, approval outcomes and digests go back to the same place."""

    platform: str
    chat_id: str
    is_group: bool = False
    thread: str | None = None


@dataclass(frozen=True, slots=True)
class Listening:
    """A voice message is being transcribed: what to show meanwhile ("🎙 Transcribing…")."""

    message: str


@dataclass(frozen=True, slots=True)
class Heard:
    """What a voice message said (its transcript), and the language whisper heard."""

    text: str
    language: str = ""


ChatEvent = TurnEvent | Listening | Heard
"""What a message streams to its edge: a voice message's `Listening` and `Heard`, then the
events of the turn its words start (or of the note they ask to keep)."""
