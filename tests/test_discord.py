"""The Discord edge end to end: discord.py talks REST and a WebSocket gateway to a fake Discord on
127.0.0.1 (tests/fakes/discord_server.py); the core is the real one with the offline model.

Each test dispatches gateway events the way Discord would and asserts on what the bot
posted, edited or answered.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from ipaddress import IPv4Address
from typing import Any

import pytest

from adapters.discord import DiscordConfig, DiscordEdge, RunningDiscord
from bot.app import Lore, open_lore
from bot.events import Identity
from bot.settings import Settings
from storage.processed_events import ProcessedEvents
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.discord_payloads import CHANNEL_ID, THREAD_ID, DcUser
from tests.fakes.discord_server import FakeDiscord, Post

LOOPBACK = IPv4Address("127.0.0.1")
OWNER = DcUser(1001, "Olivia")
ALICE = DcUser(2002, "Alice")
BOB = DcUser(2003, "Bob")
STRANGER = DcUser(3003, "Sam")
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
LOCKER = "Alice's locker code is 4417 and the spare key hangs behind the boiler."


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        for user in (ALICE, BOB, STRANGER):
            server.user(user.id, user.name)
        yield server


@pytest.fixture
def dc_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="discord:1001,console:owner")


@asynccontextmanager
async def discord_edge(
    settings: Settings, fake: FakeDiscord, **overrides: Any
) -> AsyncIterator[tuple[Lore, RunningDiscord]]:
    """The real core plus the Discord edge pointed at the fake."""
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore:
        values: dict[str, Any] = {
            "token": fake.token,
            "api_url": fake.api_url,
            "max_file_bytes": settings.max_file_bytes,
            "owner_ids": frozenset({str(OWNER.id)}),
            "stream_interval": 0.2,
            "guild_ready_timeout": 0.05,
            **overrides,
        }
        edge = DiscordEdge(DiscordConfig(**values), ProcessedEvents(lore.database, "discord"))
        async with edge.running(lore.bot) as running:
            yield lore, running


def shown(post: Post) -> str:
    """What a person reads: the text without markdown's escapes and bold markers."""
    return re.sub(r"\\(.)", r"\1", post.content.replace("**", ""))


def identity(user: DcUser) -> Identity:
    return Identity("discord", str(user.id), user.name)


def send_dm(fake: FakeDiscord, user: DcUser, text: str, **extra: Any) -> dict[str, Any]:
    event = fake.dm(user, text, **extra)
    fake.dispatch("MESSAGE_CREATE", event)
    return event


async def reply_in(
    fake: FakeDiscord, channel_id: int, needle: str, *, count: int = 1
) -> Post:
    """The `count`-th post or edit in a channel that contains `needle`."""

    def matching() -> list[Post]:
        return [post for post in fake.in_channel(channel_id) if needle in post.content]

    await fake.wait_until(lambda: len(matching()) >= count)
    return matching()[count - 1]


async def slash(
    fake: FakeDiscord, user: DcUser, name: str, args: str = "", *, channel_id: int | None = None
) -> Post:
    """`user` runs `/lore name args`; the first message that answers it."""
    event = fake.slash(user, name, args, channel_id=channel_id)
    token = event["token"]
    before = len(fake.calls)
    fake.dispatch("INTERACTION_CREATE", event)
    await fake.wait_until(
        lambda: any(
            token in call.path and call.method in {"POST", "PATCH"} for call in fake.calls[before:]
        )
    )
    call = next(c for c in fake.calls[before:] if token in c.path)
    channel = int(event["channel_id"])
    return next(p for p in reversed(fake.in_channel(channel)) if p.at >= call.at)


async def join(fake: FakeDiscord, user: DcUser) -> None:
    """The invite flow: the owner asks for a code, the newcomer sends `/lore start CODE`."""
    invite = await slash(fake, OWNER, "invite")
    match = re.search(r"/lore start ([A-Za-z0-9_-]+)", invite.content)
    assert match is not None, invite.content
    welcome = await slash(fake, user, "start", match.group(1))
    assert welcome.content.startswith("Welcome"), welcome.content


async def final_answer(fake: FakeDiscord, channel_id: int) -> Post:
    """The first post in a channel that carries the 👍/👎 buttons."""
    return await fake.wait_for_post(
        lambda p: "👍" in dict(p.buttons()), channel_id=channel_id
    )


# -- members: questions ---------------------------------------------------------------------


async def test_a_dm_question_streams_to_a_cited_answer_and_feedback_records_a_row(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        send_dm(fake, ALICE, "When does the office open?")
        dm = fake.dm_channel(ALICE)
        answer = await final_answer(fake, dm)
        assert "8 am" in shown(answer)
        assert "[1]" in shown(answer)
        assert "**Sources**" in answer.content
        assert [label for label, _ in answer.buttons()] == ["👍", "👎"]
        assert fake.of("POST", rf"/channels/{dm}/typing")
        turn_id = dict(answer.buttons())["👍"].split(":")[2]
        fake.dispatch("INTERACTION_CREATE", fake.click(ALICE, answer, "👍"))
        thanks = await reply_in(fake, dm, "Thanks")
        assert thanks.ephemeral
        row = await lore.database.fetch_one(
            "SELECT value FROM feedback WHERE turn_id = ?", (turn_id,)
        )
    assert row is not None
    assert row["value"] == 1
    for post in fake.posts:  # invariant 9: nobody pinged, nothing unfurled
        assert post.suppressed, post
        if not post.edit:
            assert post.allowed_mentions == {"parse": []}, post
