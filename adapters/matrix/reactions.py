"""Reactions on the bot's own messages are Matrix's buttons: 👍/👎 on an answer rates it
(thanked once in a private chat; in a room the reaction itself is the acknowledgement, as
Matrix has no message only the rater would see), ✅/❌ on an approval request decides it
(owners only; anyone else is told once, and a second decision hears that it is already
decided), ✅/❌ on a command's question answers it, and 🔒/🌐 on a source's question chooses
where it is kept (by the owner who sent it; anyone else is told once). Each goes to the
`Bot`, which decides. The marker of the message says what it stands for, so this works after
a restart too; the approval request is then edited to say who decided and when."""

from __future__ import annotations

import logging
from typing import Any

from adapters.matrix.answers import DOWN, UP
from adapters.matrix.config import PREFIX
from adapters.matrix.context import EdgeContext, chat_of, identity_of, is_private
from adapters.matrix.html import Formatted, plain, render_rich
from adapters.matrix.ingest_chat import save_source
from adapters.matrix.markers import Marker
from adapters.matrix.outbox import SendError
from adapters.matrix.replies import NO, PRIVATE, SHARED, YES, send_reply
from adapters.matrix.streaming import LiveReply, StatusMessage
from bot.approvals import DecisionOutcome
from bot.errors import LoreError
from bot.replies import Message, plain_text

__all__ = ["ReactionHandler"]

logger = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side. Please try again."
KEYS = {"fb": {UP, DOWN}, "ap": {YES, NO}, "cf": {YES, NO}, "in": {PRIVATE, SHARED}}


class ReactionHandler:
    """Handles reactions on the bot's messages for one Matrix edge."""

    def __init__(self, edge: EdgeContext) -> None:
        self._edge = edge

    async def on_reaction(self, room: Any, event: Any) -> None:
        """Someone reacted to a message in a room the bot is in."""
        edge = self._edge
        if event.sender == edge.me:
            return
        marker = await edge.markers.get(event.reacts_to)
        if marker is None or marker.room_id != room.room_id:
            return
        key = event.key.replace("\ufe0f", "")
        if key not in KEYS[marker.kind]:
            return
        async with edge.deduper.once(event.event_id) as first:
            if not first:
                return
            try:
                await self._handle(room, event, marker, key)
            except LoreError as exc:  # e.g. someone else's Private/Shared question: said once
                if edge.tell_once(f"refused:{event.reacts_to}:{event.sender}:{exc}"):
                    await self._tell(room, event.reacts_to, str(exc))
            except Exception:  # the tap boundary: log, and tell the person politely
                logger.exception("Matrix reaction %s failed", event.event_id)
                await self._tell(room, event.reacts_to, SORRY)

    async def _tell(self, room: Any, about: str, text: str | Formatted) -> None:
        shown = plain(text) if isinstance(text, str) else text
        try:
            await self._edge.outbox.send(room.room_id, shown, reply_to=about)
        except SendError:  # the error path must never raise
            logger.exception("Could not answer a reaction in room %s", room.room_id)

    async def _handle(self, room: Any, event: Any, marker: Marker, key: str) -> None:
        bot, identity = self._edge.bot, identity_of(room, event.sender)
        if marker.kind == "fb":
            thanks = await bot.record_feedback(identity, marker.target, 1 if key == UP else -1)
            said = f"fb:{event.reacts_to}:{event.sender}:{plain_text(thanks.body)}"
            if is_private(room) and self._edge.tell_once(said):
                await self._tell(room, event.reacts_to, render_rich(thanks.body))
        elif marker.kind == "ap":
            await self._decide(room, event, marker, approve=key == YES)
        elif marker.kind == "cf":
            answer = await bot.confirm(
                identity, chat_of(room), marker.target, key == YES, prefix=PREFIX
            )
            if isinstance(answer, Message):
                await self._edge.outbox.edit(
                    room.room_id, event.reacts_to, render_rich(answer.body)
                )
            else:
                await send_reply(self._edge, room.room_id, answer)
        else:
            source = await bot.choose_scope(identity, marker.target)
            edge = self._edge
            status = StatusMessage(
                LiveReply(edge.outbox, room.room_id, editing=event.reacts_to),
                interval=edge.config.stream_interval,
            )
            await status.push(bot.received(source))
            await save_source(edge, identity, source, status, shared=key == SHARED)

    async def _decide(self, room: Any, event: Any, marker: Marker, *, approve: bool) -> None:
        edge = self._edge
        decision = await edge.bot.decide_approval(
            identity_of(room, event.sender), marker.target, approve=approve
        )
        if decision.outcome is DecisionOutcome.NOT_OWNER:
            if edge.tell_once(f"not-owner:{marker.target}:{event.sender}"):
                await self._tell(room, event.reacts_to, decision.answer)
            return
        if decision.card is not None:
            await edge.outbox.edit(room.room_id, event.reacts_to, render_rich(decision.card))
        await self._tell(room, event.reacts_to, decision.answer)
