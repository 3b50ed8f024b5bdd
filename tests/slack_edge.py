"""Running the real Slack edge against the fake Slack in tests: the core with the offline
model, the edge in HTTP mode (or Socket Mode) on 127.0.0.1, and the people of the test
workspace; plus the invite flow and helpers to read what the bot posted."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any

from adapters.slack import RunningSlack, SlackConfig, SlackEdge
from bot.app import Lore, open_lore
from bot.events import Identity
from bot.settings import Settings
from storage.processed_events import ProcessedEvents
from tests.fakes.slack_requests import SlackSender, SlackUser
from tests.fakes.slack_server import FakeSlack, SlackCall

__all__ = [
    "ALICE",
    "BOB",
    "CHANNEL",
    "OWNER",
    "SECRET",
    "STRANGER",
    "SlackRun",
    "final_answer",
    "identity",
    "in_dm",
    "join",
    "slack",
    "slack_on",
    "welcome_people",
]

LOOPBACK = IPv4Address("127.0.0.1")
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # noqa: S105 - a test signing secret
OWNER = SlackUser("U0OWNER", "Olivia")
ALICE = SlackUser("U0ALICE", "Alice")
BOB = SlackUser("U0BOB", "Bob")
STRANGER = SlackUser("U0SAM", "Sam")
CHANNEL = "C0TEAM"


def welcome_people(fake: FakeSlack) -> None:
    """The workspace's people, as `users.info` tells them."""
    for user in (OWNER, ALICE, BOB, STRANGER):
        fake.add_user(user.id, user.name)


def identity(user: SlackUser) -> Identity:
    return Identity("slack", user.id, user.name)


@dataclass
class SlackRun:
    """A running core with its Slack edge, and Slack's side of the conversation."""

    lore: Lore
    edge: RunningSlack
    fake: FakeSlack
    send: SlackSender


@asynccontextmanager
async def slack_on(lore: Lore, fake: FakeSlack, **overrides: Any) -> AsyncIterator[SlackRun]:
    """The Slack edge (HTTP mode unless an `app_token` is given) on a running core."""
    values: dict[str, Any] = {
        "bot_token": fake.bot_token,
        "max_file_bytes": lore.settings.max_file_bytes,
        "signing_secret": SECRET,
        "port": 0,
        "api_url": fake.api_url,
        "stream_interval": 0.2,
        "ping_interval": 1.0,
        **overrides,
    }
    edge = SlackEdge(SlackConfig(**values), ProcessedEvents(lore.database, "slack"))
    async with edge.running(lore.bot) as running:
        port = running.http.port if running.http is not None else 0
        sender = SlackSender(fake, SECRET, f"http://127.0.0.1:{port}/slack/events")
        yield SlackRun(lore, running, fake, sender)


@asynccontextmanager
async def slack(settings: Settings, fake: FakeSlack, **overrides: Any) -> AsyncIterator[SlackRun]:
    """The real core plus the Slack edge."""
    async with (
        open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore,
        slack_on(lore, fake, **overrides) as run,
    ):
        yield run


def in_dm(fake: FakeSlack, user: SlackUser, method: str = "chat.postMessage") -> list[SlackCall]:
    return fake.of(method, channel=fake.dm(user.id))


async def join(run: SlackRun, user: SlackUser) -> None:
    """The invite flow: the owner runs `/lore invite`, the newcomer `/lore start CODE`."""
    fake, send = run.fake, run.send
    before = len(in_dm(fake, OWNER))
    await send.slash(send.command(OWNER, "invite", fake.dm(OWNER.id)))
    await fake.wait_until(lambda: len(in_dm(fake, OWNER)) > before)
    invite = in_dm(fake, OWNER)[before]
    match = re.search(r"`/lore start ([A-Za-z0-9_-]+)`", invite.text)
    assert match is not None, invite.text
    seen = len(in_dm(fake, user))
    await send.slash(send.command(user, f"start {match.group(1)}", fake.dm(user.id)))
    await fake.wait_until(lambda: len(in_dm(fake, user)) > seen)
    assert in_dm(fake, user)[seen].text.startswith("Welcome"), in_dm(fake, user)[seen].text


async def final_answer(fake: FakeSlack, channel: str, containing: str) -> SlackCall:
    """The first post or edit in `channel` whose text has `containing`."""
    return await fake.wait_for_call(
        lambda call: (
            call.method in {"chat.postMessage", "chat.update"}
            and call.channel == channel
            and containing in call.text
        )
    )
