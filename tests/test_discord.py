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
from adapters.discord.markdown import render_final, units
from bot.app import Lore, open_lore
from bot.events import CitationEvent, Identity
from bot.settings import Settings
from bot.turn_view import FinalAnswer, FinalKind
from storage.processed_events import ProcessedEvents
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.discord_payloads import CHANNEL_ID, THREAD_ID, DcUser
from tests.fakes.discord_server import FakeDiscord, Post
from tests.fakes.http_server import ScriptedServer, static
from tests.fakes.openai_server import FakeOpenAI

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


async def reply_in(fake: FakeDiscord, channel_id: int, needle: str, *, count: int = 1) -> Post:
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
    return await fake.wait_for_post(lambda p: "👍" in dict(p.buttons()), channel_id=channel_id)


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
        assert answer.edit  # the preview message, streamed then edited into the answer
        [preview] = [p for p in fake.in_channel(dm) if p.message_id == answer.message_id][:1]
        assert not preview.edit
        assert not preview.buttons()
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


async def test_a_stranger_gets_one_polite_message_and_no_model_call(
    make_settings: SettingsFactory, fake: FakeDiscord, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(owners="discord:1001", llm_base_url=fake_openai.base_url)
    async with discord_edge(settings, fake) as (lore, _):
        send_dm(fake, STRANGER, "What is the wifi password?")
        dm = fake.dm_channel(STRANGER)
        refusal = await reply_in(fake, dm, "invited")
        bad_code = await slash(fake, STRANGER, "start", "not-a-real-code")
        assert "not valid" in shown(bad_code)
        assert await lore.bot.user_for(identity(STRANGER)) is None
    assert fake_openai.requests == []
    assert not refusal.buttons()
    assert len(fake.in_channel(dm)) == 2


# -- servers --------------------------------------------------------------------------------


async def test_a_server_mention_is_answered_in_a_thread_from_shared_knowledge_only(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        await remember(lore.bot, identity(ALICE), LOCKER, title="Locker")

        fake.dispatch(
            "MESSAGE_CREATE", fake.in_server(ALICE, "what is my locker code?", mention=False)
        )
        asked = fake.in_server(ALICE, "what is my locker code?")
        fake.dispatch("MESSAGE_CREATE", asked)
        thread_id = int(asked["id"])  # a thread started on a message has its id
        answer = await fake.wait_for_post(channel_id=thread_id)  # a refusal: no source
        assert "4417" not in answer.content
        [opened] = fake.of("POST", r"/channels/\d+/messages/\d+/threads")
        assert opened.path == f"/channels/{CHANNEL_ID}/messages/{asked['id']}/threads"
        assert fake.in_channel(CHANNEL_ID) == []  # nothing posted in the channel itself
        assert [p for p in fake.in_channel(thread_id) if not p.edit] == [answer]  # final only

        bot_message = fake.messages[answer.message_id]
        follow_up = fake.in_server(
            ALICE, "and when does the office open?", mention=False, reply_to=bot_message
        )
        follow_up["channel_id"] = str(thread_id)
        fake.dispatch("MESSAGE_CREATE", follow_up)
        replied = await fake.wait_for_post(lambda p: "8 am" in shown(p), channel_id=thread_id)
        assert "👍" in dict(replied.buttons())

        fake.dispatch(
            "MESSAGE_CREATE",
            fake.in_server(ALICE, "when does the office close?", channel_id=THREAD_ID),
        )
        in_thread = await fake.wait_for_post(lambda p: "6 pm" in shown(p), channel_id=THREAD_ID)
        assert in_thread.channel_id == THREAD_ID
        assert len(fake.of("POST", r"/channels/\d+/messages/\d+/threads")) == 1

        send_dm(fake, ALICE, "what is my locker code?")
        private = await fake.wait_for_post(
            lambda p: "4417" in shown(p), channel_id=fake.dm_channel(ALICE)
        )
        assert "(private)" in shown(private)

        fake.dispatch("MESSAGE_CREATE", fake.in_server(ALICE, "https://example.org/page"))
        told = await reply_in(fake, CHANNEL_ID, "only save what an owner sends")
        assert not told.edit


async def test_private_commands_in_a_server_say_ask_me_in_a_dm_ephemerally(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake):
        await join(fake, ALICE)
        sources = await slash(fake, ALICE, "sources", channel_id=CHANNEL_ID)
        assert shown(sources) == "Send /lore sources to me in a private chat."
        assert sources.ephemeral
        helped = await slash(fake, ALICE, "help", channel_id=CHANNEL_ID)
        assert "/lore note TEXT" in shown(helped)
        assert helped.ephemeral


# -- sources from a DM ----------------------------------------------------------------------

HANDBOOK = (
    "# Travel handbook\n\nBooking trains: every member books second class train tickets "
    "through the Zephyr travel portal at least ten days ahead.\n"
)
PAGE = (
    b"<html><head><title>Parking rules</title></head><body><article><h1>Parking rules</h1>"
    b"<p>Bicycles are parked in the courtyard cage; the cage code is changed every March."
    b" Cars use the underground garage on level minus two.</p></article></body></html>"
)


async def test_an_attachment_and_a_link_are_saved_with_one_status_message_and_found_next(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    page = {"/parking": static(PAGE, "text/html; charset=utf-8")}
    async with ScriptedServer(routes=page) as web, discord_edge(dc_settings, fake) as (lore, _):
        await join(fake, ALICE)
        dm = fake.dm_channel(ALICE)
        before = len(fake.in_channel(dm))
        attachment = fake.attachment("handbook.md", HANDBOOK.encode())
        send_dm(fake, ALICE, "", attachments=[attachment])
        saved = await reply_in(fake, dm, "Saved")
        statuses = [p for p in fake.in_channel(dm)[before:] if not p.edit]
        assert len(statuses) == 1  # one status message, edited in place
        assert saved.message_id == statuses[0].message_id
        assert re.search(r"\(\d+ chunks?\)", shown(saved))

        send_dm(fake, ALICE, web.url("/parking"))
        linked = await fake.wait_for_post(
            lambda p: p.content.startswith("✅") and "Parking rules" in p.content, channel_id=dm
        )
        steps = [p.content for p in fake.in_channel(dm) if p.message_id == linked.message_id]
        # One message: "received" at once, then progress (fetching, reading...; throttled, so
        # a fast save may skip it), then the outcome, all edits of the same message.
        assert steps[0].startswith("📥")
        assert steps[-1].startswith("✅")

        send_dm(fake, ALICE, "How do I book train tickets?")
        answer = await fake.wait_for_post(lambda p: "Zephyr" in shown(p), channel_id=dm)
        assert "handbook" in shown(answer).lower()
        again = fake.attachment("handbook-again.md", HANDBOOK.encode())
        send_dm(fake, ALICE, "", attachments=[again])
        duplicate = await reply_in(fake, dm, "Already saved")
        assert duplicate.edit
        titles = {doc.title for doc in await lore.bot.sources(identity(ALICE))}
    assert "Parking rules" in titles


async def test_an_oversized_attachment_is_refused_before_any_download(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await join(fake, ALICE)
        big = fake.attachment("big.pdf", b"%PDF", size=dc_settings.max_file_bytes + 1)
        send_dm(fake, ALICE, "", attachments=[big])
        refusal = await reply_in(fake, fake.dm_channel(ALICE), "I can take files up to")
        assert "Nothing was saved" in refusal.content
        lying = fake.attachment("lying.md", b"x" * (dc_settings.max_file_bytes + 10), size=10)
        send_dm(fake, ALICE, "", attachments=[lying])
        capped = await reply_in(fake, fake.dm_channel(ALICE), "Nothing was saved", count=2)
        assert capped.edit  # refused while downloading: more bytes came than announced
        assert await lore.bot.sources(identity(ALICE)) == []
    assert fake.downloads == ["lying.md"]  # the announced size was checked first


async def test_an_owner_chooses_private_or_shared_with_buttons(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        dm = fake.dm_channel(OWNER)
        attachment = fake.attachment("handbook.md", HANDBOOK.encode())
        send_dm(fake, OWNER, "", attachments=[attachment])
        question = await reply_in(fake, dm, "Where should I keep")
        assert [label for label, _ in question.buttons()] == ["🔒 Private", "🌐 Shared"]
        fake.dispatch("INTERACTION_CREATE", fake.click(OWNER, question, "🌐 Shared"))
        saved = await reply_in(fake, dm, "shared knowledge")
        assert saved.message_id == question.message_id
        assert saved.buttons() == []
        stats = await lore.bot.maintenance.stats()
    assert stats.shared_documents == 1


# -- rendering ------------------------------------------------------------------------------


def test_a_long_answer_splits_at_2000_without_breaking_formatting() -> None:
    citation = CitationEvent(1, "d1", "Guide *one*", "https://example.org/a_(b)", private=False)
    sentence = "Read **this part [1]** and `code_x` & *stars* _under_ @everyone <@1> 🎉. "
    final = FinalAnswer(sentence * 120, (citation,), FinalKind.ANSWER, False, "t1")
    parts = render_final(final)
    assert len(parts) > 1
    for part in parts:
        assert units(part) <= 2000
        assert part.count("**") % 2 == 0, part
        assert part.count("`") % 2 == 0, part
        assert "@everyone" not in part.replace("\\@everyone", "")
    whole = "".join(parts)
    assert "[\\[1\\]](<https://example.org/a_%28b%29>)" in whole  # [1], linked
    assert "[Guide \\*one\\*](<https://example.org/a_%28b%29>)" in whole


def test_a_url_in_an_answer_is_a_link_only_if_cited_or_asked() -> None:
    final = FinalAnswer(
        "See https://evil.example/x?d=secret and https://asked.example/p.",
        (),
        FinalKind.ANSWER,
        False,
        None,
    )
    [text] = render_final(final, asked="what is on https://asked.example/p ?")
    assert "`https://evil.example/x?d=secret`" in text
    assert "<https://asked.example/p>" in text
