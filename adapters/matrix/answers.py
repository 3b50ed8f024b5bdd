"""A question becomes a `Bot` turn whose events stream back. In a private chat the answer is
previewed in one message edited at most once a second while "typing…" shows; in a group room
only the verified final answer is posted, as a reply to the question or in its thread. The
final answer carries the bot's own 👍/👎 reactions: a tap on one rates the answer. What to
show when is the `bot.turn_view.TurnView`'s decision."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from adapters.matrix.context import EdgeContext, chat_of, identity_of, thread_of
from adapters.matrix.html import plain, render_final
from adapters.matrix.markers import Marker
from adapters.matrix.outbox import SendError
from adapters.matrix.streaming import LiveReply
from bot.events import ChatEvent, ChatRef
from bot.turn_view import TurnView

__all__ = [
    "DOWN",
    "UP",
    "answer_events",
    "answer_question",
    "live_reply",
    "take_feedback",
    "typing",
]

logger = logging.getLogger(__name__)

UP, DOWN = "👍", "👎"


@contextlib.asynccontextmanager
async def typing(edge: EdgeContext, room_id: str) -> AsyncIterator[None]:
    """ "Lore is typing…" in the room until the block ends (best effort)."""
    with contextlib.suppress(SendError):
        await edge.outbox.typing(room_id, on=True)
    try:
        yield
    finally:
        with contextlib.suppress(SendError):
            await edge.outbox.typing(room_id, on=False)


async def take_feedback(edge: EdgeContext, room_id: str, event_id: str, turn_id: str) -> None:
    """The bot's own 👍/👎 under an answer: a person's tap on one rates the turn."""
    await edge.markers.put(event_id, Marker(room_id, "fb", turn_id))
    for key in (UP, DOWN):
        await edge.outbox.react(room_id, event_id, key)


def live_reply(edge: EdgeContext, room: Any, event: Any) -> tuple[ChatRef, LiveReply]:
    """Where a message's answer goes: its chat, and the reply to stream into (a reply to the
    message or its thread in a group room, the room itself in a private chat)."""
    thread = thread_of(event)
    chat = chat_of(room, thread)
    reply = LiveReply(
        edge.outbox,
        room.room_id,
        reply_to=event.event_id if chat.is_group and thread is None else None,
        thread=thread if chat.is_group else None,
        interval=edge.config.stream_interval,
    )
    return chat, reply


async def answer_question(edge: EdgeContext, room: Any, event: Any, text: str) -> None:
    """Answer `text` (already without the bot's mention) where it was asked."""
    chat, reply = live_reply(edge, room, event)
    turn = edge.bot.handle_message(identity_of(room, event.sender), chat, text)
    await answer_events(edge, room.room_id, chat, reply, turn)


async def answer_events(
    edge: EdgeContext,
    room_id: str,
    chat: ChatRef,
    reply: LiveReply,
    turn: AsyncIterator[ChatEvent],
) -> None:
    """Show a turn's events in `reply`: previews while it runs (a private chat only), then the
    final answer with its feedback reactions."""
    view = TurnView(chat)
    async with typing(edge, room_id):
        async for turn_event in turn:
            view.add(turn_event)
            preview = view.preview()
            if preview is not None:
                await reply.update(preview)
    done = view.done
    if done is not None and done.turn_id == "":
        # Refused before any turn began (a stranger): one plain message, no reactions.
        await reply.finish([plain(view.final().text)])
        return
    final = view.final()
    last = await reply.finish(render_final(final))
    if final.feedback_turn:
        await take_feedback(edge, room_id, last, final.feedback_turn)
    if done is not None:
        logger.info(
            "Matrix turn %s in %s: %s, %d ms",
            done.turn_id or "-",
            "a room" if chat.is_group else "a direct chat",
            done.outcome,
            done.latency_ms,
        )
