"""The REST routes of the fake Discord (`tests.fakes.discord_server`): what each endpoint the
Lore edge and discord.py use answers, and what it does to the fake's message store."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.discord_payloads import APP_ID, GUILD_ID, Post, message, thread

__all__ = ["EPHEMERAL", "json_response", "rate_limited", "route", "store"]

EPHEMERAL = 64
MAX_CONTENT = 2000
Result = tuple[int, Any]


def _error(status: int, message: str, code: int) -> Result:
    return status, {"message": message, "code": code}


def _too_long(body: dict[str, Any]) -> bool:
    return len(str(body.get("content") or "").encode("utf-16-le")) // 2 > MAX_CONTENT


TOO_LONG = _error(400, "Invalid Form Body: content must be 2000 or fewer in length.", 50035)


def _me(fake: Any) -> Result:
    return 200, {**fake.bot_user.as_dict(), "verified": True, "mfa_enabled": False, "flags": 0}


def _application(fake: Any) -> Result:
    return 200, {
        "id": str(APP_ID),
        "name": "Lore",
        "description": "",
        "icon": None,
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": fake.guild_owner.as_dict(),
        "verify_key": "0" * 64,
        "flags": 0,
        "team": None,
        "summary": "",
    }


def _commands(fake: Any, where: str, body: list[dict[str, Any]]) -> Result:
    fake.commands[where] = body
    return 200, [
        {**command, "id": str(9001 + n), "application_id": str(APP_ID), "version": "1"}
        for n, command in enumerate(body)
    ]


def _create(fake: Any, channel_id: int, body: dict[str, Any]) -> Result:
    if not fake.is_channel(channel_id):
        return _error(404, "Unknown Channel", 10003)
    if _too_long(body):
        return TOO_LONG
    return 200, store(fake, channel_id, body, via="channel")


def _edit(fake: Any, channel_id: int, message_id: int, body: dict[str, Any]) -> Result:
    stored = fake.messages.get(message_id)
    if stored is None or int(stored["channel_id"]) != channel_id:
        return _error(404, "Unknown Message", 10008)
    if _too_long(body):
        return TOO_LONG
    return 200, store(fake, channel_id, body, via="channel", message_id=message_id)


def _dm_open(fake: Any, body: dict[str, Any]) -> Result:
    user = fake.users.get(int(body["recipient_id"]))
    if user is None:
        return _error(404, "Unknown User", 10013)
    channel_id = fake.dm_channel(user)
    return 200, {"id": str(channel_id), "type": 1, "recipients": [user.as_dict()]}


def _user(fake: Any, user_id: int) -> Result:
    user = fake.users.get(user_id)
    return (200, user.as_dict()) if user else _error(404, "Unknown User", 10013)


def _start_thread(fake: Any, channel_id: int, message_id: int, body: dict[str, Any]) -> Result:
    if not fake.is_channel(channel_id):
        return _error(404, "Unknown Channel", 10003)
    fake.add_thread(message_id)  # a thread started from a message has the message's id
    data = thread(message_id, body.get("name", "thread"), fake.bot_user.id)
    data["parent_id"] = str(channel_id)
    fake.dispatch("THREAD_CREATE", {**data, "newly_created": True})  # as Discord announces it
    return 201, data


def _callback(fake: Any, interaction_id: str, token: str, body: dict[str, Any]) -> Result:
    state = fake.interaction_state(token)
    if state is None:
        return _error(404, "Unknown interaction", 10062)
    kind, data = body["type"], body.get("data") or {}
    flags = int(data.get("flags") or 0)
    response: dict[str, Any] = {"id": interaction_id, "type": 2}
    resource: dict[str, Any] = {"type": kind}
    if kind in (4, 5):  # a message (or "thinking…") in the channel
        if _too_long(data):
            return TOO_LONG
        state.loading = kind == 5
        state.ephemeral = bool(flags & EPHEMERAL)
        content = data if kind == 4 else {"content": ""}
        stored = store(fake, state.channel_id, content, via="interaction", flags=flags)
        state.original = int(stored["id"])
        resource["message"] = stored
        response.update(
            response_message_id=stored["id"],
            response_message_loading=state.loading,
            response_message_ephemeral=state.ephemeral,
        )
    elif kind == 7 and state.original is not None:  # the tapped message, updated
        stored = store(fake, state.channel_id, data, via="interaction", message_id=state.original)
        resource["message"] = stored
    return 200, {"interaction": response, "resource": resource}


def _original(fake: Any, method: str, token: str, body: dict[str, Any]) -> Result:
    state = fake.interaction_state(token)
    if state is None or state.original is None:
        return _error(404, "Unknown Message", 10008)
    if method == "DELETE":
        fake.messages.pop(state.original, None)
        return 204, None
    if method == "GET":
        return 200, fake.messages[state.original]
    if _too_long(body):
        return TOO_LONG
    state.loading = False
    return 200, store(fake, state.channel_id, body, via="interaction", message_id=state.original)


def _followup(fake: Any, token: str, body: dict[str, Any]) -> Result:
    state = fake.interaction_state(token)
    if state is None:
        return _error(404, "Unknown Webhook", 10015)
    if _too_long(body):
        return TOO_LONG
    if state.loading and state.original is not None:  # the first follow-up fills "thinking…"
        state.loading = False
        flags = EPHEMERAL if state.ephemeral else 0
        return 200, store(
            fake, state.channel_id, body, via="followup", message_id=state.original, flags=flags
        )
    return 200, store(fake, state.channel_id, body, via="followup")


def _routes(fake: Any) -> list[tuple[str, str, Callable[..., Result]]]:
    return [
        ("GET", r"/gateway/bot", lambda _b: (200, _gateway(fake))),
        ("GET", r"/users/@me", lambda _b: _me(fake)),
        ("GET", r"/oauth2/applications/@me", lambda _b: _application(fake)),
        ("PUT", rf"/applications/{APP_ID}/commands", lambda b: _commands(fake, "global", b)),
        (
            "PUT",
            rf"/applications/{APP_ID}/guilds/{GUILD_ID}/commands",
            lambda b: _commands(fake, "guild", b),
        ),
        ("POST", r"/users/@me/channels", lambda b: _dm_open(fake, b)),
        ("GET", r"/users/(\d+)", lambda _b, u: _user(fake, int(u))),
        ("POST", r"/channels/(\d+)/messages", lambda b, c: _create(fake, int(c), b)),
        (
            "PATCH",
            r"/channels/(\d+)/messages/(\d+)",
            lambda b, c, m: _edit(fake, int(c), int(m), b),
        ),
        ("POST", r"/channels/(\d+)/typing", lambda _b, _c: (204, None)),
        (
            "POST",
            r"/channels/(\d+)/messages/(\d+)/threads",
            lambda b, c, m: _start_thread(fake, int(c), int(m), b),
        ),
        ("POST", r"/interactions/(\d+)/([^/]+)/callback", lambda b, i, t: _callback(fake, i, t, b)),
        ("POST", rf"/webhooks/{APP_ID}/([^/]+)", lambda b, t: _followup(fake, t, b)),
    ]


def _gateway(fake: Any) -> dict[str, Any]:
    limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
    return {"url": fake.gateway_url, "shards": 1, "session_start_limit": limit}


ORIGINAL = re.compile(rf"/webhooks/{APP_ID}/([^/]+)/messages/@original")


def route(fake: Any, method: str, path: str, body: Any) -> Result:
    """The answer to one REST request."""
    original = ORIGINAL.fullmatch(path)
    if original is not None:
        return _original(fake, method, original.group(1), body)
    for verb, pattern, handler in _routes(fake):
        match = re.fullmatch(pattern, path)
        if verb == method and match is not None:
            return handler(body, *match.groups())
    return _error(404, f"404: Not Found ({method} {path})", 0)


def store(
    fake: Any,
    channel_id: int,
    body: dict[str, Any],
    *,
    via: str,
    message_id: int | None = None,
    flags: int | None = None,
) -> dict[str, Any]:
    """Create (or, with `message_id`, edit) a bot message and log what the channel shows."""
    editing = message_id is not None
    previous = fake.messages.get(message_id or 0, {})
    new_id = message_id or fake.ids()
    content = body.get("content", previous.get("content", ""))
    if content is None:
        content = ""
    components = body.get("components", previous.get("components", []))
    if components is None:
        components = []
    kept = previous.get("flags", 0)
    given = body.get("flags")
    merged = kept if given is None else (kept & EPHEMERAL) | given
    merged = merged if flags is None else flags
    stored = message(
        new_id,
        channel_id,
        fake.bot_user,
        content,
        guild=not fake.is_dm(channel_id),
        components=components,
        flags=merged,
    )
    fake.messages[new_id] = stored
    fake.posts.append(
        Post(
            channel_id,
            new_id,
            content,
            components,
            merged,
            body.get("allowed_mentions"),
            editing,
            time.monotonic(),
            via,
        )
    )
    return stored


def json_response(payload: Any, status: int = 200) -> web.Response:
    if status == 204:
        return web.Response(status=204)
    # discord.py reads JSON only when the Content-Type is exactly `application/json`.
    body = json.dumps(payload).encode()
    return web.Response(body=body, status=status, headers={"Content-Type": "application/json"})


def rate_limited(retry_after: float) -> web.Response:
    body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
    headers = {
        "Content-Type": "application/json",
        "Via": "1.1 google",  # discord.py takes a 429 without it for a Cloudflare ban
        "Retry-After": str(retry_after),
        "X-RateLimit-Scope": "user",
    }
    return web.Response(body=json.dumps(body).encode(), status=429, headers=headers)
