"""A question in a chat becomes a `Bot` turn whose events stream back: in private chats a
preview while the answer is written, in groups only the typing action; then the final cited
HTML with 👍/👎 buttons. What to show when is the `bot.turn_view.TurnView`'s decision. A voice
message's events (`bot.hear`) are shown the same way (`adapters.telegram.voice_chat`)."""

from __future__ import annotations

import html
import logging
from collections.abc import AsyncIterator

from telegram import Message

from adapters.telegram.buttons import feedback_keyboard
from adapters.telegram.context import EdgeContext, chat_ref, identity_of
from adapters.telegram.rendering import render_final, split_html
from adapters.telegram.streaming import LiveReply, typing_action
from bot.events import ChatEvent, ChatRef
from bot.turn_view import TurnView

__all__ = ["answer_events", "answer_question", "live_reply"]


logger = logging.getLogger(__name__)


async def answer_question(edge: EdgeContext, message: Message, text: str) -> None:
    """Answer `text` (already stripped of a group @mention) in the message's chat."""
    sender = message.from_user
    if sender is None:
        return
    chat = chat_ref(message.chat, message)
    events = edge.bot.handle_message(identity_of(sender), chat, text)
    await answer_events(edge, message, chat, live_reply(edge, message, chat), events)


def live_reply(edge: EdgeContext, message: Message, chat: ChatRef) -> LiveReply:
    """The reply that will hold the answer to `message`, previewed while it is written."""
    return LiveReply(
        message.get_bot(),
        message.chat_id,
        private=not chat.is_group,
        drafts=edge.drafts,
        interval=edge.config.stream_interval,
        reply_to=message.message_id if chat.is_group else None,
        thread=message.message_thread_id if message.is_topic_message else None,
    )


async def answer_events(
    edge: EdgeContext,
    message: Message,
    chat: ChatRef,
    reply: LiveReply,
    events: AsyncIterator[ChatEvent],
) -> None:
    """Show a turn's events (a message's, or a voice message's) as they come, then the final
    cited answer in `reply`."""
    bot = message.get_bot()
    view = TurnView(chat)
    async with typing_action(bot, message.chat_id, delay=edge.config.typing_delay):
        async for event in events:
            view.add(event)
            preview = view.preview()
            if preview is not None:
                await reply.update(preview)
    final = view.final()
    if view.done is not None and view.done.turn_id == "":
        # No turn (a stranger refused, a note kept): its text as it is, no buttons, in the
        # message that showed the preview if there was one.
        await reply.finish(split_html(html.escape(final.text, quote=False)))
        return
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
