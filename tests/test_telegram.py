"""The Telegram edge end to end: python-telegram-bot talks HTTP to a fake Bot API server on
127.0.0.1 (tests/fakes/telegram_server.py); the core is the real one with the offline model.

Each test sends updates the way Telegram would and asserts on what the bot sent back.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from ipaddress import IPv4Address
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from adapters.telegram import RunningTelegram, TelegramConfig, TelegramEdge
from adapters.telegram.rendering import split_html, visible_length
from bot.app import Lore, open_lore
from bot.settings import Settings
from storage.digests import DigestRepository
from storage.processed_events import ProcessedEvents
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.http_server import ScriptedServer, static
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import ApiCall, FakeTelegram, TgChat, TgUser

LOOPBACK = IPv4Address("127.0.0.1")
OWNER = TgUser(1001, "Olivia", "olivia")
ALICE = TgUser(2002, "Alice", "alice")
BOB = TgUser(2003, "Bob")
STRANGER = TgUser(3003, "Sam")
GROUP = TgChat(-500, "supergroup", "Team")
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
SECRET = "s3cret-token-for-the-webhook"  # noqa: S105 - a test secret


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
def tg_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="telegram:1001,console:owner")


@asynccontextmanager
async def telegram(
    settings: Settings, fake: FakeTelegram, **overrides: Any
) -> AsyncIterator[tuple[Lore, RunningTelegram]]:
    """The real core plus the Telegram edge pointed at the fake."""
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore:
        values: dict[str, Any] = {
            "token": fake.token,
            "api_root": fake.api_root,
            "max_file_bytes": settings.max_file_bytes,
            "owner_ids": frozenset({str(OWNER.id)}),
            "stream_interval": 0.2,
            "poll_timeout": 1.0,
            **overrides,
        }
        config = TelegramConfig(**values)
        edge = TelegramEdge(config, ProcessedEvents(lore.database, "telegram"))
        async with edge.running(lore.bot) as running:
            yield lore, running


def html_parts(call: ApiCall) -> str:
    return call.text


async def send(fake: FakeTelegram, user: TgUser, text: str, **kwargs: Any) -> dict[str, Any]:
    update = fake.message(user, text, **kwargs)
    fake.enqueue(update)
    return update


async def final_answer(fake: FakeTelegram, chat_id: int, count: int = 1) -> ApiCall:
    """The `count`-th final (HTML) message or edit in a chat."""

    def finals() -> list[ApiCall]:
        return [
            call
            for call in fake.calls
            if call.method in {"sendMessage", "editMessageText"}
            and call.chat_id == chat_id
            and call.params.get("parse_mode") == "HTML"
        ]

    await fake.wait_until(lambda: len(finals()) >= count)
    return finals()[count - 1]


async def join(fake: FakeTelegram, user: TgUser) -> None:
    """The invite flow: the owner asks for a link, the newcomer opens it."""
    before = len(fake.of("sendMessage", chat_id=OWNER.id))
    await send(fake, OWNER, "/invite")
    reply = await fake.wait_for("sendMessage", chat_id=OWNER.id, count=before + 1)
    match = re.search(r"https://t\.me/lore_test_bot\?start=([A-Za-z0-9_-]+)", reply.text)
    assert match is not None, reply.text
    seen = len(fake.of("sendMessage", chat_id=user.id))
    await send(fake, user, f"/start {match.group(1)}")
    welcome = await fake.wait_for("sendMessage", chat_id=user.id, count=seen + 1)
    assert welcome.text.startswith("Welcome"), welcome.text


async def tap(fake: FakeTelegram, user: TgUser, call: ApiCall, label: str) -> ApiCall:
    """`user` taps the button labelled `label` under the message `call` sent; the answer."""
    data = dict(call.buttons())[label]
    update = fake.callback(user, call, data)
    fake.enqueue(update)
    query_id = update["callback_query"]["id"]
    return await fake.wait_for("answerCallbackQuery", callback_query_id=query_id)


# -- members: questions ---------------------------------------------------------------------


async def test_a_question_streams_to_a_cited_answer_and_feedback_records_a_row(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        await send(fake, ALICE, "When does the office open?")
        answer = await final_answer(fake, ALICE.id)
        assert "8 am" in answer.text
        assert "[1]" in answer.text
        assert "<b>Sources</b>" in answer.text
        assert [label for label, _ in answer.buttons()] == ["👍", "👎"]
        drafts = fake.of("sendMessageDraft", chat_id=ALICE.id)
        assert drafts, "the answer was not previewed while it streamed"
        assert drafts[0].at <= answer.at

        reply = await tap(fake, ALICE, answer, "👍")
        assert "Thanks" in reply.params["text"]
        turn_id = dict(answer.buttons())["👍"].split(":")[1]
        row = await lore.database.fetch_one(
            "SELECT value FROM feedback WHERE turn_id = ?", (turn_id,)
        )
        assert row is not None
        assert row["value"] == 1


async def test_an_unknown_user_is_refused_without_any_model_call(
    make_settings: SettingsFactory, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(owners="telegram:1001", llm_base_url=fake_openai.base_url)
    async with telegram(settings, fake) as (lore, _):
        await send(fake, STRANGER, "What is the wifi password?")
        refusal = await fake.wait_for("sendMessage", chat_id=STRANGER.id)
        assert "invited" in refusal.text
        await send(fake, STRANGER, "/start not-a-real-code")
        bad_code = await fake.wait_for("sendMessage", chat_id=STRANGER.id, count=2)
        assert "not valid" in bad_code.text
        assert await lore.bot.user_for(_identity(STRANGER)) is None
    assert fake_openai.requests == []
    assert not fake.of("sendMessageDraft", chat_id=STRANGER.id)
    assert len(fake.of("sendMessage", chat_id=STRANGER.id)) == 2


async def test_typing_shows_while_a_slow_answer_is_on_its_way(
    make_settings: SettingsFactory, fake: FakeTelegram, fake_openai: FakeOpenAI
) -> None:
    settings = make_settings(
        owners="telegram:1001,console:owner", llm_base_url=fake_openai.base_url
    )
    fake_openai.enqueue_text("The office opens at 8 am [1].", hold_after=0)
    async with telegram(settings, fake) as (lore, _):
        await remember(lore.bot, None, "Office hours: the office opens at 8 am on weekdays.")
        await join(fake, ALICE)
        await send(fake, ALICE, "When does the office open?")
        # The model has not said a word yet: past the delay, the chat shows "typing…", and
        # at most what Lore is doing ("⏳ Searching ...").
        await fake.wait_for("sendChatAction", chat_id=ALICE.id, action="typing")
        drafts = [c.text for c in fake.of("sendMessageDraft", chat_id=ALICE.id)]
        assert all(text.startswith("⏳") for text in drafts)
        fake_openai.release()
        answer = await final_answer(fake, ALICE.id)
        assert "8 am" in answer.text


async def test_invite_deep_link_registers_a_member_once(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await send(fake, ALICE, "/invite")
        refused = await fake.wait_for("sendMessage", chat_id=ALICE.id)
        assert "invited" in refused.text  # not even a member yet
        await join(fake, ALICE)
        member = await lore.bot.user_for(_identity(ALICE))
        assert member is not None
        assert member.role.value == "member"
        await send(fake, ALICE, "/budget")
        owners_only = await fake.wait_for("sendMessage", chat_id=ALICE.id, count=3)
        assert "Only an owner" in owners_only.text


def _identity(user: TgUser) -> Any:
    from bot.events import Identity  # noqa: PLC0415 - keeps the test header short

    return Identity("telegram", str(user.id), user.first_name)


# -- owners: approvals ----------------------------------------------------------------------


async def test_an_approval_survives_a_restart_and_runs_once(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (_, _edge):
        await join(fake, ALICE)
        await join(fake, BOB)
        await send(fake, ALICE, "tell the owner that the printer is broken")
        request = await fake.wait_until_call(
            lambda call: (
                call.method == "sendMessage"
                and call.chat_id == OWNER.id
                and "Approval needed" in call.text
            )
        )
        told = await final_answer(fake, ALICE.id)
        assert "owner" in told.text.lower()
    # The bot process is gone; a new one starts on the same data directory.
    async with telegram(tg_settings, fake) as (lore, _edge):
        not_owner = await tap(fake, BOB, request, "✅ Approve")
        assert "Only an owner" in not_owner.params["text"]
        approved = await tap(fake, OWNER, request, "✅ Approve")
        assert approved.params["text"] == "Approved."
        edited = await fake.wait_for(
            "editMessageText", chat_id=OWNER.id, message_id=request.result["message_id"]
        )
        assert "Approved</b> by Olivia" in edited.text
        outcome = await final_answer(fake, ALICE.id, count=2)
        assert "delivered to the owner" in outcome.text
        again = await tap(fake, OWNER, request, "✅ Approve")
        assert "already decided" in again.params["text"]
        pending = (await lore.bot.pending_approvals(_identity(OWNER))).cards
    assert pending == ()
    delivered = [
        call
        for call in fake.of("sendMessage", chat_id=OWNER.id)
        if call.text.startswith("Message from")
    ]
    assert [call.text for call in delivered] == ["Message from Alice: The printer is broken."]


# -- members: sources from the chat ---------------------------------------------------------

HANDBOOK = (
    "# Travel handbook\n\nBooking trains: every member books second class train tickets "
    "through the Zephyr travel portal at least ten days ahead.\n"
)
PAGE = (
    b"<html><head><title>Parking rules</title></head><body><article><h1>Parking rules</h1>"
    b"<p>Bicycles are parked in the courtyard cage; the cage code is changed every March."
    b" Cars use the underground garage on level minus two.</p></article></body></html>"
)


def status_of(fake: FakeTelegram, chat_id: int, message_id: int) -> list[ApiCall]:
    """Every edit of one status message."""
    return fake.of("editMessageText", chat_id=chat_id, message_id=message_id)


async def test_a_document_and_a_link_are_ingested_with_one_status_message_and_found_next(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    page = {"/parking": static(PAGE, "text/html; charset=utf-8")}
    async with ScriptedServer(routes=page) as web, telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        fake.add_file("doc-1", HANDBOOK.encode(), "documents/handbook.md")
        document = {
            "file_id": "doc-1",
            "file_unique_id": "u-doc-1",
            "file_name": "handbook.md",
            "mime_type": "text/markdown",
            "file_size": len(HANDBOOK),
        }
        sent_before = len(fake.of("sendMessage", chat_id=ALICE.id))
        fake.enqueue(fake.message(ALICE, None, document=document))
        saved = await fake.wait_until_call(
            lambda c: c.method == "editMessageText" and "Saved" in c.text and c.chat_id == ALICE.id
        )
        statuses = fake.of("sendMessage", chat_id=ALICE.id)[sent_before:]
        assert len(statuses) == 1  # one status message, edited in place
        assert saved.params["message_id"] == str(statuses[0].result["message_id"])
        assert "handbook" in saved.text.lower()
        assert "(1 chunk)" in saved.text
        assert fake.of("getFile", file_id="doc-1")

        await send(fake, ALICE, web.url("/parking"))
        linked = await fake.wait_until_call(
            lambda c: (
                c.method == "editMessageText"
                and c.text.startswith("✅")
                and "Parking rules" in c.text
            )
        )
        progress = status_of(fake, ALICE.id, int(linked.params["message_id"]))
        assert any(step.text.startswith("⏳") for step in progress)  # fetching, reading...

        await send(fake, ALICE, "How do I book train tickets?")
        answer = await final_answer_containing(fake, ALICE.id, "Zephyr")
        assert "handbook" in answer.text.lower()
        sources = await lore.bot.sources(_identity(ALICE))
        assert {doc.title for doc in sources} >= {"Parking rules"}


async def test_an_oversized_file_and_an_ssrf_link_are_refused_politely(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        too_big = tg_settings.max_file_bytes + 1
        document = {"file_id": "big", "file_unique_id": "u-big", "file_name": "big.pdf"}
        fake.enqueue(fake.message(ALICE, None, document={**document, "file_size": too_big}))
        refusal = await fake.wait_until_call(
            lambda c: c.chat_id == ALICE.id and "I can take files up to" in c.text
        )
        assert "Nothing was saved" in refusal.text
        await send(fake, ALICE, "http://169.254.169.254/latest/meta-data/")
        refused = await fake.wait_until_call(
            lambda c: c.method == "editMessageText" and c.text.startswith("🚫")
        )
        assert "Traceback" not in refused.text
        assert len(refused.text) > 10
        assert await lore.bot.sources(_identity(ALICE)) == []
    assert fake.of("getFile") == []  # the size was checked before any download


async def test_row_j_a_download_is_capped_while_it_streams_whatever_getfile_reported(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    data = b"x" * (32 * 1024 * 1024)
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        fake.add_file("liar", data, "documents/notes.txt", reported_size=1000)
        document = {
            "file_id": "liar",
            "file_unique_id": "u-liar",
            "file_name": "notes.txt",
            "file_size": 1000,
        }
        fake.enqueue(fake.message(ALICE, None, document=document))
        refusal = await fake.wait_until_call(
            lambda c: c.chat_id == ALICE.id and "I can take files up to" in c.text
        )
        assert "Nothing was saved" in refusal.text
        assert await lore.bot.sources(_identity(ALICE)) == []
    assert fake.of("getFile", file_id="liar")
    # The download stopped soon after the cap, not at the end of the 32 MB.
    assert fake.downloaded["documents/notes.txt"] < len(data) // 4


async def _member(lore: Lore, user: TgUser) -> Any:
    member = await lore.bot.user_for(_identity(user))
    assert member is not None
    return member


async def final_answer_containing(fake: FakeTelegram, chat_id: int, text: str) -> ApiCall:
    return await fake.wait_until_call(
        lambda c: c.chat_id == chat_id and c.params.get("parse_mode") == "HTML" and text in c.text
    )


# -- group chats ----------------------------------------------------------------------------

LOCKER = "Alice's locker code is 4417 and the spare key hangs behind the boiler."


async def test_group_chat_answers_only_when_mentioned_or_replied_to_and_uses_shared_knowledge(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        await remember(lore.bot, _identity(ALICE), LOCKER, title="Locker")

        await send(fake, ALICE, "what is my locker code?", chat=GROUP)
        await send(fake, ALICE, "@lore_test_bot what is my locker code?", chat=GROUP)
        group_answer = await final_answer(fake, GROUP.id)
        assert "4417" not in group_answer.text
        question_ids = {
            str(call.params.get("reply_parameters", {}).get("message_id"))
            for call in fake.calls
            if call.chat_id == GROUP.id and call.method == "sendMessage"
        }
        assert len(question_ids) == 1  # only the mentioned message was answered

        bot_message = group_answer.result
        fake.enqueue(
            fake.message(
                ALICE, "and when does the office open?", chat=GROUP, reply_to_message=bot_message
            )
        )
        replied = await final_answer_containing(fake, GROUP.id, "8 am")
        assert replied.chat_id == GROUP.id
        assert not fake.of("sendMessageDraft", chat_id=GROUP.id)  # drafts are private-only

        await send(fake, ALICE, "what is my locker code?")
        private_answer = await final_answer_containing(fake, ALICE.id, "4417")
        assert "(private)" in private_answer.text

        await send(fake, ALICE, "@lore_test_bot https://example.org/page", chat=GROUP)
        told = await fake.wait_until_call(
            lambda c: c.chat_id == GROUP.id and "only save what an owner sends" in c.text
        )
        assert told.method == "sendMessage"


# -- limits and delivery --------------------------------------------------------------------


# PTB 22 itself warns that `RetryAfter.retry_after` will become a timedelta.
@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")
async def test_a_429_retry_after_is_waited_out_not_dropped(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake):
        await join(fake, ALICE)
        fake.fail_next("sendMessage", retry_after=1)
        await send(fake, ALICE, "/link")
        await fake.wait_until(lambda: len(replies(fake, ALICE.id, LINK_REPLY)) == 2)
    first, second = replies(fake, ALICE.id, LINK_REPLY)  # refused with 429, then sent again
    assert second.at - first.at >= 1.0


LINK_REPLY = "Linking accounts"


def replies(fake: FakeTelegram, chat_id: int, needle: str) -> list[ApiCall]:
    """Messages sent to a chat that contain `needle`."""
    return [c for c in fake.of("sendMessage", chat_id=chat_id) if needle in c.text]


async def test_a_redelivered_update_is_not_answered_twice_even_after_a_restart(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        question = await send(fake, ALICE, "When does the office open?")
        await final_answer(fake, ALICE.id)
        fake.redeliver(question)
        await send(fake, ALICE, "/link")  # handled after the redelivered update
        await fake.wait_until(lambda: len(replies(fake, ALICE.id, LINK_REPLY)) == 1)
    async with telegram(tg_settings, fake):
        fake.redeliver(question)
        await send(fake, ALICE, "/link")
        await fake.wait_until(lambda: len(replies(fake, ALICE.id, LINK_REPLY)) == 2)
    finals = [c for c in fake.calls if c.chat_id == ALICE.id and "8 am" in c.text]
    assert len(finals) == 1


# -- commands -------------------------------------------------------------------------------


async def test_sources_forget_with_confirmation_and_owner_commands(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        registered = await fake.wait_for("setMyCommands")
        assert {c["command"] for c in registered.params["commands"]} >= {"start", "sources"}
        owner_menu = await fake.wait_for("setMyCommands", count=2)
        assert {c["command"] for c in owner_menu.params["commands"]} >= {"invite", "budget"}
        await join(fake, ALICE)
        await remember(lore.bot, _identity(ALICE), LOCKER, title="Locker")
        await send(fake, ALICE, "/note The bike shed key is in drawer 3.")
        await fake.wait_until_call(lambda c: c.chat_id == ALICE.id and c.text.startswith("✅"))

        await send(fake, ALICE, "/sources")
        listed = await fake.wait_until_call(lambda c: "Your private documents" in c.text)
        assert "Locker" in listed.text
        assert "bike shed" in listed.text

        await send(fake, ALICE, "/forget")
        confirm = await fake.wait_until_call(lambda c: "cannot be undone" in c.text)
        assert len(await lore.bot.sources(_identity(ALICE))) == 2  # nothing deleted before the tap
        await tap(fake, ALICE, confirm, "🗑 Yes, delete them")
        done = await fake.wait_until_call(lambda c: "Deleted your 2 private" in c.text)
        assert done.method == "editMessageText"
        assert await lore.bot.sources(_identity(ALICE)) == []

        for command in ("/budget", "/approvals", "/unanswered"):
            await send(fake, OWNER, command)
        await fake.wait_until_call(lambda c: c.chat_id == OWNER.id and "Today (" in c.text)
        await fake.wait_until_call(lambda c: c.chat_id == OWNER.id and "No requests" in c.text)
        await fake.wait_until_call(
            lambda c: c.chat_id == OWNER.id and "Every question so far" in c.text
        )


# -- webhook --------------------------------------------------------------------------------


async def test_webhook_checks_the_secret_and_answers_once_per_update(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(
        tg_settings,
        fake,
        webhook_url="https://lore.example.org/telegram/hook",
        webhook_secret=SECRET,
        webhook_port=0,
    ) as (_, edge):
        registered = await fake.wait_for("setWebhook")
        assert registered.params["secret_token"] == SECRET
        assert edge.webhook is not None
        url = f"http://127.0.0.1:{edge.webhook.port}/telegram/hook"
        update = fake.message(STRANGER, "hello?")
        async with httpx.AsyncClient() as client:
            wrong = await client.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "nope"}
            )
            missing = await client.post(url, json=update)
            good = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
            first = await client.post(url, json=update, headers=good)
            retried = await client.post(url, json=update, headers=good)
            elsewhere = await client.post(url + "x", json=update, headers=good)
        assert (wrong.status_code, missing.status_code) == (403, 403)
        assert (first.status_code, retried.status_code) == (200, 200)
        assert elsewhere.status_code == 404
        await fake.wait_for("sendMessage", chat_id=STRANGER.id)
        marker = fake.message(STRANGER, "again?")
        async with httpx.AsyncClient() as client:
            await client.post(url, json=marker, headers=good)
        await fake.wait_for("sendMessage", chat_id=STRANGER.id, count=2)
    assert len(fake.of("sendMessage", chat_id=STRANGER.id)) == 2
    assert fake.polls == 0  # a webhook bot never long-polls


# -- rendering ------------------------------------------------------------------------------


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, _attrs: Any) -> None:
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack.pop() == tag


def test_long_html_splits_at_4096_without_breaking_tags() -> None:
    paragraph = 'Read <b>this <a href="https://e.org/?a=1&amp;b=2">link [1]</a></b> &amp; 🎉 more. '
    markup = paragraph * 400
    parts = split_html(markup)
    assert len(parts) > 1
    for part in parts:
        assert visible_length(part) <= 4096
        checker = _Balance()
        checker.feed(part)
        assert checker.stack == []
    joined = "".join(re.sub(r"<[^>]+>", "", part) for part in parts)
    assert joined == re.sub(r"<[^>]+>", "", markup)


async def test_answers_fall_back_to_edits_when_drafts_are_unknown(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    fake.disable("sendMessageDraft")
    async with telegram(tg_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        await send(fake, ALICE, "When does the office open?")
        answer = await final_answer(fake, ALICE.id)
    assert answer.method == "editMessageText"  # the preview message became the answer
    assert "8 am" in answer.text


# -- morning digest -------------------------------------------------------------------------


async def test_digest_command_schedules_a_digest_that_arrives_once_with_its_message_id(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        await send(fake, ALICE, "/digest 25:00 Europe/Berlin")
        await fake.wait_until_call(lambda c: c.chat_id == ALICE.id and "HH:MM" in c.text)
        await send(fake, ALICE, "/digest 07:30 Europe/Berlin")
        await fake.wait_until_call(
            lambda c: c.chat_id == ALICE.id and "at 07:30 (Europe/Berlin)" in c.text
        )
        alice = await _member(lore, ALICE)
        tomorrow = datetime.now(UTC).astimezone(ZoneInfo("Europe/Berlin")) + timedelta(days=1)
        due = tomorrow.replace(hour=7, minute=30, second=0, microsecond=0)
        assert (await lore.bot.maintenance.send_due_digests(due)).sent == 1
        assert (await lore.bot.maintenance.send_due_digests(due + timedelta(minutes=1))).sent == 0
        [digest] = replies(fake, ALICE.id, "Good morning")
        assert digest.text.startswith("<b>Good morning, Alice!")
        [delivery] = await DigestRepository(lore.database).deliveries(alice.id)
        assert delivery.message_id.isdigit()
        await send(fake, ALICE, "/digest off")
        await fake.wait_until_call(lambda c: c.chat_id == ALICE.id and "are off" in c.text)
