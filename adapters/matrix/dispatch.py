"""What one sync brought, handed to the handlers: room messages, reactions, invites, and
encrypted messages whose room key has not arrived yet (kept and tried again after each sync
for a few seconds; then the sender is told once that Lore could not read them, and the key
is asked for). Each event is handled in its own task, so no member waits behind another's
long answer (invariant 12); the caller owns the tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

import nio

from adapters.matrix.context import EdgeContext
from adapters.matrix.handlers import MessageHandler
from adapters.matrix.html import plain
from adapters.matrix.invites import Invites, inviter_of
from adapters.matrix.outbox import SendError
from adapters.matrix.reactions import ReactionHandler

__all__ = ["Dispatcher"]

logger = logging.getLogger(__name__)

UNREADABLE = (
    "I could not read your encrypted message: my device did not get its key. Please send it "
    "again; if this keeps happening, check that your app shares keys with unverified devices."
)


@dataclass
class _Waiting:
    room_id: str
    event: Any
    since: float


class Dispatcher:
    """Turns sync responses into handler tasks for one Matrix edge."""

    def __init__(self, edge: EdgeContext) -> None:
        self._edge = edge
        self._messages = MessageHandler(edge)
        self._reactions = ReactionHandler(edge)
        self.invites = Invites(edge)
        self._waiting: list[_Waiting] = []

    def _task(self, work: Any, tasks: list[asyncio.Task[None]]) -> None:
        tasks.append(asyncio.create_task(work))

    def dispatch(self, response: Any, *, backlog: bool) -> list[asyncio.Task[None]]:
        """Start a task per event of a sync; `backlog` (a first sync without a sync token)
        skips the rooms' past messages and handles only invites."""
        tasks: list[asyncio.Task[None]] = []
        me = self._edge.me
        for room_id, info in response.rooms.invite.items():
            inviter = inviter_of(info, me)
            if inviter is not None and inviter != me:
                self._task(self.invites.on_invite(room_id, inviter), tasks)
        if backlog:
            return tasks
        for room_id, info in response.rooms.join.items():
            room = self._edge.client.rooms.get(room_id)
            for event in info.timeline.events:
                self._event(room, event, tasks)
        self._retry_waiting(tasks)
        return tasks

    def _event(self, room: Any, event: Any, tasks: list[asyncio.Task[None]]) -> None:
        if room is None:
            return
        if isinstance(event, nio.ReactionEvent):
            self._task(self._reactions.on_reaction(room, event), tasks)
        elif isinstance(event, nio.MegolmEvent):
            if event.sender != self._edge.me:
                self._waiting.append(_Waiting(room.room_id, event, time.monotonic()))
                self._task(self._ask_for_key(event), tasks)
        elif isinstance(event, nio.RoomMessage) and self._messages.wants(event):
            self.invites.spoken.add((room.room_id, event.sender))
            self._task(self._messages.on_message(room, event), tasks)

    def waiting_in(self, room_id: str) -> bool:
        """Whether a message of the room still waits for its key."""
        return any(waiting.room_id == room_id for waiting in self._waiting)

    async def _ask_for_key(self, event: Any) -> None:
        with contextlib.suppress(nio.LocalProtocolError):  # already asked for this session
            await self._edge.client.request_room_key(event)

    def _retry_waiting(self, tasks: list[asyncio.Task[None]]) -> None:
        still: list[_Waiting] = []
        client, deadline = self._edge.client, self._edge.config.key_wait
        for waiting in self._waiting:
            try:
                decrypted = client.decrypt_event(waiting.event)
            except nio.EncryptionError:
                decrypted = None
            room = client.rooms.get(waiting.room_id)
            if decrypted is not None and not isinstance(decrypted, nio.MegolmEvent):
                self._event(room, decrypted, tasks)
            elif time.monotonic() - waiting.since < deadline:
                still.append(waiting)
            else:
                self._task(self._unreadable(waiting), tasks)
        self._waiting = still

    async def _unreadable(self, waiting: _Waiting) -> None:
        event = waiting.event
        logger.warning(
            "Matrix: could not decrypt event %s in %s (session %s)",
            event.event_id,
            waiting.room_id,
            event.session_id,
        )
        if not self._edge.tell_once(f"unreadable:{waiting.room_id}:{event.sender}"):
            return
        async with self._edge.deduper.once(event.event_id) as first:
            if first:
                try:
                    await self._edge.outbox.send(waiting.room_id, plain(UNREADABLE))
                except SendError as exc:
                    logger.warning("Could not say a message was unreadable: %s", exc)
