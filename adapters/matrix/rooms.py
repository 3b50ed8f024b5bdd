"""Direct chats with people, for messages nobody asked for in a room (an owner's approval
request, a message for an owner, an approval's outcome after a restart): the room where only
the bot and that person are, or a new encrypted direct chat the bot opens and invites them
to (marked as direct for both). A new room is usable once the sync has brought its state."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import nio

from adapters.matrix.context import is_private
from adapters.matrix.outbox import SendError

__all__ = ["DirectRooms"]

logger = logging.getLogger(__name__)

ENCRYPTION = {
    "type": "m.room.encryption",
    "state_key": "",
    "content": {"algorithm": "m.megolm.v1.aes-sha2"},
}


class DirectRooms:
    """Finds or opens the bot's direct chat with a person."""

    def __init__(self, client: nio.AsyncClient, synced: asyncio.Condition) -> None:
        self._client = client
        self._synced = synced
        self._lock = asyncio.Lock()

    def _existing(self, user_id: str) -> str | None:
        for room_id, room in self._client.rooms.items():
            users = set(room.users) | set(getattr(room, "invited_users", {}))
            if user_id in users and is_private(room):
                return str(room_id)
        return None

    async def with_user(self, user_id: str, *, wait: float = 20.0) -> str:
        """The room id of the bot's direct chat with `user_id` (opened if there is none)."""
        async with self._lock:
            found = self._existing(user_id)
            if found is not None:
                return found
            response = await self._client.room_create(
                is_direct=True,
                invite=[user_id],
                preset=nio.RoomPreset.trusted_private_chat,
                initial_state=[ENCRYPTION],
            )
            if not isinstance(response, nio.RoomCreateResponse):
                raise SendError(f"cannot open a direct chat with {user_id}: {response}")
            room_id = str(response.room_id)
            await self._wait_for(room_id, user_id, wait)
            logger.info("Matrix: opened a direct chat with %s", user_id)
            return room_id

    async def _wait_for(self, room_id: str, user_id: str, wait: float) -> None:
        """Until the sync has brought the room's encryption and the invite (a room's first
        events can come in more than one sync): the invited person's devices get the key."""

        def ready() -> bool:
            room: Any = self._client.rooms.get(room_id)
            return room is not None and bool(room.encrypted) and user_id in room.users

        async with asyncio.timeout(wait), self._synced:
            await self._synced.wait_for(ready)
