"""Routing of incoming Discord messages: `/lore …` typed as text to the `bot/` registry,
voice messages to the `Bot`'s voice rules, attachments and lone links to save, questions to
answer; in a server only what mentions the bot or replies to it. Each message is handled once
(a copy redelivered after a gateway RESUME is skipped) and errors end politely here."""

from __future__ import annotations

import logging

import discord

from adapters.discord.answers import answer_question
from adapters.discord.config import PREFIX
from adapters.discord.context import EdgeContext, addressed_text, chat_of, identity_of, send
from adapters.discord.ingest_chat import offer_source, source_of
from adapters.discord.markdown import escape
from adapters.discord.replies import send_reply
from adapters.discord.voice_chat import hear_voice, voice_of
from bot.errors import LoreError

__all__ = ["MessageHandler", "text_command"]

logger = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side. Please try again in a moment."
EMPTY = "Send me a question, a document or a link."
ANSWERED_TYPES = {discord.MessageType.default, discord.MessageType.reply}


def text_command(text: str) -> tuple[str, str] | None:
    """(name, arguments) of `/lore name arguments` typed as a message, else None."""
    head = PREFIX.strip()
    if text != head and not text.startswith(PREFIX):
        return None
    name, _, args = text[len(head) :].strip().partition(" ")
    return (name.lower() or "help"), args.strip()


class MessageHandler:
    """Handles the messages one Discord edge receives."""

    def __init__(self, edge: EdgeContext) -> None:
        self._edge = edge

    async def on_message(self, message: discord.Message, me: discord.ClientUser) -> None:
        """A new message in a DM or in a server channel the bot can read."""
        if message.author.bot or message.type not in ANSWERED_TYPES:
            return
        async with self._edge.deduper.once(str(message.id)) as first:
            if not first:
                return
            try:
                await self._route(message, me)
            except LoreError as exc:
                await self._tell(message, str(exc))
            except Exception:  # the turn boundary: log, and tell the person politely
                logger.exception("Discord message %s failed", message.id)
                await self._tell(message, SORRY)

    async def _tell(self, message: discord.Message, text: str) -> None:
        try:
            await send(message.channel, escape(text), reference=message)
        except discord.HTTPException:  # the error path must never raise
            logger.exception("Could not report an error in channel %s", message.channel.id)

    async def _route(self, message: discord.Message, me: discord.ClientUser) -> None:
        text = message.content.strip()
        addressed = addressed_text(message, me) if message.guild is not None else None
        voice = voice_of(message, addressed=message.guild is None or addressed is not None)
        if voice is not None:
            await hear_voice(self._edge, message, voice)  # the `Bot` decides, in servers too
            return
        if message.guild is not None:
            if addressed is None:
                return
            text = addressed
        command = text_command(text)
        if command is not None:
            await self._command(message, *command)
            return
        source = source_of(message, text)
        if source is not None:
            await offer_source(self._edge, message, source, message.channel)
            return
        if not text:
            await send(message.channel, escape(EMPTY), reference=message)
            return
        await answer_question(self._edge, message, text)

    async def _command(self, message: discord.Message, name: str, args: str) -> None:
        chat = chat_of(message.channel, message.guild.id if message.guild else None)
        reply = await self._edge.bot.run_command(
            identity_of(message.author), chat, name, args, prefix=PREFIX
        )
        if reply is not None:
            await send_reply(message.channel, reply, reference=message)
