"""Lore's typed replies as Telegram messages: rich text as HTML, confirmations and approval
cards with inline buttons, an invite as a deep link, and the command menus."""

from __future__ import annotations

import logging

from telegram import Bot as TelegramBot
from telegram import BotCommand, BotCommandScopeChat, Message
from telegram.error import TelegramError

from adapters.telegram.buttons import approval_keyboard, confirm_keyboard, scope_keyboard
from adapters.telegram.rendering import MAX_MESSAGE, render_rich, split_html
from bot.replies import (
    ApprovalCards,
    Confirmation,
    InviteCreated,
    Reply,
    ScopeQuestion,
    Style,
    plain_text,
)
from bot.replies import (
    Message as LoreMessage,
)
from bot.service import Bot

__all__ = ["register_menus", "send_reply"]

logger = logging.getLogger(__name__)


def _invite_text(reply: InviteCreated, bot_username: str) -> str:
    link = f"https://t.me/{bot_username}?start={reply.code}"
    return (
        f"Send this link to the new member (valid until {reply.expires_at:%Y-%m-%d}, "
        f"one use):\n{link}"
    )


async def send_reply(message: Message, reply: Reply) -> Message | None:
    """Answer `message` with `reply` in its chat (and forum topic); the last message sent."""
    if isinstance(reply, InviteCreated):
        return await message.reply_text(_invite_text(reply, message.get_bot().username))
    if isinstance(reply, Confirmation):
        keyboard = confirm_keyboard(reply.action, reply.yes_label, reply.no_label)
        return await message.reply_html(render_rich(reply.body), reply_markup=keyboard)
    if isinstance(reply, ScopeQuestion):
        return await message.reply_html(
            render_rich(reply.body), reply_markup=scope_keyboard(reply.key)
        )
    if isinstance(reply, ApprovalCards):
        return await _send_cards(message, reply)
    return await _send_message(message, reply)


async def _send_message(message: Message, reply: LoreMessage) -> Message | None:
    if all(span.style is Style.PLAIN for span in reply.body):  # plain words stay plain text
        return await message.reply_text(plain_text(reply.body)[:MAX_MESSAGE])
    sent = None
    for part in split_html(render_rich(reply.body)):
        sent = await message.reply_html(part)
    return sent


async def _send_cards(message: Message, reply: ApprovalCards) -> Message | None:
    if not reply.cards:
        return await message.reply_html(render_rich(reply.empty))
    sent = None
    for card in reply.cards:
        sent = await message.reply_html(
            render_rich(card.body), reply_markup=approval_keyboard(card.approval_id)
        )
    return sent


async def register_menus(telegram: TelegramBot, bot: Bot, owner_ids: frozenset[str]) -> None:
    """`setMyCommands` from the registry: the members' menu for everyone, and the owners'
    menu in each owner's private chat."""
    members = [BotCommand(c.name, c.summary) for c in bot.commands(owner=False)]
    owners = [BotCommand(c.name, c.summary) for c in bot.commands(owner=True)]
    await telegram.set_my_commands(members)
    for owner_id in sorted(owner_ids):
        try:
            await telegram.set_my_commands(owners, scope=BotCommandScopeChat(int(owner_id)))
        except (TelegramError, ValueError) as exc:
            logger.warning("Owner commands for %s not set: %s", owner_id, exc)
