"""Lore's typed replies as Slack messages: rich text as mrkdwn, confirmations, approval cards
and Private/Shared questions with buttons, an invite as the `/lore start CODE` to send.

Where a reply goes depends on where it was asked: in the bot's own direct message every
reply is an ordinary message; anywhere else a reply that concerns one person
(`personal`) is ephemeral — only they see it — and a slash command's replies go through
its `response_url`, which works in conversations the bot is not a member of.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.slack.blocks import Block, approval_buttons, confirm_buttons, scope_buttons
from adapters.slack.context import PREFIX
from adapters.slack.mrkdwn import render_rich, rich_pieces, split
from adapters.slack.outbox import Outbox, Place
from bot.replies import (
    ApprovalCards,
    Confirmation,
    InviteCreated,
    Reply,
    ScopeQuestion,
    rich,
)
from bot.replies import Message as LoreMessage

__all__ = ["Target", "invite_text", "send_reply", "tell"]


@dataclass(frozen=True, slots=True)
class Target:
    """Where a reply to one person goes: the conversation (and thread), who asked, whether
    it is the bot's own direct message with them, and a `response_url` if Slack gave one."""

    place: Place
    user: str
    private: bool
    response_url: str | None = None


def invite_text(reply: InviteCreated) -> str:
    """What an owner forwards to a newcomer (mrkdwn)."""
    return (
        f"Send this to the new member (valid until {reply.expires_at:%Y-%m-%d}, one use): "
        f"open a direct message with me in Slack and send `{PREFIX}start {reply.code}`"
    )


async def _send(
    outbox: Outbox, target: Target, text: str, buttons: Block | None, *, personal: bool
) -> None:
    """One message (at most one section long) to `target`."""
    if target.private:
        await outbox.post(target.place, text, buttons)
    elif target.response_url is not None:
        await outbox.respond(target.response_url, text, buttons, ephemeral=personal)
    elif personal:
        await outbox.ephemeral(target.place, target.user, text, buttons)
    else:
        await outbox.post(target.place, text, buttons)


async def tell(outbox: Outbox, target: Target, text: str) -> None:
    """Plain words (an error, a refusal) for the person who asked."""
    for part in split(rich_pieces(rich(text))):
        await _send(outbox, target, part, None, personal=True)


async def send_reply(outbox: Outbox, target: Target, reply: Reply) -> None:
    """Answer the person at `target` with `reply`."""
    if isinstance(reply, InviteCreated):
        await _send(outbox, target, invite_text(reply), None, personal=True)
    elif isinstance(reply, Confirmation):
        buttons = confirm_buttons(reply.action, reply.yes_label, reply.no_label)
        await _send(outbox, target, render_rich(reply.body), buttons, personal=True)
    elif isinstance(reply, ScopeQuestion):
        buttons = scope_buttons(reply.key)
        await _send(outbox, target, render_rich(reply.body), buttons, personal=True)
    elif isinstance(reply, ApprovalCards):
        if not reply.cards:
            await _send(outbox, target, render_rich(reply.empty), None, personal=True)
        for card in reply.cards:
            buttons = approval_buttons(card.approval_id)
            await _send(outbox, target, render_rich(card.body), buttons, personal=True)
    else:
        await _message(outbox, target, reply)


async def _message(outbox: Outbox, target: Target, reply: LoreMessage) -> None:
    for part in split(rich_pieces(reply.body)):
        await _send(outbox, target, part, None, personal=reply.personal)
