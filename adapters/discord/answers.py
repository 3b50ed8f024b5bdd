"""A question becomes a `Bot` turn whose events stream back. In a DM the answer is previewed in
one message edited at most about once a second, with the typing indicator while the agent
works; in a server the bot answers in a thread it opens on the question (or the thread it was
asked in) and posts only the verified final answer. Then the cited answer with 👍/👎. What to
show when is the `bot.turn_view.TurnView`'s decision. A voice message's events (`bot.hear`)
are shown the same way (`adapters.discord.voice_chat`)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import discord

from adapters.discord.buttons import feedback_view
from adapters.discord.config import PLATFORM
from adapters.discord.context import EdgeContext, identity_of, send
from adapters.discord.markdown import escape, render_final
from adapters.discord.streaming import LiveReply, typing
from bot.events import ChatEvent, ChatRef
from bot.turn_view import TurnView

__all__ = ["answer_events", "answer_question", "live_reply", "thread_target"]

logger = logging.getLogger(__name__)

THREAD_NAME_CHARS = 90


class _ThreadTarget:
    """Where a server answer goes: the thread it was asked in, or one opened on the question
    when the first message is posted (a thread started from a message has the message's id,
    so the conversation's `ChatRef` is known before the thread exists)."""

    def __init__(self, message: discord.Message, title: str) -> None:
        self._message = message
        self._title = title
        self._thread: discord.abc.Messageable | None = None
        channel = message.channel
        if isinstance(channel, discord.Thread):
            self._thread = channel
            self.chat = ChatRef(PLATFORM, str(channel.parent_id), True, str(channel.id))
        else:
            self.chat = ChatRef(PLATFORM, str(channel.id), True, str(message.id))

    async def __call__(self) -> discord.abc.Messageable:
        if self._thread is None:
            name = " ".join(self._title.split())[:THREAD_NAME_CHARS] or "Lore"
            self._thread = await self._message.create_thread(name=name)
        return self._thread


def thread_target(message: discord.Message, title: str) -> _ThreadTarget:
    """The thread for an answer to `message` in a server."""
    return _ThreadTarget(message, title)


async def answer_question(edge: EdgeContext, message: discord.Message, text: str) -> None:
    """Answer `text` (already stripped of the bot's mention) where it was asked."""
    chat, reply = live_reply(edge, message, text)
    events = edge.bot.handle_message(identity_of(message.author), chat, text)
    await answer_events(message, chat, reply, events, asked=text)


def live_reply(
    edge: EdgeContext, message: discord.Message, title: str
) -> tuple[ChatRef, LiveReply]:
    """Where the answer to `message` goes (in a server, a thread named `title`), and the
    reply that will hold it."""
    channel = message.channel
    if message.guild is None:

        async def here() -> discord.abc.Messageable:
            return channel

        reply = LiveReply(here, interval=edge.config.stream_interval)
        return ChatRef(PLATFORM, str(channel.id)), reply
    target = thread_target(message, title)
    return target.chat, LiveReply(target, interval=edge.config.stream_interval)


async def answer_events(
    message: discord.Message,
    chat: ChatRef,
    reply: LiveReply,
    events: AsyncIterator[ChatEvent],
    *,
    asked: str = "",
) -> None:
    """Show a turn's events (a message's, or a voice message's) as they come, then the final
    cited answer in `reply`."""
    channel = message.channel
    view = TurnView(chat)
    async with typing(channel):
        async for event in events:
            view.add(event)
            preview = view.preview()
            if preview is not None:
                await reply.update(preview)
    if view.done is not None and view.done.turn_id == "":
        # No turn (a stranger refused, a spoken note kept): its text as it is, no buttons; a
        # voice message's in its reply (which showed it being heard), else one plain message.
        text = escape(view.final().text)
        if view.heard is not None or view.listening is not None:
            await reply.finish([text])
        else:
            await send(channel, text, reference=message)
        return
    final = view.final()
    turn = final.feedback_turn
    await reply.finish(render_final(final, asked), feedback_view(turn) if turn else None)
    if view.done is not None:
        logger.info(
            "Discord turn %s in %s: %s, %d ms",
            view.done.turn_id or "-",
            "a server" if chat.is_group else "a DM",
            view.done.outcome,
            view.done.latency_ms,
        )
