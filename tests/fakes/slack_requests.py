"""What Slack sends to an app, built the way Slack builds it: Events API bodies, slash
commands (form-encoded), `block_actions` payloads (form-encoded JSON), each signed with
HMAC-SHA256 over `v0:{timestamp}:{raw body}` and posted to the app's HTTP endpoint; and
the same payloads as Socket Mode envelopes.

    slack = SlackSender(fake, secret, url)
    await slack.event(slack.dm_message(ALICE, "hello"))
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.fakes.slack_server import FakeSlack, SlackCall

__all__ = ["SlackSender", "SlackUser", "sign"]


@dataclass(frozen=True, slots=True)
class SlackUser:
    """A person in the test workspace."""

    id: str
    name: str


def sign(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """Slack's request-signing headers for `body` (a fresh timestamp unless given)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + stamp.encode() + b":" + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


@dataclass
class SlackSender:
    """Builds and posts signed requests to one app, as Slack would."""

    fake: FakeSlack
    secret: str
    url: str
    client: httpx.AsyncClient | None = None  # one shared client, or a fresh one per request
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # -- payloads ----------------------------------------------------------------------------

    def envelope(self, event: dict[str, Any], event_id: str | None = None) -> dict[str, Any]:
        """An Events API body around `event`."""
        return {
            "token": "legacy-verification-token",
            "team_id": self.fake.team_id,
            "api_app_id": "A0LORE",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [
                {"team_id": self.fake.team_id, "user_id": self.fake.bot_user_id, "is_bot": True}
            ],
        }

    def dm_message(self, user: SlackUser, text: str, **extra: Any) -> dict[str, Any]:
        """A message from `user` in their direct message with the bot."""
        return {
            "type": "message",
            "user": user.id,
            "team": self.fake.team_id,
            "channel": self.fake.dm(user.id),
            "channel_type": "im",
            "text": text,
            "ts": self.fake.next_ts(),
            **extra,
        }

    def mention(
        self, user: SlackUser, text: str, channel: str, thread_ts: str | None = None
    ) -> dict[str, Any]:
        """An `app_mention` in a channel (`text` should contain `<@bot>`)."""
        event = {
            "type": "app_mention",
            "user": user.id,
            "team": self.fake.team_id,
            "channel": channel,
            "text": text,
            "ts": self.fake.next_ts(),
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    def command(self, user: SlackUser, text: str, channel: str) -> dict[str, str]:
        """A `/lore` slash command with a fresh `response_url`."""
        key = f"cmd{next(self._ids)}"
        return {
            "token": "legacy-verification-token",
            "team_id": self.fake.team_id,
            "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "general",
            "user_id": user.id,
            "user_name": user.name.lower(),
            "command": "/lore",
            "text": text,
            "api_app_id": "A0LORE",
            "response_url": self.fake.response_url(key),
            "trigger_id": f"trigger.{key}",
        }

    def tap(self, user: SlackUser, message: SlackCall, label: str) -> dict[str, Any]:
        """`user` taps the button labelled `label` under a message the bot posted."""
        action_id, value = message.buttons()[label]
        return self.action_payload(user, message.channel, message.ts, action_id, value)

    def action_payload(
        self,
        user: SlackUser,
        channel: str,
        message_ts: str,
        action_id: str,
        value: str,
        *,
        ephemeral: bool = False,
    ) -> dict[str, Any]:
        """A `block_actions` payload for one button."""
        key = f"act{next(self._ids)}"
        container = {"type": "message", "message_ts": message_ts, "channel_id": channel}
        container["is_ephemeral"] = ephemeral  # type: ignore[assignment]
        payload: dict[str, Any] = {
            "type": "block_actions",
            "user": {
                "id": user.id,
                "username": user.name.lower(),
                "name": user.name.lower(),
                "team_id": self.fake.team_id,
            },
            "api_app_id": "A0LORE",
            "team": {"id": self.fake.team_id, "domain": "lore-test"},
            "container": container,
            "channel": {"id": channel, "name": "directmessage"},
            "trigger_id": f"trigger.{key}",
            "response_url": self.fake.response_url(key),
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "b1",
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        if not ephemeral:
            payload["message"] = {"type": "message", "ts": message_ts, "user": "U0LOREBOT"}
        return payload

    # -- posting -----------------------------------------------------------------------------

    async def post(
        self,
        body: bytes,
        content_type: str,
        *,
        timestamp: int | None = None,
        secret: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """POST a raw body, signed (with the right secret unless another is given)."""
        signed = sign(secret or self.secret, body, timestamp)
        all_headers = {"Content-Type": content_type, **signed, **(headers or {})}
        if self.client is not None:
            return await self.client.post(self.url, content=body, headers=all_headers)
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(self.url, content=body, headers=all_headers)

    async def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry: int | None = None
    ) -> httpx.Response:
        """Deliver an event (a retry carries `X-Slack-Retry-Num`, as Slack's do)."""
        return await self.event_body(self.envelope(event, event_id), retry=retry)

    async def event_body(self, body: dict[str, Any], *, retry: int | None = None) -> httpx.Response:
        headers = {}
        if retry is not None:
            headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        raw = json.dumps(body).encode()
        return await self.post(raw, "application/json", headers=headers)

    async def slash(self, form: dict[str, str]) -> httpx.Response:
        return await self.post(urlencode(form).encode(), "application/x-www-form-urlencoded")

    async def action(self, payload: dict[str, Any]) -> httpx.Response:
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.post(body, "application/x-www-form-urlencoded")
