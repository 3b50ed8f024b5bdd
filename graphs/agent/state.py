"""The agent graph's state: the conversation (checkpointed per chat and user), one turn's work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, TypedDict

from graphs.llm.types import ChatMessage, ToolCall
from storage.ids import UserId
from storage.money import Money

__all__ = [
    "AgentState",
    "PassageRef",
    "Refusal",
    "TurnInput",
    "TurnUsage",
    "checkpoint_types",
]


@dataclass(frozen=True, slots=True)
class TurnInput:
    """One message from an authenticated person. `user_id` comes from the identity, never the
    model; `is_group` turns private search off."""

    turn_id: str
    user_id: UserId
    role: str
    platform: str
    chat_id: str
    is_group: bool
    text: str
    timezone: str
    received_at: str
    # Set when the message held payment data: `text` is then a placeholder, never the message.
    withheld_guard: str | None = None
    withheld_reason: str = ""
    # The chat's thread (Slack/Discord thread, Telegram topic), where the chat has threads.
    chat_thread: str | None = None
    # The language of Lore's own words this turn, told from the message before anything was
    # withheld ("": told from `text`; see `AgentContext.reply_language`).
    language: str = ""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a turn was refused, and what the person is told."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class PassageRef:
    """A numbered source a tool showed the model this turn.

    `kind` "document": `document_id` names a stored document. `kind` "memory": it names
    a past turn of the same user (a search_memory result), in `turn_log`.
    """

    ref: int
    document_id: str
    title: str
    source: str
    private: bool
    kind: str = "document"
    location: str = ""  # where in the document the passage is ("page 3", "at 1:23")


@dataclass(frozen=True, slots=True)
class TurnUsage:
    """What the model calls of one turn consumed."""

    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_micros: int = 0  # a plain int: this record is checkpointed

    @property
    def cost(self) -> Money:
        """What the turn's model calls were booked at."""
        return Money(self.cost_micros)

    def plus(self, other: TurnUsage) -> TurnUsage:
        """The sum of two usages (the model name of the newer one)."""
        return TurnUsage(
            other.model or self.model,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cost_micros + other.cost_micros,
        )


KEPT_USER_TURNS = 12


def keep_recent(left: list[ChatMessage], right: list[ChatMessage]) -> list[ChatMessage]:
    """Append new messages, keeping the conversation from its last `KEPT_USER_TURNS` user
    messages on: older turns are never sent to the model, and every checkpoint would
    store them again (the state is written whole at each checkpoint)."""
    merged = left + right
    starts = [index for index, message in enumerate(merged) if message.role == "user"]
    if len(starts) <= KEPT_USER_TURNS:
        return merged
    return merged[starts[-KEPT_USER_TURNS] :]


class AgentState(TypedDict, total=False):
    """Conversation history accumulates (recent turns only); `thread_turns` counts every turn
    of the thread; everything else is reset by `guard_input` each turn."""

    messages: Annotated[list[ChatMessage], keep_recent]
    thread_turns: int
    turn: TurnInput
    resume_from_approval: bool
    refusal: Refusal | None
    # The guard found the message suspicious: fewer tools, a stricter prompt (guards_node).
    hardened: bool
    error: str | None
    # Why the model's text this turn leaked the system prompt (`graphs.agent.leak_stream`).
    prompt_leak: str | None
    tool_rounds: int
    passages: dict[int, PassageRef]
    # How many retrieved texts this turn carried a warning (`graphs.agent.passage_warnings`).
    flagged_passages: int
    # Tool calls this turn that ran out of time (verify: an error, never "no source").
    tool_timeouts: int
    pending_calls: list[ToolCall]
    approval_id: str | None
    answer: str
    # Who wrote `answer`: "model" (checked claim by claim before it is shown) or "extractive"
    # (quotes of the sources: the offline answerer, as the main model or as the fallback).
    answered_by: str
    # What the forced retrieval found the message to be (`graphs.agent.retrieval_node`):
    # "search", "reply" (a greeting, nothing to look up) or "act" (an action for the owner).
    plan: str
    # Why the turn is answered from the sources directly instead of by the model, or None.
    fallback: str | None
    # Told to the model once, for this turn only (its last reply could not be read).
    model_note: str | None
    finish_reason: str
    tools_used: list[str]
    usage: TurnUsage
    node_ms: dict[str, int]


def checkpoint_types() -> tuple[type, ...]:
    """The classes the checkpointer may revive (an explicit allowlist, nothing else)."""
    return (ChatMessage, ToolCall, TurnInput, Refusal, PassageRef, TurnUsage)
