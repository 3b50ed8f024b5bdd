"""A fake Telegram Bot API server on 127.0.0.1:0 that python-telegram-bot talks to for real.

    async with FakeTelegram() as fake:
        app = ApplicationBuilder().token(fake.token).base_url(fake.base_url)
              .base_file_url(fake.base_file_url)...
        fake.enqueue(fake.message(ALICE, "hello"))          # served by getUpdates
        call = await fake.wait_for("sendMessage", chat_id=ALICE.id)

Every Bot API call is recorded (`calls`) with its parameters (JSON-valued ones decoded).
Messages get ids per chat; `getUpdates` long-polls until an update is queued; files
registered with `add_file` (or sent with `voice` and `photo`) are served by `getFile` and the
download route; `fail_next`
answers a method's next call with an error such as a 429 with `retry_after`; `disable`
makes a method unknown (an older or self-hosted Bot API). HTTP/1.1 with keep-alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import parse_qsl, unquote

__all__ = ["ApiCall", "FakeTelegram", "TgChat", "TgUser"]

Writer = asyncio.StreamWriter
JSON_PARAMS = {
    "reply_markup",
    "reply_parameters",
    "commands",
    "allowed_updates",
    "scope",
    "entities",
    "link_preview_options",
}


@dataclass(frozen=True, slots=True)
class TgUser:
    """A Telegram user as updates carry it."""

    id: int
    first_name: str
    username: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.username:
            data["username"] = self.username
        return data


@dataclass(frozen=True, slots=True)
class TgChat:
    """A chat: private (id = the user's id) or a group (negative id)."""

    id: int
    type: str = "private"
    title: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.title:
            data["title"] = self.title
        return data


@dataclass(slots=True)
class ApiCall:
    """One Bot API call: the method, its parameters, when it arrived (monotonic), its result."""

    method: str
    params: dict[str, Any]
    at: float
    result: Any = None

    @property
    def chat_id(self) -> int | None:
        value = self.params.get("chat_id")
        return int(value) if value is not None else None

    @property
    def text(self) -> str:
        return str(self.params.get("text", ""))

    def buttons(self) -> list[tuple[str, str]]:
        """(label, callback data) of every inline button."""
        markup = self.params.get("reply_markup") or {}
        return [
            (button["text"], button.get("callback_data", ""))
            for row in markup.get("inline_keyboard", [])
            for button in row
        ]


@dataclass
class _Failure:
    status: int
    description: str
    retry_after: int | None


@dataclass
class FakeTelegram:
    """A scripted Bot API server; see the module docstring."""

    token: str = "123456:TEST-token"  # noqa: S105 - a fake token for a fake server
    bot_user: TgUser = field(default_factory=lambda: TgUser(999, "Lore", "lore_test_bot"))
    calls: list[ApiCall] = field(default_factory=list)
    _updates: list[dict[str, Any]] = field(default_factory=list)
    _redelivered: list[dict[str, Any]] = field(default_factory=list)
    _files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    _reported_sizes: dict[str, int] = field(default_factory=dict)
    downloaded: dict[str, int] = field(default_factory=dict)
    """Bytes of each file path written to a downloading client (it may hang up early)."""
    _failures: dict[str, list[_Failure]] = field(default_factory=dict)
    _disabled: set[str] = field(default_factory=set)
    _next_ids: dict[int, itertools.count[int]] = field(default_factory=dict)
    _update_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _server: asyncio.Server | None = None
    _writers: dict[asyncio.Task[None], Writer] = field(default_factory=dict)
    _background: set[asyncio.Task[None]] = field(default_factory=set)
    port: int = 0
    polls: int = 0

    @property
    def api_root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.api_root}/bot"

    @property
    def base_file_url(self) -> str:
        return f"{self.api_root}/file/bot"

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers.values():
            writer.transport.abort()
        await asyncio.gather(*self._writers, return_exceptions=True)
        await self._server.wait_closed()

    # -- scripting ---------------------------------------------------------------------------

    def next_update_id(self) -> int:
        return next(self._update_ids)

    def message(
        self,
        user: TgUser,
        text: str | None = None,
        *,
        chat: TgChat | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """An update carrying a new message from `user` (in their private chat by default)."""
        chat = chat or TgChat(user.id)
        message: dict[str, Any] = {
            "message_id": self._new_message_id(chat.id),
            "date": int(time.time()),
            "chat": chat.as_dict(),
            "from": user.as_dict(),
            **extra,
        }
        if text is not None:
            message["text"] = text
            if text.startswith("/"):
                command = text.split()[0]
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        return {"update_id": self.next_update_id(), "message": message}

    def voice(
        self,
        user: TgUser,
        data: bytes,
        *,
        seconds: int,
        kind: str = "voice",
        chat: TgChat | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """An update carrying a voice note (`kind` "voice"), a round video note ("video_note")
        or an audio file ("audio") whose bytes `getFile` and the download serve; `seconds` is
        the duration Telegram announces (it may lie)."""
        file_id = f"{kind}-{self.next_update_id()}"
        self.add_file(file_id, data, f"{kind}/{file_id}.{'mp4' if kind == 'video_note' else 'ogg'}")
        recording = {
            "file_id": file_id,
            "file_unique_id": f"u{file_id}",
            "duration": seconds,
            "file_size": len(data),
            **({"length": 240} if kind == "video_note" else {"mime_type": "audio/ogg"}),
        }
        return self.message(user, chat=chat, **{kind: recording}, **extra)

    def photo(
        self, user: TgUser, data: bytes, *, chat: TgChat | None = None, **extra: Any
    ) -> dict[str, Any]:
        """An update carrying a photo in the sizes Telegram keeps (a thumbnail and the JPEG
        itself, whose bytes `getFile` and the download serve)."""
        file_id = f"photo-{self.next_update_id()}"
        self.add_file(file_id, data, f"photos/{file_id}.jpg")
        sizes = [
            {"file_id": f"{file_id}-s", "file_unique_id": f"u{file_id}-s", "width": 90,
             "height": 60, "file_size": 1000},
            {"file_id": file_id, "file_unique_id": f"u{file_id}", "width": 1280, "height": 960,
             "file_size": len(data)},
        ]  # fmt: skip
        return self.message(user, chat=chat, photo=sizes, **extra)

    def callback(self, user: TgUser, call: ApiCall, data: str) -> dict[str, Any]:
        """An update for `user` tapping the button with `data` under the message `call` sent."""
        message = call.result or {}
        return {
            "update_id": self.next_update_id(),
            "callback_query": {
                "id": str(self.next_update_id()),
                "from": user.as_dict(),
                "chat_instance": "ci",
                "data": data,
                "message": message,
            },
        }

    def enqueue(self, update: dict[str, Any]) -> None:
        """Serve `update` through getUpdates."""
        self._updates.append(update)
        self._notify()

    def redeliver(self, update: dict[str, Any]) -> None:
        """Serve `update` again even if it was confirmed (as after a crash before confirming)."""
        self._redelivered.append(update)
        self._notify()

    def add_file(
        self, file_id: str, data: bytes, file_path: str, *, reported_size: int | None = None
    ) -> None:
        """Make `getFile(file_id)` and its download work; `reported_size`: what getFile says
        the size is (a lie, when it differs from the data's)."""
        self._files[file_id] = (file_path, data)
        if reported_size is not None:
            self._reported_sizes[file_id] = reported_size

    def fail_next(
        self, method: str, status: int = 429, description: str = "", retry_after: int | None = 1
    ) -> None:
        """Answer the next call of `method` with an error (default: 429 with `retry_after`)."""
        text = description or f"Too Many Requests: retry after {retry_after}"
        self._failures.setdefault(method, []).append(_Failure(status, text, retry_after))

    def disable(self, method: str) -> None:
        """Answer `method` with 404 as a Bot API that does not know it."""
        self._disabled.add(method)

    # -- inspecting --------------------------------------------------------------------------

    def of(self, method: str, **params: object) -> list[ApiCall]:
        """Recorded calls of `method` whose parameters include `params` (compared as text)."""
        return [
            call
            for call in self.calls
            if call.method == method
            and all(str(call.params.get(key)) == str(value) for key, value in params.items())
        ]

    def requests_since(self, mark: int) -> list[ApiCall]:
        return self.calls[mark:]

    async def wait_until(self, check: Callable[[], bool], within: float = 20.0) -> None:
        """Return when `check()` holds, re-checked after every call; fail after `within` s."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(check)

    async def wait_until_call(
        self, check: Callable[[ApiCall], bool], within: float = 20.0
    ) -> ApiCall:
        """The first recorded call for which `check` holds, once it has arrived."""
        await self.wait_until(lambda: any(check(call) for call in self.calls), within)
        return next(call for call in self.calls if check(call))

    async def wait_for(
        self, method: str, *, count: int = 1, within: float = 20.0, **params: object
    ) -> ApiCall:
        """The `count`-th call of `method` matching `params`, once it has arrived."""
        await self.wait_until(lambda: len(self.of(method, **params)) >= count, within)
        return self.of(method, **params)[count - 1]

    # -- serving -----------------------------------------------------------------------------

    def _notify(self) -> None:
        async def notify() -> None:
            async with self._changed:
                self._changed.notify_all()

        task = asyncio.get_running_loop().create_task(notify())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _new_message_id(self, chat_id: int) -> int:
        counter = self._next_ids.setdefault(chat_id, itertools.count(1))
        return next(counter)

    async def _serve(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._writers[task] = writer
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            del self._writers[task]
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _one_request(self, reader: asyncio.StreamReader, writer: Writer) -> bool:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, raw_path, _ = head[0].split(" ", 2)
        path = unquote(raw_path)
        headers = {}
        for line in filter(None, head[1:]):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        file_prefix = f"/file/bot{self.token}/"
        if method == "GET" and path.startswith(file_prefix):
            await self._download(writer, path.removeprefix(file_prefix))
        elif path.startswith(f"/bot{self.token}/"):
            params = _parse_params(headers.get("content-type", ""), body)
            status, payload = await self._call(path.rsplit("/", 1)[1], params)
            await _respond(writer, status, json.dumps(payload).encode())
        else:
            await _respond(
                writer, 401, b'{"ok":false,"error_code":401,"description":"Unauthorized"}'
            )
        return headers.get("connection", "").lower() != "close"

    async def _stream_file(self, writer: Writer, file_path: str, data: bytes) -> None:
        """Send a file 64 KiB at a time, counting what went out before the client hung up."""
        head = (
            "HTTP/1.1 200 X\r\nContent-Type: application/octet-stream\r\n"
            f"Content-Length: {len(data)}\r\nConnection: keep-alive\r\n\r\n"
        )
        writer.write(head.encode())
        self.downloaded[file_path] = 0
        for start in range(0, len(data), 65536):
            piece = data[start : start + 65536]
            writer.write(piece)
            try:
                await writer.drain()
            except ConnectionError:
                return
            self.downloaded[file_path] += len(piece)

    async def _download(self, writer: Writer, file_path: str) -> None:
        for stored_path, data in self._files.values():
            if stored_path == file_path:
                await self._stream_file(writer, file_path, data)
                return
        await _respond(writer, 404, b"not found", "text/plain")

    async def _call(self, name: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if name == "getUpdates":
            return 200, {"ok": True, "result": await self._get_updates(params)}
        call = ApiCall(name, params, time.monotonic())
        self.calls.append(call)
        try:
            failures = self._failures.get(name)
            if failures:
                failure = failures.pop(0)
                error: dict[str, Any] = {
                    "ok": False,
                    "error_code": failure.status,
                    "description": failure.description,
                }
                if failure.retry_after is not None:
                    error["parameters"] = {"retry_after": failure.retry_after}
                return failure.status, error
            if name in self._disabled:
                return 404, {"ok": False, "error_code": 404, "description": "Not Found"}
            result = self._result(name, params)
            call.result = result
            return 200, {"ok": True, "result": result}
        finally:
            self._notify()

    def _result(self, name: str, params: dict[str, Any]) -> Any:
        if name == "getMe":
            return {**self.bot_user.as_dict(), "is_bot": True, "can_join_groups": True}
        if name in {"sendMessage", "editMessageText", "editMessageReplyMarkup"}:
            chat_id = int(params["chat_id"])
            message_id = (
                int(params["message_id"])
                if "message_id" in params
                else self._new_message_id(chat_id)
            )
            chat = TgChat(chat_id, "private" if chat_id > 0 else "supergroup")
            message: dict[str, Any] = {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": chat.as_dict(),
                "from": {**self.bot_user.as_dict(), "is_bot": True},
                "text": params.get("text", ""),
            }
            if "reply_markup" in params:
                message["reply_markup"] = params["reply_markup"]
            return message
        if name == "getFile":
            file_path, data = self._files[str(params["file_id"])]
            return {
                "file_id": params["file_id"],
                "file_unique_id": f"u{params['file_id']}",
                "file_size": self._reported_sizes.get(str(params["file_id"]), len(data)),
                "file_path": file_path,
            }
        if name == "getWebhookInfo":
            return {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
        return True

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.polls += 1
        offset = int(params.get("offset") or 0)
        timeout = float(params.get("timeout") or 0)

        def ready() -> bool:
            if self._redelivered:
                return True
            return any(update["update_id"] >= offset for update in self._updates)

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(ready)
        self._updates = [update for update in self._updates if update["update_id"] >= offset]
        batch = self._redelivered + self._updates[:100]
        self._redelivered = []
        return batch


def _parse_params(content_type: str, body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    if content_type.startswith("application/json"):
        parsed: dict[str, Any] = json.loads(body)
        return parsed
    params: dict[str, Any] = dict(parse_qsl(body.decode(), keep_blank_values=True))
    for key in JSON_PARAMS & params.keys():
        params[key] = json.loads(params[key])
    return params


async def _respond(
    writer: Writer, status: int, body: bytes, content_type: str = "application/json"
) -> None:
    head = (
        f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
