"""A fake Slack on 127.0.0.1:0 that slack-sdk and slack-bolt talk to for real: the Web API
(reached through `AsyncWebClient(base_url=fake.api_url)`), file downloads, `response_url`
hooks, and Socket Mode's WebSocket.

    async with FakeSlack() as fake:
        fake.add_user("U0ALICE", "Alice")
        ... the edge runs with api_url=fake.api_url ...
        call = await fake.wait_for("chat.postMessage", channel=fake.dm("U0ALICE"))

Every Web API call is recorded (`calls`) with its parameters and result, every
`response_url` post (`responses`) and file download (`downloads`). Answers look like
Slack's: `ok`, `ts` per message, `invalid_auth` for a wrong token, `unknown_method` for a
method the fake does not know or was told to `disable`, HTTP 429 with `Retry-After` for
`fail_next`. A file download with a wrong token gets Slack's HTML sign-in page. Socket
Mode: `apps.connections.open` (with the app-level token) names this server's WebSocket;
`push` sends an envelope down it and `wait_for_ack` returns the client's acknowledgement.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

__all__ = ["FakeSlack", "SlackCall"]

SIGN_IN_PAGE = b"<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


@dataclass(slots=True)
class SlackCall:
    """One Web API call: the method, its parameters, the token, when (monotonic), the answer."""

    method: str
    params: dict[str, Any]
    token: str | None
    at: float
    status: int = 200
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def channel(self) -> str:
        return str(self.params.get("channel") or self.params.get("channel_id") or "")

    @property
    def text(self) -> str:
        return str(self.params.get("text") or self.params.get("markdown_text") or "")

    @property
    def ts(self) -> str:
        return str(self.result.get("ts") or self.params.get("ts") or "")

    def buttons(self) -> dict[str, tuple[str, str]]:
        """label -> (action_id, value) of every button in the message's blocks."""
        return _buttons(self.params.get("blocks"))


def _buttons(blocks: Any) -> dict[str, tuple[str, str]]:
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    found = {}
    for block in blocks or []:
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            found[element["text"]["text"]] = (element["action_id"], element.get("value", ""))
    return found


@dataclass(slots=True)
class Posted:
    """A message posted to a `response_url`."""

    url: str
    body: dict[str, Any]
    at: float

    @property
    def text(self) -> str:
        return str(self.body.get("text", ""))

    def buttons(self) -> dict[str, tuple[str, str]]:
        return _buttons(self.body.get("blocks"))


