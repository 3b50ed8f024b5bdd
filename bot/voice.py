"""Voice messages, for every edge: whether one is handled at all, and what it becomes.

The rules, once (a rule in one edge is a hole in the next):
- in a group chat, a voice message is handled only when it is addressed to Lore (a reply to
  Lore, or a caption that mentions it); otherwise it is left alone, like any group message;
- a forwarded voice message is a source to keep: it goes the way of a file (`offer_source`,
  then `save_source`), transcribed as it is saved;
- any other voice message is heard: transcribed (in a limited worker, the member's
  transcriptions one at a time like their ingests), then handled exactly like the same words
  typed (`bot.messages.Messages`): a question gets a cited answer led by "🎙 “…”", a
  "remember that …" keeps the recording in the member's private notes;
- a recording the platform announces as too big or too long is refused before it is
  downloaded.

An edge translates: it builds an `IncomingVoice` from its platform's payload (whether the
message is forwarded or addressed is the platform's to say), asks `Voice.plan`, downloads the
file if told to listen, and renders the events of `Voice.hear` with a `TurnView`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum

from bot.errors import IngestRefusedError, LoreError
from bot.events import ChatEvent, ChatRef, Heard, Identity, Listening, RefusalEvent, TurnDone
from bot.knowledge import Knowledge
from bot.messages import Messages, Recording
from bot.people import People
from bot.sources import IncomingSource, too_big
from graphs.ingest.reading_job import too_long

__all__ = ["LISTENING", "IncomingVoice", "Voice", "VoiceAction", "spoken_words"]

LISTENING = "🎙 Listening…"


@dataclass(frozen=True, slots=True)
class IncomingVoice:
    """A voice message (or another recording sent to be heard), before it is downloaded:
    the platform's file reference, a file name unique to it, what the platform announced
    (size, seconds), its caption, and what the platform says about the message."""

    file_ref: str
    file_name: str
    size: int | None = None
    seconds: float | None = None
    caption: str | None = None
    forwarded: bool = False
    addressed: bool = False

    def as_source(self) -> IncomingSource:
        """The recording as a file to keep (a forwarded voice note)."""
        return IncomingSource(
            file_ref=self.file_ref,
            file_name=self.file_name,
            size=self.size,
            caption=self.caption or None,
        )


class VoiceAction(StrEnum):
    """What an edge does with a voice message."""

    IGNORE = "ignore"  # a group message not addressed to Lore
    LISTEN = "listen"  # download it and render `Voice.hear`
    SAVE = "save"  # keep it like a file: `offer_source(voice.as_source())`


class Voice:
    """Voice messages: the decision, and the transcription before the words' turn."""

    def __init__(
        self,
        *,
        knowledge: Knowledge,
        messages: Messages,
        people: People,
        max_audio_seconds: float,
    ) -> None:
        self._knowledge = knowledge
        self._messages = messages
        self._people = people
        self._max_seconds = max_audio_seconds

    async def plan(
        self, identity: Identity, chat: ChatRef, voice: IncomingVoice, download_limit: int
    ) -> VoiceAction:
        """What to do with a voice message; a `LoreError` to show when it is refused."""
        if chat.is_group and not voice.addressed:
            return VoiceAction.IGNORE
        if voice.forwarded:
            return VoiceAction.SAVE  # `offer_source` decides who may keep what, and where
        await self._people.member(identity)
        refusal = too_big(voice.size, min(download_limit, self._knowledge.max_file_bytes))
        if refusal is None and voice.seconds is not None and voice.seconds > self._max_seconds:
            refusal = too_long(voice.seconds, self._max_seconds)
        if refusal is not None:
            raise IngestRefusedError(refusal)
        return VoiceAction.LISTEN

    async def hear(
        self, identity: Identity, chat: ChatRef, voice: IncomingVoice, data: bytes
    ) -> AsyncIterator[ChatEvent]:
        """Transcribe a voice message (`Listening` as it goes, then `Heard`), then handle its
        words as if typed; a refused recording ends with a refusal and nothing kept."""
        steps: asyncio.Queue[str] = asyncio.Queue()
        job = asyncio.create_task(
            self._knowledge.transcribe(
                identity, data, voice.file_name, on_progress=steps.put_nowait
            )
        )
        try:
            yield Listening(LISTENING)
            while not job.done():
                step = asyncio.ensure_future(steps.get())
                await asyncio.wait({job, step}, return_when=asyncio.FIRST_COMPLETED)
                if step.done():
                    yield Listening(step.result())
                else:
                    step.cancel()
            heard = job.result()
        except LoreError as exc:
            refusal = f"🚫 {exc}"
            yield RefusalEvent("voice", refusal)
            yield TurnDone(turn_id="", outcome="refused", answer=refusal)
            return
        finally:
            job.cancel()
        words = spoken_words(heard.text)
        yield Heard(words, heard.language)
        recording = Recording(voice.file_name, data, heard)
        async for event in self._messages.handle(identity, chat, words, recording=recording):
            yield event


def spoken_words(transcript: str) -> str:
    """A transcript's words without its time headings: what was said, as one text."""
    lines = (line.strip() for line in transcript.splitlines())
    words = (line.removeprefix("\\") for line in lines if line and not line.startswith("# "))
    return " ".join(words)
