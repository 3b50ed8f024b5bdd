"""What a turn looks like in a chat, platform-free: the text to preview while it streams and
the final answer to post, from the turn's events.

The rules, once for every edge: the answer in `TurnDone` is authoritative over streamed
text (verify may drop citations or turn an answer into a refusal: a correction); a refusal
or an error stands in for a missing answer; only answered turns take feedback; in a group
chat nothing is previewed — only the verified final answer is posted; and a preview shows no
live link (addresses are checked when the turn ends, see `graphs.agent.links`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.events import (
    AnswerDelta,
    ApprovalPending,
    ChatEvent,
    ChatRef,
    CitationEvent,
    Heard,
    Listening,
    RefusalEvent,
    ToolStatus,
    TurnDone,
    TurnError,
)
from graphs.agent.links import defang_all

__all__ = ["FinalAnswer", "FinalKind", "TurnView", "source_label"]

SORRY = "Sorry, something went wrong. Please try again."


def source_label(citation: CitationEvent) -> str:
    """How a cited source is named under an answer: its title (else its address) and, when
    the passage has one, where in it ("Minutes, page 3", "Voice note, at 1:23")."""
    name = citation.title or citation.source
    return f"{name}, {citation.location}" if citation.location else name


class FinalKind(StrEnum):
    """What the final message is."""

    ANSWER = "answer"
    REFUSAL = "refusal"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """The message that ends a turn: its text (with `[n]` markers), the sources it cites in
    order, whether it replaces different streamed text, and the turn that takes 👍/👎."""

    text: str
    citations: tuple[CitationEvent, ...]
    kind: FinalKind
    corrected: bool
    feedback_turn: str | None


class TurnView:
    """Accumulates one turn's events for one chat."""

    def __init__(self, chat: ChatRef | None = None) -> None:
        self.live = chat is None or not chat.is_group
        self.streamed = ""
        self.status: str | None = None
        self.refusal: str | None = None
        self.error: str | None = None
        self.done: TurnDone | None = None
        self.approvals: list[ApprovalPending] = []
        self.listening: str | None = None
        self.heard: str | None = None

    def add(self, event: ChatEvent) -> None:
        """Take one event into account."""
        if isinstance(event, Listening):
            self.listening = event.message
        elif isinstance(event, Heard):
            self.heard = event.text
        elif isinstance(event, AnswerDelta):
            self.streamed += event.text
        elif isinstance(event, ToolStatus):
            self.status = event.message
        elif isinstance(event, RefusalEvent):
            self.refusal = event.message
        elif isinstance(event, TurnError):
            self.error = event.message
        elif isinstance(event, ApprovalPending):
            self.approvals.append(event)
        elif isinstance(event, TurnDone):
            self.done = event

    def preview(self) -> str | None:
        """What to show now while the turn runs: the answer so far, else what the agent is
        doing; None in a group chat (only the final answer is posted there)."""
        if not self.live:
            return None
        if self.streamed.strip():  # links are checked at the end of the turn
            return self._spoken(defang_all(self.streamed))
        if self.status:
            return self._spoken(f"⏳ {self.status}")
        if self.heard is not None:
            return self._spoken("")
        return self.listening

    def _spoken(self, text: str) -> str:
        """`text` led by what a voice message said, when the turn answers one."""
        if self.heard is None:
            return text
        heard = f"🎙 “{defang_all(self.heard)}”"
        return f"{heard}\n\n{text}" if text else heard

    @property
    def answered_turn(self) -> str | None:
        """The turn id when the turn ended with an answer that can take feedback."""
        if self.done is not None and self.done.turn_id and self.done.outcome == "answered":
            return self.done.turn_id
        return None

    def final(self) -> FinalAnswer:
        """The final message: the authoritative answer with its sources, or why there is none."""
        done = self.done
        if done is None:
            return FinalAnswer(self.error or SORRY, (), FinalKind.ERROR, False, None)
        text = done.answer.strip() or self.refusal or self.error or self.streamed
        kind = FinalKind.ANSWER
        if self.error is not None and not done.answer.strip():
            kind = FinalKind.ERROR
        elif done.outcome in {"refused", "error"}:
            kind = FinalKind.REFUSAL if done.outcome == "refused" else FinalKind.ERROR
        corrected = bool(self.live and self.streamed.strip() and text != self.streamed)
        return FinalAnswer(self._spoken(text), done.citations, kind, corrected, self.answered_turn)
