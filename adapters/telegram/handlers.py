"""Routing of incoming Telegram updates: commands to the `bot/` registry, voice notes to the
`Bot`'s voice rules, sources to save, questions to answer, button taps; in group chats only
what mentions or replies to the bot. Errors end politely here."""

from __future__ import annotations

import logging

from telegram import Chat, Message, Update, User
from telegram.ext import ContextTypes

from adapters.telegram.answers import answer_question
from adapters.telegram.buttons import parse_callback
from adapters.telegram.callbacks import handle_tap
from adapters.telegram.context import EdgeContext, addressed_text, chat_ref, identity_of
from adapters.telegram.ingest_chat import offer_source, source_of
from adapters.telegram.replies import send_reply
from adapters.telegram.voice_chat import hear_voice, voice_of
from bot.errors import LoreError

__all__ = ["Handlers"]

logger = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side. Please try again in a moment."
EMPTY = "Send me a question, a document or a link."


def _command(text: str, bot_username: str) -> tuple[str, str] | None:
    """(name, arguments) of `/name[@bot] arguments` meant for this bot, else None."""
    if not text.startswith("/"):
        return None
    head, _, args = text.partition(" ")
    name, _, target = head[1:].partition("@")
    if target and target.lower() != bot_username.lower():
        return None
    return name.lower(), args.strip()


class Handlers:
    """The PTB callbacks of one Telegram edge."""

    def __init__(self, edge: EdgeContext) -> None:
        self._edge = edge

    async def on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A new message in a private chat or a group."""
        message = update.message
        sender = message.from_user if message is not None else None
        if message is None or sender is None or sender.is_bot:
            return
        text = message.text or message.caption or ""
        me = context.bot
        command = _command(text, me.username)
        if command is not None:
            await self._command(message, sender, *command)
            return
        private = message.chat.type == Chat.PRIVATE
        addressed = None if private else addressed_text(message, me.username, me.id)
        voice = voice_of(message, addressed=private or addressed is not None)
        if voice is not None:
            await hear_voice(self._edge, message, voice)  # the `Bot` decides, in groups too
            return
        if not private:
            if addressed is None:
                return
            text = addressed
        await self._content(message, text)

    async def _command(self, message: Message, sender: User, name: str, args: str) -> None:
        reply = await self._edge.bot.run_command(
            identity_of(sender), chat_ref(message.chat, message), name, args
        )
        if reply is not None:
            await send_reply(message, reply)

    async def _content(self, message: Message, text: str) -> None:
        source = source_of(message, text)
        if source is not None:
            await offer_source(self._edge, message, source)
            return
        if not text.strip():
            await message.reply_text(EMPTY)
            return
        await answer_question(self._edge, message, text)

    async def on_tap(
        self,
        update: Update,
        context: ContextTypes.DEFAULT_TYPE,  # noqa: ARG002 - PTB's callback signature
    ) -> None:
        """A button under one of the bot's messages was tapped."""
        query = update.callback_query
        if query is None:
            return
        await handle_tap(self._edge, query, parse_callback(query.data))

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The turn boundary: log, and tell the person politely."""
        error = context.error
        if isinstance(error, LoreError) and isinstance(update, Update):
            text = str(error)
        else:
            logger.error("Telegram update failed", exc_info=error)
            text = SORRY
        if isinstance(update, Update) and update.effective_chat is not None:
            try:
                await context.bot.send_message(update.effective_chat.id, text)
            except Exception:  # the error path must never raise
                logger.exception("Could not report an error to chat %s", update.effective_chat.id)
