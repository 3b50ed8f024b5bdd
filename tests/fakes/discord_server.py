"""A fake Discord on 127.0.0.1:0 that discord.py talks to for real: the REST API under
`api_url` (`discord.http.Route.BASE`) and a WebSocket gateway whose URL `GET /gateway/bot`
gives.

    async with FakeDiscord() as fake:
        ...  # DiscordConfig(token=fake.token, api_url=fake.api_url, ...)
        fake.dispatch("MESSAGE_CREATE", fake.dm(ALICE, "hello"))
        reply = await fake.wait_for_post(channel_id=fake.dm_channel(ALICE))

REST: every request is recorded (`calls`) and the messages it creates or edits are kept as
Discord would (`messages`), with a log of what each channel shows (`posts`, `edits`).
Interaction callbacks, follow-ups and `@original` edits behave like Discord's (a deferred
response's first follow-up fills it; an ephemeral flag sticks). `fail_next` answers a
route's next request with a 429 and `retry_after`. Content over 2,000 characters is refused
as Discord refuses it. The gateway (`tests.fakes.discord_gateway`) says HELLO, takes
IDENTIFY and heartbeats, says READY and GUILD_CREATE, dispatches the test's events, and can
drop the connection so that the client RESUMEs (and be told to deliver events again then).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web

from tests.fakes.discord_gateway import Gateway
from tests.fakes.discord_payloads import (
    CHANNEL_ID,
    GUILD_ID,
    THREAD_ID,
    DcUser,
    Post,
    Snowflakes,
    interaction,
    message,
    thread,
)
from tests.fakes.discord_routes import json_response, rate_limited, route

__all__ = ["ApiCall", "FakeDiscord", "Post"]

API = "/api/v10"


@dataclass(slots=True)
class ApiCall:
    """One REST request: method, path below the API base, JSON body, arrival (monotonic)."""

    method: str
    path: str
    body: Any
    at: float
    status: int = 200


@dataclass(slots=True)
class _Interaction:
    channel_id: int
    original: int | None = None  # the message the response created (or the tapped one)
    loading: bool = False
    ephemeral: bool = False


@dataclass
class FakeDiscord:
    """A scripted Discord; see the module docstring."""

    token: str = "fake.discord.token"  # noqa: S105 - a fake token for a fake server
    bot_user: DcUser = field(default_factory=lambda: DcUser(4242, "Lore", bot=True))
    guild_owner: DcUser = field(default_factory=lambda: DcUser(1001, "Olivia"))
    users: dict[int, DcUser] = field(default_factory=dict)
    calls: list[ApiCall] = field(default_factory=list)
    posts: list[Post] = field(default_factory=list)
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    downloads: list[str] = field(default_factory=list)
    commands: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    port: int = 0
    ids: Snowflakes = field(default_factory=Snowflakes)
    _dms: dict[int, int] = field(default_factory=dict)
    _threads: set[int] = field(default_factory=lambda: {THREAD_ID})
    _interactions: dict[str, _Interaction] = field(default_factory=dict)
    _failures: list[tuple[str, re.Pattern[str], float]] = field(default_factory=list)
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _runner: web.AppRunner | None = None
    gateway: Gateway = field(init=False)

    def __post_init__(self) -> None:
        self.gateway = Gateway(self)
        for user in (self.bot_user, self.guild_owner):
            self.users[user.id] = user

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{API}"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_get("/gateway", self.gateway.serve)
        app.router.add_get("/attachments/{name}", self._download)
        app.router.add_route("*", API + "/{tail:.*}", self._api)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.gateway.close()
        assert self._runner is not None
        await self._runner.cleanup()

    # -- scripting ---------------------------------------------------------------------------

    def user(self, user_id: int, name: str) -> DcUser:
        """A Discord user the fake knows (`GET /users/{id}` finds them)."""
        self.users[user_id] = DcUser(user_id, name)
        return self.users[user_id]

    def dm_channel(self, user: DcUser) -> int:
        """The id of the DM channel between the bot and `user`."""
        if user.id not in self._dms:
            self._dms[user.id] = self.ids()
        return self._dms[user.id]

    def dm(self, user: DcUser, text: str, **extra: Any) -> dict[str, Any]:
        """A MESSAGE_CREATE from `user` in their DM with the bot."""
        self.users.setdefault(user.id, user)
        return message(self.ids(), self.dm_channel(user), user, text, guild=False, **extra)

    def in_server(
        self,
        user: DcUser,
        text: str,
        *,
        mention: bool = True,
        channel_id: int = CHANNEL_ID,
        reply_to: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A MESSAGE_CREATE in the test server (#general, or a thread), mentioning the bot."""
        self.users.setdefault(user.id, user)
        extra: dict[str, Any] = {}
        if mention:
            text = f"<@{self.bot_user.id}> {text}"
            extra["mentions"] = [self.bot_user.as_dict()]
        if reply_to is not None:
            extra["type"] = 19
            extra["message_reference"] = {
                "message_id": reply_to["id"],
                "channel_id": reply_to["channel_id"],
                "guild_id": str(GUILD_ID),
            }
            extra["referenced_message"] = reply_to
        return message(self.ids(), channel_id, user, text, guild=True, **extra)

    def attachment(self, name: str, data: bytes, size: int | None = None) -> dict[str, Any]:
        """An attachment whose URL serves `data` (announcing `size`, by default the truth)."""
        self.files[name] = data
        url = f"http://127.0.0.1:{self.port}/attachments/{name}"
        return {
            "id": str(self.ids()),
            "filename": name,
            "size": len(data) if size is None else size,
            "url": url,
            "proxy_url": url,
            "content_type": "application/octet-stream",
        }

    def voice_attachment(self, data: bytes, *, seconds: float) -> dict[str, Any]:
        """The attachment of a voice message (Discord names them all `voice-message.ogg`; its
        `duration_secs` and `waveform` say what it is)."""
        attachment = self.attachment(f"voice-{self.ids()}.ogg", data)
        return {
            **attachment,
            "filename": "voice-message.ogg",
            "content_type": "audio/ogg",
            "duration_secs": seconds,
            "waveform": "AAAA",
        }

    def _channel_of(self, channel_id: int) -> dict[str, Any]:
        if channel_id in self._dms.values():
            return {"id": str(channel_id), "type": 1}
        if channel_id in self._threads:
            return thread(channel_id, "thread", self.guild_owner.id)
        return {"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": "general"}

    def slash(
        self, user: DcUser, name: str, args: str = "", *, channel_id: int | None = None
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE for `/lore name args` (in the user's DM by default)."""
        self.users.setdefault(user.id, user)
        channel_id = channel_id or self.dm_channel(user)
        option: dict[str, Any] = {"type": 1, "name": name}
        if args:
            option["options"] = [{"type": 3, "name": "args", "value": args}]
        data: dict[str, Any] = {"id": "9001", "name": "lore", "type": 1, "options": [option]}
        if "guild" in self.commands:
            data["guild_id"] = str(GUILD_ID)
        return self._interaction(2, user, channel_id, data)

    def click(self, user: DcUser, post: Post, label: str) -> dict[str, Any]:
        """An INTERACTION_CREATE for `user` tapping the button `label` under `post` (a tap on a
        stale copy, after the buttons were removed, is how a second owner taps too late)."""
        custom_id = dict(post.buttons())[label]
        data = {"custom_id": custom_id, "component_type": 2}
        # The message as the tapper's client showed it (`post`), even if edited since.
        shown = {**self.messages[post.message_id], "components": post.components}
        return self._interaction(3, user, post.channel_id, data, message=shown)

    def _interaction(
        self, kind: int, user: DcUser, channel_id: int, data: dict[str, Any], **extra: Any
    ) -> dict[str, Any]:
        channel = self._channel_of(channel_id)
        token = f"itoken-{self.ids()}"
        original = int(extra["message"]["id"]) if "message" in extra else None
        self._interactions[token] = _Interaction(channel_id, original)
        guild = "guild_id" in channel
        return interaction(self.ids(), kind, user, channel, data, guild=guild, token=token, **extra)

    def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway event (MESSAGE_CREATE, INTERACTION_CREATE) to the bot."""
        self.gateway.dispatch(event, data)

    def fail_next(self, method: str, path: str, retry_after: float = 1.0) -> None:
        """Answer the next `method` request whose path matches the regex `path` with a 429."""
        self._failures.append((method, re.compile(path), retry_after))

    # -- inspecting --------------------------------------------------------------------------

    def of(self, method: str, path: str) -> list[ApiCall]:
        """Recorded requests whose path matches the regex `path`."""
        pattern = re.compile(path)
        return [c for c in self.calls if c.method == method and pattern.fullmatch(c.path)]

    def in_channel(self, channel_id: int) -> list[Post]:
        """What was posted or edited in a channel, in order."""
        return [post for post in self.posts if post.channel_id == channel_id]

    def notify(self) -> None:
        async def wake() -> None:
            async with self._changed:
                self._changed.notify_all()

        task = asyncio.get_running_loop().create_task(wake())
        self.gateway.keep(task)

    async def wait_until(self, check: Callable[[], bool], within: float = 20.0) -> None:
        """Return when `check()` holds, re-checked after every request; fail after `within` s."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(check)

    async def wait_for_post(
        self,
        check: Callable[[Post], bool] = lambda _: True,
        *,
        channel_id: int | None = None,
        within: float = 20.0,
    ) -> Post:
        """The first post (or edit) for which `check` holds, once it has arrived."""

        def found() -> Post | None:
            for post in self.posts:
                if (channel_id is None or post.channel_id == channel_id) and check(post):
                    return post
            return None

        await self.wait_until(lambda: found() is not None, within)
        result = found()
        assert result is not None
        return result

    # -- serving -----------------------------------------------------------------------------

    async def _download(self, request: web.Request) -> web.StreamResponse:
        self.downloads.append(request.match_info["name"])
        self.notify()
        data = self.files.get(request.match_info["name"])
        if data is None:
            return web.Response(status=404, text="not found")
        return web.Response(body=data, content_type="application/octet-stream")

    async def _api(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body = await request.json() if request.can_read_body else None
        call = ApiCall(request.method, path, body, time.monotonic())
        self.calls.append(call)
        try:
            for index, (method, pattern, retry_after) in enumerate(self._failures):
                if method == request.method and pattern.fullmatch(path):
                    del self._failures[index]
                    call.status = 429
                    return rate_limited(retry_after)
            if not path.startswith(("/interactions/", "/webhooks/")) and (
                request.headers.get("Authorization") != f"Bot {self.token}"
            ):
                call.status = 401
                return json_response({"message": "401: Unauthorized", "code": 0}, 401)
            status, payload = self._route(request.method, path, body)
            call.status = status
            return json_response(payload, status)
        finally:
            self.notify()

    def _route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        return route(self, method, path, body or {})

    # -- message store (used by the routes) --------------------------------------------------

    def is_channel(self, channel_id: int) -> bool:
        return channel_id in (CHANNEL_ID, *self._dms.values(), *self._threads)

    def is_dm(self, channel_id: int) -> bool:
        return channel_id in self._dms.values()

    def add_thread(self, thread_id: int) -> None:
        self._threads.add(thread_id)

    def interaction_state(self, token: str) -> _Interaction | None:
        return self._interactions.get(token)
