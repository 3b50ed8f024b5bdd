"""Routing of room messages: `!command` to the `bot/` registry, voice messages to hear, files
and lone links to save, questions to answer; in a group room only what calls the bot. Each
event is handled once (a copy re-synced after a restart is skipped) and errors end politely
here.

Notices (`m.notice`, what bots send) and edits of earlier messages are not answered, so
two bots never talk in circles and an edited question is not answered twice.
"""

from __future__ import annotations

import logging
from typing import Any

from adapters.matrix.addressing import addressed_text, unquoted
from adapters.matrix.answers import answer_question
from adapters.matrix.config import PREFIX
from adapters.matrix.context import EdgeContext, chat_of, identity_of, is_private, thread_of
from adapters.matrix.html import plain
from adapters.matrix.ingest_chat import offer_source, source_of
from adapters.matrix.outbox import SendError
from adapters.matrix.replies import send_reply
from adapters.matrix.voice_chat import addressed_voice, hear_voice
from bot.errors import LoreError

__all__ = ["MessageHandler", "text_command"]

logger = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side. Please try again in a moment."
EMPTY = "Send me a question, a document or a link."
ANSWERED = {"m.text", "m.file", "m.image", "m.audio", "m.video"}


def text_command(text: str) -> tuple[str, str] | None:
    """(name, arguments) of `!name arguments`, else None."""
    if not text.startswith(PREFIX):
        return None
    name, _, args = text[len(PREFIX) :].partition(" ")
    if not name or not name.isalnum():
        return None
    return name.lower(), args.strip()


class MessageHandler:
    """Handles the room messages one Matrix edge receives."""

    def __init__(self, edge: EdgeContext) -> None:
        self._edge = edge

    def wants(self, event: Any) -> bool:
        """Whether `event` is a message Lore may answer (not its own, not an edit)."""
        content = event.source.get("content", {})
        related = content.get("m.relates_to")
        edit = isinstance(related, dict) and related.get("rel_type") == "m.replace"
        return event.sender != self._edge.me and content.get("msgtype") in ANSWERED and not edit

    async def on_message(self, room: Any, event: Any) -> None:
        """A new message in a room the bot is in."""
        if not self.wants(event):
            return
        async with self._edge.deduper.once(event.event_id) as first:
            if not first:
                return
            try:
                await self._route(room, event)
            except LoreError as exc:
                await self._tell(room, event, str(exc))
            except Exception:  # the turn boundary: log, and tell the person politely
                logger.exception("Matrix message %s failed", event.event_id)
                await self._tell(room, event, SORRY)

    async def _tell(self, room: Any, event: Any, text: str) -> None:
        try:
            await self._edge.outbox.send(room.room_id, plain(text), reply_to=event.event_id)
        except SendError:  # the error path must never raise
            logger.exception("Could not report an error in room %s", room.room_id)

    async def _route(self, room: Any, event: Any) -> None:
        edge = self._edge
        content = event.source.get("content", {})
        thread = thread_of(event)
        text = unquoted(content) if content.get("msgtype") == "m.text" else ""
        voice = await addressed_voice(edge, room, event)
        if voice is not None:
            await hear_voice(edge, room, event, voice)
            return
        if not is_private(room):
            if content.get("msgtype") != "m.text":
                return  # a file in a room calls nobody
            addressed = await addressed_text(edge.client, room, event)
            if addressed is None:
                return
            text = addressed
        command = text_command(text)
        if command is not None:
            await self._command(room, event, thread, *command)
            return
        source = source_of(content, text)
        if source is not None:
            await offer_source(edge, room, event, source, thread=thread)
            return
        if not text:
            await self._tell(room, event, EMPTY)
            return
        await answer_question(edge, room, event, text)

    async def _command(
        self, room: Any, event: Any, thread: str | None, name: str, args: str
    ) -> None:
        chat = chat_of(room, thread)
        reply = await self._edge.bot.run_command(
            identity_of(room, event.sender), chat, name, args, prefix=PREFIX
        )
        if reply is not None:
            reply_to = event.event_id if chat.is_group else None
            await send_reply(self._edge, room.room_id, reply, reply_to=reply_to, thread=chat.thread)
