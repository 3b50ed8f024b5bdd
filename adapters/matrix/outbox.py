"""Everything the bot sends into Matrix goes through here: messages, edits (`m.replace`),
reactions and leaving rooms.

Every message says `m.mentions: {}` (nobody is called, whatever its text says) and carries
no `@room`; a reply quotes nothing. A room whose encryption Lore knows of (from its state, or
from the device's store) only ever gets encrypted events: nio encrypts messages and edits,
and reactions are encrypted here (nio sends those in the clear); a room Lore has not synced
yet gets nothing. Unverified devices of members receive the room keys (see docs/matrix.md).
A 429 is waited out for as long as the homeserver's `retry_after_ms` says (nio does that).
"""

from __future__ import annotations

import logging
from typing import Any
from uuid import uuid4

import nio
from nio.api import Api

from adapters.matrix.html import Formatted

__all__ = ["Outbox", "SendError", "message_content"]

logger = logging.getLogger(__name__)

HTML = "org.matrix.custom.html"


class SendError(Exception):
    """The homeserver did not take an event (or Lore would not send it)."""


def message_content(
    text: Formatted,
    *,
    reply_to: str | None = None,
    thread: str | None = None,
) -> dict[str, Any]:
    """An `m.text` message that calls nobody, as a reply or in a thread if asked."""
    content: dict[str, Any] = {
        "msgtype": "m.text",
        "body": text.body,
        "format": HTML,
        "formatted_body": text.html,
        "m.mentions": {},
    }
    if thread is not None:
        content["m.relates_to"] = {
            "rel_type": "m.thread",
            "event_id": thread,
            "is_falling_back": reply_to is None,
            "m.in_reply_to": {"event_id": reply_to or thread},
        }
    elif reply_to is not None:
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
    return content


def _edit_content(event_id: str, text: Formatted) -> dict[str, Any]:
    new = {
        "msgtype": "m.text",
        "body": text.body,
        "format": HTML,
        "formatted_body": text.html,
        "m.mentions": {},
    }
    return {
        "msgtype": "m.text",
        "body": "* " + text.body,
        "m.mentions": {},
        "m.new_content": new,
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }


class Outbox:
    """Sends for one logged-in client."""

    def __init__(self, client: nio.AsyncClient) -> None:
        self._client = client
        self.latest: dict[str, str] = {}  # the bot's newest event in each room

    def _room(self, room_id: str) -> Any:
        room = self._client.rooms.get(room_id)
        if room is None:
            raise SendError(f"room {room_id} is not synced yet")
        if room_id in self._client.encrypted_rooms and not room.encrypted:
            raise SendError(f"room {room_id} is encrypted but its state is not known yet")
        return room

    async def send_event(self, room_id: str, event_type: str, content: dict[str, Any]) -> str:
        """Send one event (encrypted in an encrypted room); its event id."""
        room = self._room(room_id)
        client = self._client
        if room.encrypted and client.should_query_keys:
            await client.keys_query()  # a member new to the bot: their devices get the key too
        if room.encrypted and event_type == "m.reaction":
            response = await self._encrypted_reaction(room_id, content)
        else:
            response = await client.room_send(
                room_id, event_type, content, ignore_unverified_devices=True
            )
        if not isinstance(response, nio.RoomSendResponse):
            raise SendError(f"{getattr(response, 'status_code', '')} {response}")
        self.latest[room_id] = str(response.event_id)
        return str(response.event_id)

    async def _encrypted_reaction(self, room_id: str, content: dict[str, Any]) -> Any:
        """nio sends reactions in the clear; here one goes out like any encrypted event (the
        relation stays readable, as the specification wants for aggregation)."""
        client = self._client
        room = client.rooms[room_id]
        if not room.members_synced:
            await client.joined_members(room_id)
            if client.should_query_keys:
                await client.keys_query()
        if client.olm.should_share_group_session(room_id):
            await client.share_group_session(room_id, ignore_unverified_devices=True)
        event_type, encrypted = client.encrypt(room_id, "m.reaction", content)
        method, path, data = Api.room_send(
            client.access_token, room_id, event_type, encrypted, uuid4()
        )
        # nio's own request path (429s waited out, the response parsed) for a pre-encrypted event
        return await client._send(nio.RoomSendResponse, method, path, data, (room_id,))

    async def send(
        self,
        room_id: str,
        text: Formatted,
        *,
        reply_to: str | None = None,
        thread: str | None = None,
    ) -> str:
        """A new message; its event id."""
        content = message_content(text, reply_to=reply_to, thread=thread)
        return await self.send_event(room_id, "m.room.message", content)

    async def edit(self, room_id: str, event_id: str, text: Formatted) -> str:
        """New text for one of the bot's messages (`m.replace`)."""
        return await self.send_event(room_id, "m.room.message", _edit_content(event_id, text))

    async def react(self, room_id: str, event_id: str, key: str) -> str:
        """The bot's own reaction on a message (so a person only has to tap it)."""
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
        return await self.send_event(room_id, "m.reaction", content)

    async def typing(self, room_id: str, *, on: bool, seconds: float = 30.0) -> None:
        """Show (or stop) "Lore is typing…"; best effort."""
        response = await self._client.room_typing(
            room_id, typing_state=on, timeout=int(seconds * 1000)
        )
        if not isinstance(response, nio.RoomTypingResponse):
            logger.debug("Typing notice refused in %s", room_id)

    async def leave(self, room_id: str) -> None:
        """Leave a room (and forget it is there)."""
        await self._client.room_leave(room_id)
        await self._client.room_forget(room_id)
