"""What a message in a chat becomes: a note to keep, when it asks Lore to remember something
in a private chat ("remember that …", typed or spoken), else a question for the agent.

A note is saved to the member's private notes like `/note`; a spoken one keeps its recording
as the original, with its transcript as the text (never transcribed twice). Its end is a
`TurnDone` without a turn (`turn_id` ""), whose answer says what was saved, so every edge
shows it the way it shows a reply that is not an answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from bot.conversation import Conversations
from bot.events import ChatRef, Identity, TurnDone, TurnEvent
from bot.knowledge import Knowledge
from bot.people import People
from bot.remember_requests import remember_request
from bot.replies import Message, plain_text
from bot.sources import IncomingSource, note
from graphs.ingest.formats import ExtractedText

__all__ = ["Messages", "Recording"]


@dataclass(frozen=True, slots=True)
class Recording:
    """A voice message already transcribed: its file and what was heard in it."""

    file_name: str
    data: bytes
    heard: ExtractedText


class Messages:
    """Notes to keep and questions to answer, from typed or spoken words."""

    def __init__(
        self, *, conversations: Conversations, knowledge: Knowledge, people: People
    ) -> None:
        self._conversations = conversations
        self._knowledge = knowledge
        self._people = people

    async def handle(
        self, identity: Identity, chat: ChatRef, text: str, *, recording: Recording | None = None
    ) -> AsyncIterator[TurnEvent]:
        """Keep a note ("remember that …" in a private chat) or answer a question."""
        wanted = None if chat.is_group else remember_request(text)
        if wanted is None or await self._people.find(identity) is None:
            async for event in self._conversations.handle_message(identity, chat, text):
                yield event
            return
        saved = await self._keep(identity, wanted, recording)
        answer = plain_text(saved.body)
        yield TurnDone(turn_id="", outcome="saved", answer=answer)

    async def _keep(self, identity: Identity, wanted: str, recording: Recording | None) -> Message:
        typed = note(wanted)
        if recording is None:
            return await self._knowledge.save(identity, typed, shared=False)
        spoken = IncomingSource(
            file_ref=recording.file_name,
            file_name=recording.file_name,
            size=len(recording.data),
            title=typed.title,
            read=recording.heard,
        )
        return await self._knowledge.save(identity, spoken, shared=False, data=recording.data)
