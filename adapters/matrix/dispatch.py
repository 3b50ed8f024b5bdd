"""What one sync brought, handed to the handlers: room messages, reactions, invites, and
encrypted messages whose room key has not arrived yet (tried again after each sync, while
the sender's devices are asked for the key, for `key_wait` seconds; then the event is logged
and the sender told that Lore could not read it, once per room within `unreadable_window`).
Each event is handled in its own task, so no member waits behind another's long answer
(invariant 12); the caller owns the tasks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
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


@dataclass(eq=False)
class _Waiting:
    """An encrypted message waiting for its room key; `read` is set once it was decrypted."""

    room_id: str
    event: Any
    read: asyncio.Event = field(default_factory=asyncio.Event)


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
                waiting = _Waiting(room.room_id, event)
                self._waiting.append(waiting)
                self._task(self._wait_for_key(waiting), tasks)
        elif isinstance(event, nio.RoomMessage) and self._messages.wants(event):
            self.invites.spoken.add((room.room_id, event.sender))
            self._task(self._messages.on_message(room, event), tasks)

    def waiting_in(self, room_id: str) -> bool:
        """Whether a message of the room still waits for its key."""
        return any(waiting.room_id == room_id for waiting in self._waiting)

    async def _wait_for_key(self, waiting: _Waiting) -> None:
        """Ask the sender's devices for the key; if no sync brought it within `key_wait`,
        the message is unreadable."""
        with contextlib.suppress(nio.LocalProtocolError):  # already asked for this session
            await self._edge.client.request_room_key(waiting.event)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self._edge.config.key_wait):
                await waiting.read.wait()
        if waiting.read.is_set():
            return
        self._waiting.remove(waiting)
        await self._unreadable(waiting)

    def _retry_waiting(self, tasks: list[asyncio.Task[None]]) -> None:
        """Handle the waiting messages whose key this sync brought."""
        still: list[_Waiting] = []
        client = self._edge.client
        for waiting in self._waiting:
            try:
                decrypted = client.decrypt_event(waiting.event)
            except nio.EncryptionError:
                decrypted = None
            if decrypted is None or isinstance(decrypted, nio.MegolmEvent):
                still.append(waiting)
                continue
            waiting.read.set()
            self._event(client.rooms.get(waiting.room_id), decrypted, tasks)
        self._waiting = still

    async def _unreadable(self, waiting: _Waiting) -> None:
        event = waiting.event
        logger.warning(
            "Matrix: could not decrypt event %s in %s (session %s)",
            event.event_id,
            waiting.room_id,
            event.session_id,
        )
        told = f"unreadable:{waiting.room_id}:{event.sender}"
        async with self._edge.deduper.once(event.event_id) as first:
            if not first or not self._edge.tell_once(
                told, within=self._edge.config.unreadable_window
            ):
                return
            try:
                await self._edge.outbox.send(
                    waiting.room_id, plain(UNREADABLE), reply_to=event.event_id
                )
            except SendError as exc:
                logger.warning("Could not say a message was unreadable: %s", exc)
