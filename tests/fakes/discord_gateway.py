"""The WebSocket gateway of the fake Discord (`tests.fakes.discord_server`), on aiohttp: HELLO,
IDENTIFY → READY and GUILD_CREATE, heartbeats acknowledged, the test's events dispatched
with sequence numbers, and RESUME after a dropped connection (the missed events replayed,
plus any the test asks to deliver again), then RESUMED."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from tests.fakes.discord_payloads import APP_ID, GUILD_ID, guild_create

__all__ = ["Gateway"]

HELLO, HEARTBEAT, IDENTIFY, RESUME, DISPATCH, HEARTBEAT_ACK = 10, 1, 2, 6, 0, 11
RESUMABLE = 4000  # a close code after which a client resumes
DISALLOWED_INTENTS = 4014
MESSAGE_CONTENT = 1 << 15


@dataclass
class Gateway:
    """The fake's gateway; `fake` is the `FakeDiscord` it belongs to."""

    fake: Any
    identifies: list[dict[str, Any]] = field(default_factory=list)
    resumes: list[dict[str, Any]] = field(default_factory=list)
    heartbeats: int = 0
    refuse_privileged: bool = False  # as Discord does when Message Content is switched off
    session_id: str = ""
    _seq: int = 0
    _history: list[dict[str, Any]] = field(default_factory=list)
    _again: list[dict[str, Any]] = field(default_factory=list)
    _socket: web.WebSocketResponse | None = None
    _sockets: set[web.WebSocketResponse] = field(default_factory=set)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    @property
    def connected(self) -> bool:
        """Whether a client is identified (or resumed) and listening."""
        return self._socket is not None and not self._socket.closed

    def keep(self, task: asyncio.Task[None]) -> None:
        """Hold a background task until it ends."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send an event now (or, while disconnected, when the client resumes)."""
        self._seq += 1
        frame = {"op": DISPATCH, "t": event, "s": self._seq, "d": data}
        self._history.append(frame)
        if self.connected:
            self.keep(asyncio.get_running_loop().create_task(self._send(frame)))

    async def drop(self, *, deliver_again: list[tuple[str, dict[str, Any]]] = ()) -> None:
        """Close the connection as Discord does before a RESUME; `deliver_again` events are
        sent once more after the client resumed (a redelivery)."""
        self._again = [{"op": DISPATCH, "t": t, "d": d} for t, d in deliver_again]
        socket, self._socket = self._socket, None
        if socket is not None:
            await socket.close(code=RESUMABLE, message=b"session reconnect")

    async def close(self) -> None:
        for socket in list(self._sockets):
            await socket.close(code=WSCloseCode.GOING_AWAY)
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _send(
        self, frame: dict[str, Any], socket: web.WebSocketResponse | None = None
    ) -> None:
        target = socket or self._socket
        if target is not None and not target.closed:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await target.send_str(json.dumps(frame))

    async def serve(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self._sockets.add(socket)
        try:
            await socket.send_str(json.dumps({"op": HELLO, "d": {"heartbeat_interval": 41250}}))
            async for frame in socket:
                if frame.type is not WSMsgType.TEXT:
                    break
                await self._receive(socket, json.loads(frame.data))
        finally:
            self._sockets.discard(socket)
            if self._socket is socket:
                self._socket = None
            self.fake.notify()
        return socket

    async def _receive(self, socket: web.WebSocketResponse, frame: dict[str, Any]) -> None:
        op, data = frame.get("op"), frame.get("d")
        if op == HEARTBEAT:
            self.heartbeats += 1
            await self._send({"op": HEARTBEAT_ACK}, socket)
        elif op == IDENTIFY:
            self.identifies.append(data)
            if self.refuse_privileged and int(data.get("intents", 0)) & MESSAGE_CONTENT:
                await socket.close(code=DISALLOWED_INTENTS, message=b"Disallowed intent(s).")
                return
            await self._ready(socket)
        elif op == RESUME:
            self.resumes.append(data)
            await self._resume(socket, int(data.get("seq") or 0))
        self.fake.notify()

    async def _ready(self, socket: web.WebSocketResponse) -> None:
        self.session_id = f"session-{len(self.identifies)}"
        self._history = []
        self._seq += 1
        ready = {
            "v": 10,
            "user": {**self.fake.bot_user.as_dict(), "verified": True},
            "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": self.session_id,
            "resume_gateway_url": self.fake.gateway_url,
            "application": {"id": str(APP_ID), "flags": 0},
            "attachment_size_limit": 25 * 1024 * 1024,
        }
        await self._send({"op": DISPATCH, "t": "READY", "s": self._seq, "d": ready}, socket)
        self._seq += 1
        guild = {
            "op": DISPATCH,
            "t": "GUILD_CREATE",
            "s": self._seq,
            "d": guild_create(self.fake.guild_owner),
        }
        await self._send(guild, socket)
        self._socket = socket

    async def _resume(self, socket: web.WebSocketResponse, seq: int) -> None:
        for frame in self._history:
            if frame["s"] > seq:
                await self._send(frame, socket)
        for frame in self._again:
            self._seq += 1
            await self._send({**frame, "s": self._seq}, socket)
        self._again = []
        self._seq += 1
        await self._send({"op": DISPATCH, "t": "RESUMED", "s": self._seq, "d": {}}, socket)
        self._socket = socket
