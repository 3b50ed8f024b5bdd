"""A question in a chat becomes a `Bot` turn whose events stream back: in private chats a
preview while the answer is written, in groups only the typing action; then the final cited
HTML with 👍/👎 buttons. What to show when is the `bot.turn_view.TurnView`'s decision."""

from __future__ import annotations

import logging

from telegram import Message

from adapters.telegram.buttons import feedback_keyboard
from adapters.telegram.context import EdgeContext, chat_ref, identity_of
from adapters.telegram.rendering import render_final, split_html
from adapters.telegram.streaming import LiveReply, typing_action
from bot.turn_view import TurnView

__all__ = ["answer_question"]

logger = logging.getLogger(__name__)


async def answer_question(edge: EdgeContext, message: Message, text: str) -> None:
    """Answer `text` (already stripped of a group @mention) in the message's chat."""
    sender = message.from_user
    if sender is None:
        return
    chat = chat_ref(message.chat, message)
    bot = message.get_bot()
    reply = LiveReply(
        bot,
        message.chat_id,
        private=not chat.is_group,
        drafts=edge.drafts,
        interval=edge.config.stream_interval,
        reply_to=message.message_id if chat.is_group else None,
        thread=message.message_thread_id if message.is_topic_message else None,
    )
    view = TurnView(chat)
    async with typing_action(bot, message.chat_id, delay=edge.config.typing_delay):
        async for event in edge.bot.handle_message(identity_of(sender), chat, text):
            view.add(event)
            preview = view.preview()
            if preview is not None:
                await reply.update(preview)
    if view.done is not None and view.done.turn_id == "":
        # Refused before any turn began (a stranger): one plain message, no buttons.
        await bot.send_message(message.chat_id, view.final().text)
        return
    final = view.final()
    turn = final.feedback_turn
    await reply.finish(split_html(render_final(final)), feedback_keyboard(turn) if turn else None)
    if view.done is not None:
        logger.info(
            "Telegram turn %s in %s chat: %s, %d ms",
            view.done.turn_id or "-",
            "group" if chat.is_group else "private",
            view.done.outcome,
            view.done.latency_ms,
        )
