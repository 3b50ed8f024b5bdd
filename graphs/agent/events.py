"""What a turn streams to the edges: text, tool status, citations, approvals, refusals, the end.

These frozen dataclasses are the contract between the core and every edge (`bot.events`
re-exports them); an adapter renders them and never looks inside the graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "AnswerDelta",
    "ApprovalPending",
    "CitationEvent",
    "RefusalEvent",
    "ToolStatus",
    "TurnDone",
    "TurnError",
    "TurnEvent",
]


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    """A piece of the answer as the model writes it."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolStatus:
    """What the agent is doing now ("Searching your notes...")."""

    tool: str
    message: str


@dataclass(frozen=True, slots=True)
class CitationEvent:
    """A numbered source the final answer cites; it names a stored document."""

    ref: int
    document_id: str
    title: str
    source: str
    private: bool
    #: Where in the source the cited passage is ("page 3", "at 1:23"); "" when nothing to say.
    location: str = ""


@dataclass(frozen=True, slots=True)
class ApprovalPending:
    """A high-risk action waits for the owner; the requester is told, the owner is asked."""

    approval_id: str
    tool: str
    summary: str
    requester_user_id: str
    expires_at: str


@dataclass(frozen=True, slots=True)
class RefusalEvent:
    """The turn was refused before or instead of an answer; `message` is for the person."""

    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class TurnError:
    """The turn failed; `message` is polite and safe to show."""

    message: str


@dataclass(frozen=True, slots=True)
class TurnDone:
    """The end of a turn: the final answer (authoritative over streamed text) and its cost."""

    turn_id: str
    outcome: str
    answer: str
    citations: tuple[CitationEvent, ...] = ()
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: int = 0
    node_latency_ms: Mapping[str, int] = field(default_factory=dict)
    # Why the answer was taken from the sources directly instead of from the model ("" when
    # it was not): unverified, incomplete, unavailable, context, budget_spent ...
    fallback: str = ""


TurnEvent = (
    AnswerDelta | ToolStatus | CitationEvent | ApprovalPending | RefusalEvent | TurnError | TurnDone
)
