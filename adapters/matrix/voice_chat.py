"""Matrix voice messages (what Element and other clients record: an `m.audio` message marked
`org.matrix.msc3245.voice`): translated into an `IncomingVoice` (the size and length the
message announces, and, in a group room, whether it replies to the bot), then decided by the
`Bot`: heard like the same words typed, or left alone. A voice message that is heard is
downloaded through the authenticated media API (decrypted in an encrypted room, never more
than the limit) and its events (`🎙 Listening…`, what was heard, the answer) shown like an
answer's, in one reply. Other audio files are sources to keep (`ingest_chat`)."""

from __future__ import annotations

import hashlib
from typing import Any

from adapters.matrix.addressing import replies_to_me
from adapters.matrix.answers import answer_events, live_reply
from adapters.matrix.context import EdgeContext, identity_of, is_private, thread_of
from adapters.matrix.html import plain
from adapters.matrix.ingest_chat import download, file_ref_of, offer_source
from bot.voice import LISTENING, IncomingVoice, VoiceAction

__all__ = ["VOICE", "addressed_voice", "hear_voice", "is_voice", "voice_of"]

VOICE = "org.matrix.msc3245.voice"
_AUDIO = "org.matrix.msc1767.audio"  # the extensible-events copy of the length


def is_voice(content: dict[str, Any]) -> bool:
    """Whether a message is a recorded voice message rather than an audio file."""
    return content.get("msgtype") == "m.audio" and VOICE in content


def _milliseconds(content: dict[str, Any]) -> float | None:
    for holder in (content.get("info"), content.get(_AUDIO)):
        value = holder.get("duration") if isinstance(holder, dict) else None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


def voice_of(content: dict[str, Any], event_id: str, *, addressed: bool) -> IncomingVoice | None:
    """The voice message `content` is, if it is one. Clients name every recording alike, so
    it is named after its event."""
    if not is_voice(content):
        return None
    reference = file_ref_of(content)
    if reference is None:
        return None
    info = content.get("info")
    size = info.get("size") if isinstance(info, dict) else None
    milliseconds = _milliseconds(content)
    name = f"voice-{hashlib.sha256(event_id.encode()).hexdigest()[:16]}.ogg"
    return IncomingVoice(
        file_ref=reference,
        file_name=name,
        size=size if isinstance(size, int) else None,
        seconds=milliseconds / 1000 if milliseconds is not None else None,
        addressed=addressed,
    )


async def addressed_voice(edge: EdgeContext, room: Any, event: Any) -> IncomingVoice | None:
    """The voice message of `event`, if it is one; in a group room it is for Lore only as a
    reply to one of Lore's messages (a recording has no caption to mention it in)."""
    content = event.source.get("content", {})
    if not is_voice(content):
        return None
    addressed = is_private(room) or await replies_to_me(edge.client, room.room_id, event)
    return voice_of(content, event.event_id, addressed=addressed)


async def hear_voice(edge: EdgeContext, room: Any, event: Any, voice: IncomingVoice) -> None:
    """Do what the `Bot` decides with a voice message: nothing, keep it, or hear and answer it.
    Refusals (`LoreError`) reach the handler's boundary, which says them politely."""
    identity = identity_of(room, event.sender)
    chat, reply = live_reply(edge, room, event)
    limit = edge.config.download_limit
    action = await edge.bot.voice_message(identity, chat, voice, limit)
    if action is VoiceAction.IGNORE:
        return
    if action is VoiceAction.SAVE:
        await offer_source(edge, room, event, voice.as_source(), thread=thread_of(event))
        return
    if not chat.is_group:
        await reply.update(LISTENING)
    data = await download(edge, voice.file_ref, limit)
    if isinstance(data, str):
        await reply.finish([plain(data)])
        return
    turn = edge.bot.hear(identity, chat, voice, data)
    await answer_events(edge, room.room_id, chat, reply, turn)
