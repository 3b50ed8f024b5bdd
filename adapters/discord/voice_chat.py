"""Discord voice messages sent to the bot: translated into an `IncomingVoice` (the size and
seconds Discord announced, and, in a server, whether the message mentions or replies to the
bot), then decided by the `Bot` (heard, kept like a file, or left alone). A voice message that
is heard is downloaded (never more than the limit) and its events (`🎙 Listening…`, what was
heard, the answer) shown like an answer's, in one reply."""

from __future__ import annotations

import logging
from pathlib import PurePath

import discord

from adapters.capped_download import capped_download
from adapters.discord.answers import answer_events, live_reply
from adapters.discord.context import EdgeContext, identity_of
from adapters.discord.ingest_chat import DOWNLOAD_FAILED, offer_source
from bot.voice import LISTENING, IncomingVoice, VoiceAction

__all__ = ["hear_voice", "voice_of"]

logger = logging.getLogger(__name__)

THREAD_TITLE = "Voice message"


def voice_of(message: discord.Message, *, addressed: bool) -> IncomingVoice | None:
    """The voice message a Discord message is, if it is one. Discord names every voice message
    alike, so it is named after its attachment's id."""
    for attachment in message.attachments:
        if attachment.is_voice_message():
            suffix = PurePath(attachment.filename).suffix or ".ogg"
            return IncomingVoice(
                file_ref=attachment.url,
                file_name=f"voice-{attachment.id}{suffix}",
                size=attachment.size,
                seconds=attachment.duration,
                caption=message.content or None,
                addressed=addressed,
            )
    return None


async def hear_voice(edge: EdgeContext, message: discord.Message, voice: IncomingVoice) -> None:
    """Do what the `Bot` decides with a voice message: nothing, keep it, or hear and answer it.
    Refusals (`LoreError`) reach the handler's boundary, which says them politely."""
    identity = identity_of(message.author)
    chat, reply = live_reply(edge, message, THREAD_TITLE)
    config = edge.config
    action = await edge.bot.voice_message(identity, chat, voice, config.download_limit)
    if action is VoiceAction.IGNORE:
        return
    if action is VoiceAction.SAVE:
        await offer_source(edge, message, voice.as_source(), message.channel)
        return
    if not chat.is_group:
        await reply.update(LISTENING)
    data: bytes | str = DOWNLOAD_FAILED
    if config.may_download(voice.file_ref):
        data = await capped_download(
            voice.file_ref, config.download_limit, config.download_timeout, failed=DOWNLOAD_FAILED
        )
    else:
        logger.warning("Voice message URL outside Discord's file hosts refused")
    if isinstance(data, str):
        await reply.finish([data])
        return
    await answer_events(message, chat, reply, edge.bot.hear(identity, chat, voice, data))