@dataclass
class FakeSlack:
    """See the module docstring."""

    bot_token: str = "xoxb-0000-fake-bot-token"  # noqa: S105 - a fake token for a fake server
    app_token: str = "xapp-1-fake-app-token"  # noqa: S105
    bot_user_id: str = "U0LOREBOT"
    team_id: str = "T0TEAM"
    calls: list[SlackCall] = field(default_factory=list)
    responses: list[Posted] = field(default_factory=list)
    downloads: list[tuple[str, str]] = field(default_factory=list)
    acks: list[dict[str, Any]] = field(default_factory=list)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    refuse_downloads: bool = False  # answer every download with the sign-in page
    _files: dict[str, tuple[dict[str, Any], bytes, str]] = field(default_factory=dict)
    _failures: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    _disabled: set[str] = field(default_factory=set)
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _runner: web.AppRunner | None = None
    port: int = 0

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.root}/api/"

    def response_url(self, key: str) -> str:
        return f"{self.root}/respond/{key}"

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/files/{file_id}/{name}", self._download)
        app.router.add_post("/respond/{key}", self._respond)
        app.router.add_get("/socket", self._socket)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = next(a[1] for a in self._runner.addresses if isinstance(a, tuple))
        return self

    async def __aexit__(self, *exc: object) -> None:
        for socket in self._sockets:
            await socket.close()
        assert self._runner is not None
        await self._runner.cleanup()

    # -- scripting ---------------------------------------------------------------------------

    def next_ts(self) -> str:
        """A fresh message timestamp, as Slack writes them."""
        return f"1700000000.{next(self._ts):06d}"

    def dm(self, user_id: str) -> str:
        """The direct-message conversation between the bot and `user_id`."""
        return "D" + user_id.removeprefix("U")

    def add_user(self, user_id: str, name: str) -> None:
        self.users[user_id] = {
            "id": user_id,
            "team_id": self.team_id,
            "name": name.lower(),
            "real_name": name,
            "profile": {"display_name": name, "real_name": name},
        }

    def add_file(
        self, file_id: str, name: str, data: bytes, mimetype: str = "text/plain"
    ) -> dict[str, Any]:
        """A file people can share; its `files` entry for a message event."""
        info = {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": name.rsplit(".", 1)[-1],
            "size": len(data),
            "mode": "hosted",
            "url_private": f"{self.root}/files/{file_id}/{name}",
            "url_private_download": f"{self.root}/files/{file_id}/{name}",
        }
        self._files[file_id] = (info, data, mimetype)
        return dict(info)

    def fail_next(self, method: str, status: int = 429, retry_after: int = 1) -> None:
        """Answer the next call of `method` with an HTTP error (a 429 with `Retry-After`)."""
        self._failures.setdefault(method, []).append((status, retry_after))

    def disable(self, method: str) -> None:
        """Answer `method` with `unknown_method`, as a workspace without it."""
        self._disabled.add(method)

    async def push(self, envelope: dict[str, Any]) -> None:
        """Send a Socket Mode envelope down the open WebSocket."""
        await self.wait_until(lambda: bool(self._sockets))
        await self._sockets[-1].send_str(json.dumps(envelope))

    # -- inspecting --------------------------------------------------------------------------

    def of(self, method: str, **params: object) -> list[SlackCall]:
        """Recorded calls of `method` whose parameters include `params` (compared as text)."""
        return [
            call
            for call in self.calls
            if call.method == method
            and all(str(call.params.get(key)) == str(value) for key, value in params.items())
        ]

    async def wait_until(self, check: Callable[[], bool], within: float = 20.0) -> None:
        """Return when `check()` holds, re-checked after every request; fail after `within` s."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(check)

    async def wait_for(
        self, method: str, *, count: int = 1, within: float = 20.0, **params: object
    ) -> SlackCall:
        """The `count`-th call of `method` matching `params`, once it has arrived."""
        await self.wait_until(lambda: len(self.of(method, **params)) >= count, within)
        return self.of(method, **params)[count - 1]

    async def wait_for_call(self, check: Callable[[SlackCall], bool]) -> SlackCall:
        """The first call for which `check` holds, once it has arrived."""
        await self.wait_until(lambda: any(check(call) for call in self.calls))
        return next(call for call in self.calls if check(call))

    async def wait_for_response(self, check: Callable[[Posted], bool]) -> Posted:
        """The first `response_url` post for which `check` holds."""
        await self.wait_until(lambda: any(check(posted) for posted in self.responses))
        return next(posted for posted in self.responses if check(posted))

    async def wait_for_ack(self, envelope_id: str) -> dict[str, Any]:
        """The Socket Mode client's acknowledgement of an envelope."""
        await self.wait_until(lambda: any(a.get("envelope_id") == envelope_id for a in self.acks))
        return next(a for a in self.acks if a.get("envelope_id") == envelope_id)

    # -- serving -----------------------------------------------------------------------------

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params: dict[str, Any] = dict(request.query)
        body = await request.read()
        if body and request.content_type == "application/json":
            params.update(json.loads(body))
        elif body:
            params.update(parse_qsl(body.decode(), keep_blank_values=True))
        authorization = request.headers.get("Authorization", "")
        token = authorization.removeprefix("Bearer ") if authorization else params.get("token")
        call = SlackCall(method, params, token, time.monotonic())
        self.calls.append(call)
        try:
            failures = self._failures.get(method)
            if failures:
                call.status, retry_after = failures.pop(0)
                call.result = {"ok": False, "error": "ratelimited"}
                headers = {"Retry-After": str(retry_after)}
                return web.json_response(call.result, status=call.status, headers=headers)
            call.result = self._result(method, params, token)
            return web.json_response(call.result)
        finally:
            await self._notify()

    def _result(self, method: str, params: dict[str, Any], token: str | None) -> dict[str, Any]:
        wanted = self.app_token if method == "apps.connections.open" else self.bot_token
        if token != wanted:
            return {"ok": False, "error": "invalid_auth"}
        if method in self._disabled:
            return {"ok": False, "error": "unknown_method"}
        handler = self._methods().get(method)
        if handler is None:
            return {"ok": False, "error": "unknown_method"}
        result: dict[str, Any] = handler(params)
        return result

    def _methods(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "chat.update": self._chat_update,
            "chat.postEphemeral": lambda _: {"ok": True, "message_ts": self.next_ts()},
            "chat.startStream": self._chat_start_stream,
            "chat.appendStream": lambda p: {"ok": True, "channel": p["channel"], "ts": p["ts"]},
            "chat.stopStream": self._chat_stop_stream,
            "assistant.threads.setStatus": lambda _: {"ok": True},
            "conversations.open": lambda p: {"ok": True, "channel": {"id": self.dm(p["users"])}},
            "users.info": self._users_info,
            "files.info": self._files_info,
            "apps.connections.open": lambda _: {"ok": True, "url": self._socket_url()},
        }

    def _message(self, params: dict[str, Any], ts: str) -> dict[str, Any]:
        message = {"type": "message", "user": self.bot_user_id, "bot_id": "B0LORE", "ts": ts}
        message["text"] = params.get("text") or params.get("markdown_text") or ""
        if params.get("thread_ts"):
            message["thread_ts"] = params["thread_ts"]
        if params.get("blocks"):
            message["blocks"] = params["blocks"]
        return message

    def _sent_ts(self) -> set[str]:
        creating = {"chat.postMessage", "chat.startStream"}
        return {str(c.result.get("ts")) for c in self.calls if c.method in creating and c.result}

    def _auth_test(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://lore-test.slack.com/",
            "team": "Lore Test",
            "user": "lore",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": "B0LORE",
            "is_enterprise_install": False,
        }

    def _chat_post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = self.next_ts()
        return {
            "ok": True,
            "channel": params["channel"],
            "ts": ts,
            "message": self._message(params, ts),
        }

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        if str(params.get("ts")) not in self._sent_ts():
            return {"ok": False, "error": "message_not_found"}
        ts = str(params["ts"])
        return {
            "ok": True,
            "channel": params["channel"],
            "ts": ts,
            "text": params.get("text", ""),
            "message": self._message(params, ts),
        }

    def _chat_start_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True, "channel": params["channel"], "ts": self.next_ts()}

    def _chat_stop_stream(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = str(params["ts"])
        return {
            "ok": True,
            "channel": params["channel"],
            "ts": ts,
            "message": self._message(params, ts),
        }

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = self.users.get(str(params.get("user")))
        return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}

    def _files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        stored = self._files.get(str(params.get("file")))
        return (
            {"ok": True, "file": stored[0]} if stored else {"ok": False, "error": "file_not_found"}
        )

    def _socket_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/socket?ticket={self.next_ts()}"

    async def _download(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        authorization = request.headers.get("Authorization", "")
        self.downloads.append((file_id, authorization))
        await self._notify()
        stored = self._files.get(file_id)
        if authorization != f"Bearer {self.bot_token}" or self.refuse_downloads:
            return web.Response(body=SIGN_IN_PAGE, content_type="text/html")
        if stored is None:
            return web.Response(status=404, text="not found")
        _, data, mimetype = stored
        return web.Response(body=data, content_type=mimetype)

    async def _respond(self, request: web.Request) -> web.Response:
        url = self.response_url(request.match_info["key"])
        self.responses.append(Posted(url, await request.json(), time.monotonic()))
        await self._notify()
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        self._sockets.append(socket)
        await self._notify()
        await socket.send_str(json.dumps({"type": "hello", "num_connections": 1}))
        async for message in socket:
            if message.type == WSMsgType.TEXT:
                self.acks.append(json.loads(message.data))
                await self._notify()
        self._sockets.remove(socket)
        return socket
