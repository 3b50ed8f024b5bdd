"""The contract between the core and the edges: who is talking, where, and the turn events.

Adapters import from here only. Turn events are defined next to the graph that emits them
(`graphs.agent.events`) and re-exported here unchanged.
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
    "ChatRef",
    "CitationEvent",
    "Identity",
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
