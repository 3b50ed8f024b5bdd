"""A person's message to Lore (a direct message, or a mention in a channel): a voice clip goes
to the `Bot`'s voice rules, the sources it carries are saved, anything else is a question.
This is the boundary of that work: a refusal or a failure ends in one polite message to the
person, never in silence."""

from __future__ import annotations

import logging

from adapters.slack.answers import answer_events, answer_question, live_answer
from adapters.slack.context import SlackContext
from adapters.slack.ingest_chat import offer_source
from adapters.slack.outbox import Place
from adapters.slack.payloads import SlackMessage, sources_of, voice_of
from adapters.slack.replies import Target, tell
from bot.errors import LoreError
from bot.voice import LISTENING, IncomingVoice, VoiceAction

__all__ = ["EMPTY", "SORRY", "handle_message"]

logger = logging.getLogger(__name__)

SORRY = "Sorry, something went wrong on my side. Please try again in a moment."
EMPTY = "Send me a question, a document or a link."


async def handle_message(edge: SlackContext, message: SlackMessage) -> None:
    """Save what the message carries, or answer it."""
    target = Target(
        Place(message.channel, message.reply_thread), message.user, private=not message.is_group
    )
    try:
        voice = voice_of(message)
        if voice is not None:
            await _hear(edge, message, voice, target)
            return
        sources = sources_of(message)
        for source in sources:
            await offer_source(edge, message, source)
        if sources:
            return
        if not message.text.strip():
            await tell(edge.outbox, target, EMPTY)
            return
        await answer_question(edge, message)
    except LoreError as exc:
        await tell(edge.outbox, target, str(exc))
    except Exception:  # the turn boundary: log, answer politely
        logger.exception("A Slack message could not be handled")
        await tell(edge.outbox, target, SORRY)


async def _hear(
    edge: SlackContext, message: SlackMessage, voice: IncomingVoice, target: Target
) -> None:
    """Do what the `Bot` decides with a voice clip: nothing, keep it, or hear and answer it."""
    identity = await edge.directory.identity(message.user)
    limit = edge.config.max_file_bytes
    action = await edge.bot.voice_message(identity, message.chat, voice, limit)
    if action is VoiceAction.IGNORE:
        return
    if action is VoiceAction.SAVE:
        await offer_source(edge, message, voice.as_source())
        return
    live = live_answer(edge, message)
    if live is not None:
        await live.status(LISTENING, icon="")
    data = await edge.files.fetch(voice.file_ref, limit)
    if isinstance(data, str):
        await tell(edge.outbox, target, data)
        return
    events = edge.bot.hear(identity, message.chat, voice, data)
    await answer_events(edge, message, live, events)
