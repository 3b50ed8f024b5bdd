"""The Slack edge end to end: slack-bolt and slack-sdk talk HTTP to a fake Slack on 127.0.0.1
(tests/fakes/slack_server.py), which also sends signed events, commands and taps the way
Slack does; the core is the real one with the offline model.

Each test acts as people in the workspace and asserts on what the bot posted back.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.settings import Settings
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.http_server import ScriptedServer, static
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack, SlackCall
from tests.slack_edge import (
    ALICE,
    BOB,
    CHANNEL,
    OWNER,
    STRANGER,
    final_answer,
    identity,
    in_dm,
    join,
    slack,
    welcome_people,
)

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
LOCKER = "Alice's locker code is 4417 and the spare key hangs behind the boiler."
MESSAGE_METHODS = {"chat.postMessage", "chat.postEphemeral", "chat.startStream"}


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        welcome_people(server)
        yield server


@pytest.fixture
def slack_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="slack:U0OWNER,console:owner")


def no_unfurls(fake: FakeSlack) -> bool:
    """Invariant 9: every message Lore created had link and media unfurls off."""
    created = [call for call in fake.calls if call.method in MESSAGE_METHODS]
    return all(
        str(call.params.get("unfurl_links")) == "False"
        and str(call.params.get("unfurl_media")) == "False"
        for call in created
        if call.method != "chat.postEphemeral"  # ephemerals are never unfurled by Slack
    ) and all(p.body.get("unfurl_links") is False for p in fake.responses)


# -- members: questions ---------------------------------------------------------------------


async def test_a_question_in_a_thread_streams_to_a_cited_answer_and_feedback_records_a_row(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        thread = fake.next_ts()  # an agent-view thread (or any thread in the DM)
        question = run.send.dm_message(ALICE, "When does the office open?", thread_ts=thread)
        response = await run.send.event(question)
        assert response.status_code == 200
        answer = await final_answer(fake, fake.dm(ALICE.id), "*Sources*")
        assert "8 am" in answer.text
        assert "[1]" in answer.text
        assert list(answer.buttons()) == ["👍", "👎"]
        [stream] = fake.of("chat.startStream", channel=fake.dm(ALICE.id))
        assert stream.params["thread_ts"] == thread  # streamed in the thread of the question
        assert stream.params["recipient_user_id"] == ALICE.id
        assert stream.at <= answer.at
        assert answer.method == "chat.update"
        assert answer.params["ts"] == stream.ts  # the streamed message became the answer
        assert fake.of("chat.stopStream", ts=stream.ts)
        statuses = fake.of("assistant.threads.setStatus", channel_id=fake.dm(ALICE.id))
        assert statuses[0].params["status"].startswith("Searching")
        assert statuses[-1].params["status"] == ""  # cleared at the end

        await run.send.action(run.send.tap(ALICE, answer, "👍"))
        thanks = await fake.wait_for("chat.postEphemeral", user=ALICE.id)
        assert "Thanks" in thanks.text
        turn_id = answer.buttons()["👍"][1]
        row = await run.lore.database.fetch_one(
            "SELECT value FROM feedback WHERE turn_id = ?", (turn_id,)
        )
        assert row is not None
        assert row["value"] == 1
    assert no_unfurls(fake)


async def test_a_question_at_the_top_level_is_answered_there_in_one_edited_message(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        before = len(in_dm(fake, ALICE))
        await run.send.event(run.send.dm_message(ALICE, "When does the office open?"))
        answer = await final_answer(fake, fake.dm(ALICE.id), "*Sources*")
    [preview] = in_dm(fake, ALICE)[before:]
    assert preview.text.startswith("⏳ Searching")  # what the agent does, until text comes
    assert preview.params.get("thread_ts") is None  # where the question was
    assert answer.method == "chat.update"
    assert answer.params["ts"] == preview.ts
    assert "8 am" in answer.text
    assert list(answer.buttons()) == ["👍", "👎"]
    assert fake.of("chat.startStream") == []  # Slack streams only replies in a thread
    assert fake.of("assistant.threads.setStatus") == []


async def test_a_stranger_is_refused_without_any_model_call(
    make_settings: SettingsFactory, fake: FakeSlack, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(owners="slack:U0OWNER", llm_base_url=fake_openai.base_url)
    async with slack(settings, fake) as run:
        await run.send.event(run.send.dm_message(STRANGER, "What is the wifi password?"))
        refusal = await fake.wait_for("chat.postMessage", channel=fake.dm(STRANGER.id))
        assert "invited" in refusal.text
        await run.send.slash(run.send.command(STRANGER, "start not-a-code", fake.dm(STRANGER.id)))
        bad = await fake.wait_for("chat.postMessage", channel=fake.dm(STRANGER.id), count=2)
        assert "not valid" in bad.text
        assert await run.lore.bot.user_for(identity(STRANGER)) is None
    assert fake_openai.requests == []
    assert not fake.of("chat.startStream")
    assert len(in_dm(fake, STRANGER)) == 2


async def test_a_mention_in_a_channel_is_answered_in_its_thread_from_shared_knowledge_only(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        bot = f"<@{fake.bot_user_id}>"
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        await remember(run.lore.bot, identity(ALICE), LOCKER, title="Locker")

        chatter = run.send.dm_message(ALICE, "what is my locker code?")
        chatter.update(channel=CHANNEL, channel_type="channel")  # not for the bot
        await run.send.event(chatter)
        mention = run.send.mention(ALICE, f"{bot} what is my locker code?", CHANNEL)
        await run.send.event(mention)
        [answer] = await _posts_in(fake, CHANNEL, 1)
        assert answer.params["thread_ts"] == mention["ts"]
        assert "4417" not in answer.text

        follow_up = run.send.mention(
            ALICE, f"{bot} and when does the office open?", CHANNEL, thread_ts=mention["ts"]
        )
        await run.send.event(follow_up)
        office = await final_answer(fake, CHANNEL, "8 am")
        assert office.method == "chat.postMessage"
        assert office.params["thread_ts"] == mention["ts"]
        assert list(office.buttons()) == ["👍", "👎"]
        assert "*Sources*" in office.text

        await run.send.event(run.send.dm_message(ALICE, "what is my locker code?"))
        private = await final_answer(fake, fake.dm(ALICE.id), "4417")
        assert "_(private)_" in private.text

        link = run.send.mention(ALICE, f"{bot} <https://example.org/page>", CHANNEL)
        await run.send.event(link)
        told = await fake.wait_for("chat.postEphemeral", user=ALICE.id)
        assert "only save what an owner sends" in told.text
        assert told.params["thread_ts"] == link["ts"]
    in_channel = [call for call in fake.calls if call.channel == CHANNEL]
    assert {call.method for call in in_channel} == {"chat.postMessage", "chat.postEphemeral"}
    assert len(fake.of("chat.postMessage", channel=CHANNEL)) == 2  # no previews, one per mention
    assert no_unfurls(fake)


async def _posts_in(fake: FakeSlack, channel: str, count: int) -> list[SlackCall]:
    await fake.wait_until(lambda: len(fake.of("chat.postMessage", channel=channel)) >= count)
    return fake.of("chat.postMessage", channel=channel)


# -- members: sources -----------------------------------------------------------------------

HANDBOOK = (
    "# Travel handbook\n\nBooking trains: every member books second class train tickets "
    "through the Zephyr travel portal at least ten days ahead.\n"
)
PAGE = (
    b"<html><head><title>Parking rules</title></head><body><article><h1>Parking rules</h1>"
    b"<p>Bicycles are parked in the courtyard cage; the cage code is changed every March."
    b" Cars use the underground garage on level minus two.</p></article></body></html>"
)


def _statuses(fake: FakeSlack, channel: str, ts: str) -> list[SlackCall]:
    return fake.of("chat.update", channel=channel, ts=ts)


async def test_a_shared_file_is_downloaded_with_the_bot_token_and_saved_with_one_status(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await join(run, ALICE)
        shared = fake.add_file("F0HANDBOOK", "handbook.md", HANDBOOK.encode(), "text/markdown")
        before = len(in_dm(fake, ALICE))
        upload = run.send.dm_message(ALICE, "", subtype="file_share", files=[shared])
        await run.send.event(upload)
        saved = await fake.wait_for_call(
            lambda c: c.method == "chat.update" and c.text.startswith("✅ Saved")
        )
        statuses = in_dm(fake, ALICE)[before:]
        assert len(statuses) == 1  # one status message, edited in place
        assert saved.params["ts"] == statuses[0].ts
        assert "handbook" in saved.text.lower()
        assert re.search(r"\(\d+ chunks?\)", saved.text)
        assert fake.of("files.info", file="F0HANDBOOK")
        assert fake.downloads == [("F0HANDBOOK", f"Bearer {fake.bot_token}")]

        await run.send.event(run.send.dm_message(ALICE, "How do I book train tickets?"))
        answer = await final_answer(fake, fake.dm(ALICE.id), "Zephyr")
        assert "handbook" in answer.text.lower()


async def test_an_oversized_file_is_refused_before_download_and_an_html_answer_is_an_auth_error(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await join(run, ALICE)
        big = fake.add_file("F0BIG", "big.pdf", b"%PDF-" + b"0" * slack_settings.max_file_bytes)
        await run.send.event(run.send.dm_message(ALICE, "", subtype="file_share", files=[big]))
        refusal = await fake.wait_for_call(lambda c: "I can take files up to" in c.text)
        assert "Nothing was saved" in refusal.text
        assert fake.of("files.info") == []
        assert fake.downloads == []

        page = fake.add_file("F0NOTE", "note.txt", b"The boiler room key is in the red box.")
        fake.refuse_downloads = True
        await run.send.event(run.send.dm_message(ALICE, "", subtype="file_share", files=[page]))
        refused = await fake.wait_for_call(lambda c: "did not let me read that file" in c.text)
        assert refused.method == "chat.update"
        assert await run.lore.bot.sources(identity(ALICE)) == []


async def test_a_link_and_a_shared_message_are_saved_and_the_status_shows_each_step(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    page = {"/parking": static(PAGE, "text/html; charset=utf-8")}
    async with ScriptedServer(routes=page) as web, slack(slack_settings, fake) as run:
        await join(run, ALICE)
        await run.send.event(run.send.dm_message(ALICE, f"<{web.url('/parking')}>"))
        linked = await fake.wait_for_call(
            lambda c: c.method == "chat.update" and c.text.startswith("✅ Saved: *Parking rules*")
        )
        steps = [c.text for c in _statuses(fake, fake.dm(ALICE.id), linked.ts)]
        assert any(step.startswith("⏳") for step in steps)  # fetching, reading...

        share = {
            "is_share": True,
            "author_name": "Bob",
            "channel_name": "general",
            "ts": "1700000000.000001",
            "text": "The fire drill is on Thursday at 10:00 &amp; lasts 20 minutes.",
        }
        await run.send.event(run.send.dm_message(ALICE, "", attachments=[share]))
        await fake.wait_for_call(
            lambda c: c.method == "chat.update" and "Forwarded from Bob" in c.text
        )
        titles = {doc.title for doc in await run.lore.bot.sources(identity(ALICE))}
    assert "Parking rules" in titles
    assert any("fire drill is on Thursday at 10:00 & lasts" in title for title in titles)


async def test_an_owner_chooses_shared_for_a_link_with_buttons(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    page = {"/parking": static(PAGE, "text/html; charset=utf-8")}
    async with ScriptedServer(routes=page) as web, slack(slack_settings, fake) as run:
        await run.send.event(run.send.dm_message(OWNER, f"<{web.url('/parking')}>"))
        question = await fake.wait_for_call(lambda c: "Where should I keep" in c.text)
        assert list(question.buttons()) == ["🔒 Private", "🌐 Shared"]
        await run.send.action(run.send.tap(OWNER, question, "🌐 Shared"))
        saved = await fake.wait_for_call(
            lambda c: c.method == "chat.update" and c.text.startswith("✅")
        )
        assert saved.params["ts"] == question.ts  # the question became the status
        assert "shared knowledge" in saved.text
        stats = await run.lore.bot.maintenance.stats()
    assert stats.shared_documents == 1


# -- owners: approvals ----------------------------------------------------------------------


async def test_an_approval_survives_a_restart_is_refused_to_others_and_decided_once(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await join(run, ALICE)
        await join(run, BOB)
        await run.send.event(
            run.send.dm_message(ALICE, "tell the owner that the printer is broken")
        )
        request = await fake.wait_for_call(
            lambda c: c.method == "chat.postMessage" and "Approval needed" in c.text
        )
        assert request.channel == fake.dm(OWNER.id)
        assert list(request.buttons()) == ["✅ Approve", "❌ Reject"]
        told = await final_answer(fake, fake.dm(ALICE.id), "owner")
        assert told.channel == fake.dm(ALICE.id)
    # The bot process is gone; a new one starts on the same data directory.
    async with slack(slack_settings, fake) as run:
        await run.send.action(run.send.tap(BOB, request, "✅ Approve"))
        not_owner = await fake.wait_for("chat.postEphemeral", user=BOB.id)
        assert not_owner.text == "Only an owner can decide this."
        await run.send.action(run.send.tap(OWNER, request, "✅ Approve"))
        approved = await fake.wait_for("chat.postEphemeral", user=OWNER.id)
        assert approved.text == "Approved."
        edited = await fake.wait_for("chat.update", ts=request.ts)
        assert "*✅ Approved* by Olivia" in edited.text
        assert edited.params["blocks"] == [] or not edited.buttons()
        outcome = await final_answer(fake, fake.dm(ALICE.id), "delivered to the owner")
        assert outcome.method == "chat.postMessage"
        await run.send.action(run.send.tap(OWNER, request, "✅ Approve"))
        again = await fake.wait_for("chat.postEphemeral", user=OWNER.id, count=2)
        assert "already decided" in again.text
        pending = (await run.lore.bot.pending_approvals(identity(OWNER))).cards
    assert pending == ()
    delivered = [c.text for c in in_dm(fake, OWNER) if c.text.startswith("Message from")]
    assert delivered == ["Message from Alice: The printer is broken."]


# -- commands -------------------------------------------------------------------------------


async def test_invite_tells_the_newcomer_what_to_send_and_registers_them_once(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await run.send.slash(run.send.command(ALICE, "invite", fake.dm(ALICE.id)))
        refused = await fake.wait_for("chat.postMessage", channel=fake.dm(ALICE.id))
        assert "invited" in refused.text
        await join(run, ALICE)
        member = await run.lore.bot.user_for(identity(ALICE))
        assert member is not None
        assert member.role.value == "member"
        assert member.display_name == "Alice"  # from users.info
        await run.send.slash(run.send.command(ALICE, "budget", fake.dm(ALICE.id)))
        owners_only = await fake.wait_for("chat.postMessage", channel=fake.dm(ALICE.id), count=3)
        assert owners_only.text == "Only an owner can use /lore budget."


async def test_forget_asks_with_buttons_and_deletes_only_after_the_tap(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await join(run, ALICE)
        await remember(run.lore.bot, identity(ALICE), LOCKER, title="Locker")
        await run.send.slash(
            run.send.command(ALICE, "note The bike shed key is in drawer 3.", fake.dm(ALICE.id))
        )
        await fake.wait_for_call(lambda c: c.channel == fake.dm(ALICE.id) and "✅" in c.text)
        await run.send.slash(run.send.command(ALICE, "sources", fake.dm(ALICE.id)))
        listed = await fake.wait_for_call(lambda c: "Your private documents" in c.text)
        assert "Locker" in listed.text
        assert "bike shed" in listed.text

        await run.send.slash(run.send.command(ALICE, "forget", fake.dm(ALICE.id)))
        confirm = await fake.wait_for_call(lambda c: "cannot be undone" in c.text)
        assert len(await run.lore.bot.sources(identity(ALICE))) == 2  # nothing deleted yet
        await run.send.action(run.send.tap(ALICE, confirm, "🗑 Yes, delete them"))
        done = await fake.wait_for_call(lambda c: "Deleted your 2 private" in c.text)
        assert done.method == "chat.update"
        assert done.params["ts"] == confirm.ts
        assert await run.lore.bot.sources(identity(ALICE)) == []


async def test_in_a_channel_command_replies_are_ephemeral_and_private_ones_refused(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await join(run, ALICE)
        form = run.send.command(ALICE, "sources", CHANNEL)
        await run.send.slash(form)
        told = await fake.wait_for_response(lambda p: p.url == form["response_url"])
        assert told.text == "Send /lore sources to me in a private chat."
        assert told.body["response_type"] == "ephemeral"
        help_form = run.send.command(ALICE, "", CHANNEL)  # `/lore` alone is `/lore help`
        await run.send.slash(help_form)
        helped = await fake.wait_for_response(lambda p: p.url == help_form["response_url"])
        assert "/lore sources" in helped.text
        assert helped.body["response_type"] == "ephemeral"
    assert fake.of("chat.postMessage", channel=CHANNEL) == []


async def test_digest_arrives_once_in_the_direct_message_with_its_ts(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await join(run, ALICE)
        await run.send.slash(
            run.send.command(ALICE, "digest 07:30 Europe/Berlin", fake.dm(ALICE.id))
        )
        await fake.wait_for_call(lambda c: "at 07:30 (Europe/Berlin)" in c.text)
        tomorrow = datetime.now(UTC).astimezone(ZoneInfo("Europe/Berlin")) + timedelta(days=1)
        due = tomorrow.replace(hour=7, minute=30, second=0, microsecond=0)
        assert (await run.lore.bot.maintenance.send_due_digests(due)).sent == 1
        assert (
            await run.lore.bot.maintenance.send_due_digests(due + timedelta(minutes=1))
        ).sent == 0
    [digest] = [c for c in in_dm(fake, ALICE) if "Good morning" in c.text]
    assert digest.text.startswith("*Good morning, Alice!")
