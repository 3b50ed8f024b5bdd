"""Lore's replies and turns as terminal text: spans become plain words (links show their
address), approval cards and confirmations become prompts the terminal can answer."""

from __future__ import annotations

from collections.abc import Callable

from bot.events import AnswerDelta, ApprovalPending, ToolStatus, TurnDone, TurnError, TurnEvent
from bot.replies import (
    Confirmation,
    InviteCreated,
    Message,
    Reply,
    Rich,
    ScopeQuestion,
    Style,
)
from bot.turn_view import TurnView, source_label

__all__ = ["TurnPrinter", "Write", "render_reply", "text_of"]

Write = Callable[[str], None]


def text_of(body: Rich) -> str:
    """Spans as terminal text; a link shows where it goes."""
    parts = []
    for span in body:
        if span.style is Style.LINK and span.url and span.url != span.text:
            parts.append(f"{span.text} <{span.url}>")
        else:
            parts.append(span.text)
    return "".join(parts)


def render_reply(reply: Reply) -> str:
    """A reply as the lines to print (confirmations are asked by the chat loop)."""
    if isinstance(reply, Message | ScopeQuestion | Confirmation):
        return text_of(reply.body)
    if isinstance(reply, InviteCreated):
        return (
            f"Invite code (valid until {reply.expires_at:%Y-%m-%d}, one use): {reply.code}\n"
            f"The new member sends /start {reply.code} to the bot."
        )
    if not reply.cards:
        return text_of(reply.empty)
    return "\n".join(
        f"{text_of(card.body)}\n  /approve {card.approval_id}  or  /reject {card.approval_id}"
        for card in reply.cards
    )


class TurnPrinter:
    """Prints one turn as it streams, then its final answer and sources."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self._view = TurnView()
        self._failed = False

    @property
    def approvals(self) -> list[ApprovalPending]:
        """Approval requests the turn made."""
        return self._view.approvals

    def show(self, event: TurnEvent) -> None:
        """Print one event."""
        self._view.add(event)
        if isinstance(event, AnswerDelta):
            self._write(event.text)
        elif isinstance(event, ToolStatus):
            self._write(f"  ({event.message})\n")
        elif isinstance(event, TurnError):
            self._failed = True
            self._write(f"Sorry: {event.message}\n")
        elif isinstance(event, TurnDone):
            self._finish()

    def _finish(self) -> None:
        final = self._view.final()
        if final.corrected:
            self._write("\n(Corrected answer:)\n" + final.text)
        elif not self._view.streamed.strip() and not self._failed:
            self._write(final.text)
        self._write("\n")
        if final.citations:
            self._write("Sources:\n")
            for citation in final.citations:
                self._write(f"  [{citation.ref}] {source_label(citation)} - {citation.source}\n")
