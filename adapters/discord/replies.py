"""Lore's typed replies as Discord messages: rich text as escaped markdown split at 2,000
characters, confirmations, approval cards and Private/Shared questions with buttons, and an
invite as the words a newcomer sends (`/lore start CODE`)."""

from __future__ import annotations

from dataclasses import dataclass

import discord

from adapters.discord.buttons import approval_view, confirm_view, scope_view
from adapters.discord.config import PREFIX
from adapters.discord.context import send
from adapters.discord.markdown import render_rich, rich_pieces, split
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

__all__ = ["Outgoing", "outgoing", "send_reply"]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One Discord message to send: its markdown, its buttons, and whether it concerns only
    the person who asked (an ephemeral reply where Discord has one: slash commands)."""

    content: str
    view: discord.ui.View | None = None
    personal: bool = False


def _invite(reply: InviteCreated) -> Message:
    return Message(
        rich(
            "Send this to the new member: they open a direct message with me and send ",
            code(f"{PREFIX}start {reply.code}"),
            f" (one use, valid until {reply.expires_at:%Y-%m-%d}).",
        ),
        personal=True,
    )


def outgoing(reply: Reply) -> list[Outgoing]:
    """The messages that show `reply`, in order."""
    if isinstance(reply, InviteCreated):
        reply = _invite(reply)
    if isinstance(reply, Confirmation):
        view = confirm_view(reply.action, reply.yes_label, reply.no_label)
        return [Outgoing(render_rich(reply.body), view)]
    if isinstance(reply, ScopeQuestion):
        return [Outgoing(render_rich(reply.body), scope_view(reply.key))]
    if isinstance(reply, ApprovalCards):
        if not reply.cards:
            return [Outgoing(render_rich(reply.empty), personal=True)]
        return [
            Outgoing(render_rich(card.body), approval_view(card.approval_id), personal=True)
            for card in reply.cards
        ]
    return [Outgoing(part, personal=reply.personal) for part in split(rich_pieces(reply.body))]


async def send_reply(
    channel: discord.abc.Messageable, reply: Reply, *, reference: discord.Message | None = None
) -> discord.Message | None:
    """Post `reply` into a channel (the first message answers `reference`); the last one sent."""
    sent = None
    for index, message in enumerate(outgoing(reply)):
        sent = await send(
            channel,
            message.content,
            view=message.view,
            reference=reference if index == 0 else None,
        )
    return sent
