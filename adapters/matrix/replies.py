"""Lore's typed replies as Matrix messages. Matrix has no buttons: a question the person
answers (a command's Yes/No, an owner's Private/Shared choice or Approve/Reject) is a message
the bot reacts to with the possible answers, so that one tap on a reaction answers it; the
marker remembers what the message stands for. An invite is the words a newcomer sends."""

from __future__ import annotations

import logging

from adapters.matrix.config import PREFIX
from adapters.matrix.context import EdgeContext
from adapters.matrix.html import Formatted, render_rich
from adapters.matrix.markers import Marker
from bot.replies import (
    ApprovalCards,
    Confirmation,
    InviteCreated,
    Message,
    Reply,
    ScopeQuestion,
    code,
    rich,
)

__all__ = [
    "APPROVE",
    "NO",
    "PRIVATE",
    "REJECT",
    "SHARED",
    "YES",
    "approval_choices",
    "ask",
    "send_reply",
]

logger = logging.getLogger(__name__)

YES, NO = "✅", "❌"
APPROVE, REJECT = YES, NO
PRIVATE, SHARED = "🔒", "🌐"


def _invite(edge: EdgeContext, reply: InviteCreated) -> Formatted:
    return render_rich(
        rich(
            "Send this to the new member: they start a direct chat with me (",
            code(edge.me),
            ") and send ",
            code(f"{PREFIX}start {reply.code}"),
            f" there (one use, valid until {reply.expires_at:%Y-%m-%d}).",
        )
    )


def _hint(*choices: tuple[str, str]) -> Formatted:
    words = ", ".join(f"{key} {label}" for key, label in choices)
    return Formatted("\n", "<br>") + render_rich(rich(f"React {words}."))


async def ask(
    edge: EdgeContext,
    room_id: str,
    text: Formatted,
    marker: tuple[str, str],
    choices: tuple[tuple[str, str], ...],
    *,
    reply_to: str | None = None,
    thread: str | None = None,
) -> str:
    """A question answered by a reaction: sent, remembered, and pre-reacted with each choice."""
    outbox = edge.outbox
    event_id = await outbox.send(room_id, text + _hint(*choices), reply_to=reply_to, thread=thread)
    await edge.markers.put(event_id, Marker(room_id, *marker))
    for key, _ in choices:
        await outbox.react(room_id, event_id, key)
    return event_id


def approval_choices(approval_id: str) -> tuple[tuple[str, str], ...]:
    """How an owner answers an approval request (also by command)."""
    return (
        (APPROVE, f"to approve ({PREFIX}approve {approval_id})"),
        (REJECT, f"to reject ({PREFIX}reject {approval_id})"),
    )


async def send_reply(
    edge: EdgeContext,
    room_id: str,
    reply: Reply,
    *,
    reply_to: str | None = None,
    thread: str | None = None,
) -> None:
    """Post `reply` into a room (as a reply to `reply_to`, or in `thread`)."""
    outbox = edge.outbox
    where = {"reply_to": reply_to, "thread": thread}
    if isinstance(reply, InviteCreated):
        await outbox.send(room_id, _invite(edge, reply), **where)
    elif isinstance(reply, Confirmation):
        choices: tuple[tuple[str, str], ...] = ((YES, reply.yes_label), (NO, reply.no_label))
        await ask(edge, room_id, render_rich(reply.body), ("cf", reply.action), choices, **where)
    elif isinstance(reply, ScopeQuestion):
        choices = ((PRIVATE, "Private"), (SHARED, "Shared"))
        await ask(edge, room_id, render_rich(reply.body), ("in", reply.key), choices, **where)
    elif isinstance(reply, ApprovalCards):
        if not reply.cards:
            await outbox.send(room_id, render_rich(reply.empty), **where)
        for card in reply.cards:
            choices = approval_choices(card.approval_id)
            marker = ("ap", card.approval_id)
            await ask(edge, room_id, render_rich(card.body), marker, choices, **where)
    elif isinstance(reply, Message):
        await outbox.send(room_id, render_rich(reply.body), **where)
