"""A question in a chat becomes a `Bot` turn whose events stream back: previews while the
answer is written, a typing action while the agent works, then the final cited HTML
with 👍/👎 buttons."""

from __future__ import annotations

import logging

from telegram import Message, User

from adapters.telegram.buttons import feedback_keyboard
from adapters.telegram.context import EdgeContext, chat_ref, identity_of
from adapters.telegram.rendering import TurnView, escape
from adapters.telegram.streaming import LiveReply, typing_action
from bot.events import AnswerDelta, ToolStatus

__all__ = ["answer_question", "refuse_stranger"]

logger = logging.getLogger(__name__)


async def refuse_stranger(edge: EdgeContext, message: Message, sender: User, text: str) -> None:
    """Someone not invited: the core refuses (and logs it) before any model call; say it once."""
    view = TurnView()
    async for event in edge.bot.handle_message(identity_of(sender), chat_ref(message.chat), text):
        view.add(event)
    await message.get_bot().send_message(message.chat_id, escape(view.refusal or ""))


async def answer_question(edge: EdgeContext, message: Message, sender: User, text: str) -> None:
    """Answer `text` (already stripped of a group @mention) in the message's chat."""
    chat = chat_ref(message.chat)
    bot = message.get_bot()
    reply = LiveReply(
        bot,
        message.chat_id,
        private=not chat.is_group,
        drafts=edge.drafts,
        interval=edge.config.stream_interval,
        reply_to=message.message_id if chat.is_group else None,
    )
    view = TurnView()
    async with typing_action(bot, message.chat_id):
        async for event in edge.bot.handle_message(identity_of(sender), chat, text):
            view.add(event)
            if isinstance(event, AnswerDelta):
                await reply.update(view.streamed)
            elif isinstance(event, ToolStatus) and not view.streamed:
                await reply.update(f"⏳ {event.message}")
    turn = view.answered_turn
    await reply.finish(view.parts(), feedback_keyboard(turn) if turn else None)
    if view.done is not None:
        logger.info(
            "Telegram turn %s in %s chat: %s, %d ms",
            view.done.turn_id or "-",
            "group" if chat.is_group else "private",
            view.done.outcome,
            view.done.latency_ms,
        )
