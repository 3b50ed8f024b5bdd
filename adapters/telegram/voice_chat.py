"""Voice notes and round video notes sent to Lore: translated into an `IncomingVoice` (its
size and seconds as Telegram announced them, whether it is forwarded, and, in a group,
whether it replies to the bot or its caption mentions it), then decided by the `Bot` (heard,
kept like a file, or left alone). A voice note that is heard is downloaded and its events
(`🎙 Listening…`, the transcript, the answer) shown like an answer's, in one reply."""

from __future__ import annotations

import html

from telegram import Message, VideoNote, Voice

from adapters.telegram.answers import answer_events, live_reply
from adapters.telegram.context import EdgeContext, chat_ref, identity_of
from adapters.telegram.ingest_chat import download, offer_source
from bot.errors import LoreError
from bot.voice import LISTENING, IncomingVoice, VoiceAction

__all__ = ["hear_voice", "voice_of"]


def voice_of(message: Message, *, addressed: bool) -> IncomingVoice | None:
    """The voice note (or round video note) a message carries, if any."""
    note: Voice | VideoNote
    if message.voice is not None:
        note, name = message.voice, f"voice-{message.voice.file_unique_id}.ogg"
    elif message.video_note is not None:
        note, name = message.video_note, f"video-note-{message.video_note.file_unique_id}.mp4"
    else:
        return None
    # The duration as Telegram sent it, in seconds (PTB's attribute is changing type).
    seconds = note.to_dict().get("duration")
    return IncomingVoice(
        file_ref=note.file_id,
        file_name=name,
        size=note.file_size,
        seconds=float(seconds) if isinstance(seconds, int | float) else None,
        caption=message.caption,
        forwarded=message.forward_origin is not None,
        addressed=addressed,
    )


async def hear_voice(edge: EdgeContext, message: Message, voice: IncomingVoice) -> None:
    """Do what the `Bot` decides with a voice note: nothing, keep it, or hear and answer it."""
    sender = message.from_user
    if sender is None:
        return
    identity, chat = identity_of(sender), chat_ref(message.chat, message)
    try:
        action = await edge.bot.voice_message(identity, chat, voice, edge.config.download_limit)
    except LoreError as exc:
        await message.reply_text(str(exc))
        return
    if action is VoiceAction.IGNORE:
        return
    if action is VoiceAction.SAVE:
        await offer_source(edge, message, voice.as_source())
        return
    reply = live_reply(edge, message, chat)
    if not chat.is_group:
        await reply.update(LISTENING)
    data = await download(edge, message.get_bot(), voice.file_ref)
    if isinstance(data, str):
        await reply.finish([html.escape(data, quote=False)])
        return
    await answer_events(edge, message, chat, reply, edge.bot.hear(identity, chat, voice, data))
