"""The Telegram edge, continued: /link (one person, several chat accounts, one user), forwarded
messages, an owner's Private/Shared choice and /share, through the fake Bot API server.

Helpers come from tests/test_telegram.py; the core is the real one with the offline model.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from adapters.console import LOCAL_OWNER, ConsoleChat
from bot.errors import LinkRefusedError, ShareRefusedError
from bot.events import Identity
from bot.settings import Settings
from storage.documents import DocumentRepository
from storage.link_codes import LinkCodeRepository
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.http_server import ScriptedServer, static
from tests.fakes.telegram_server import FakeTelegram, TgUser
from tests.test_telegram import (
    ALICE,
    BOB,
    GROUP,
    HANDBOOK,
    LOCKER,
    OWNER,
    PAGE,
    STRANGER,
    _member,
    join,
    replies,
    send,
    tap,
    telegram,
)

CODE = re.compile(r"/link ([A-Z0-9]{4}-[A-Z0-9]{4})")
LATECOMER = TgUser(3004, "Lea")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
def tg_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="telegram:1001")


async def _no_input(_prompt: str) -> str | None:
    return None


async def _reply(fake: FakeTelegram, user: TgUser, text: str, needle: str) -> str:
    """Send `text` as `user`; the bot's next reply to them that contains `needle`."""
    seen = len(replies(fake, user.id, needle))
    await send(fake, user, text)
    await fake.wait_until(lambda: len(replies(fake, user.id, needle)) > seen)
    return replies(fake, user.id, needle)[seen].text


async def _link_code(fake: FakeTelegram, user: TgUser) -> str:
    reply = await _reply(fake, user, "/link", "Linking accounts")
    match = CODE.search(reply)
    assert match is not None, reply
    return match.group(1)


def _identity(user: TgUser) -> Identity:
    return Identity("telegram", str(user.id), user.first_name)


# -- /link ------------------------------------------------------------------------------------


async def test_link_joins_the_terminal_account_to_a_telegram_member_once(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        alice = await _member(lore, ALICE)
        await remember(lore.bot, _identity(ALICE), LOCKER, title="Locker")
        code = await _link_code(fake, ALICE)

        out: list[str] = []
        console = ConsoleChat(lore.bot, read_line=_no_input, write=out.append, interactive=False)
        await console.handle(f"/link {code.lower()}")  # case does not matter
        assert out[-1].startswith("Linked")
        terminal = await lore.bot.user_for(LOCAL_OWNER)
        assert terminal is not None
        assert terminal.id == alice.id
        await console.handle("what is my locker code?")  # private search as Alice
        assert "4417" in "".join(out)
        passages = await lore.bot.search(LOCAL_OWNER, "locker code")
        assert any("4417" in found.passage.text for found in passages)

        used = await _reply(fake, STRANGER, f"/link {code}", "not valid")
        assert "already used or expired" in used
        assert await lore.bot.user_for(_identity(STRANGER)) is None


async def test_link_refuses_an_account_that_belongs_to_someone_else_and_expired_codes(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        await join(fake, BOB)
        alice, bob = await _member(lore, ALICE), await _member(lore, BOB)
        await send(fake, ALICE, "/link", chat=GROUP)
        told = await fake.wait_until_call(lambda c: c.chat_id == GROUP.id)
        assert told.text == "Send /link to me in a private chat."
        code = await _link_code(fake, ALICE)

        taken = await _reply(fake, BOB, f"/link {code}", "already belongs")
        assert "never merged" in taken
        assert (await _member(lore, BOB)).id == bob.id  # Bob is still Bob
        # The refusal did not use the code up: a new Telegram account can still take it.
        linked = await _reply(fake, STRANGER, f"/link {code}", "Linked")
        assert linked.startswith("Linked")
        assert (await _member(lore, STRANGER)).id == alice.id
        again = await _reply(fake, STRANGER, f"/link {code}", "not valid")
        assert "expired" in again

        old = await LinkCodeRepository(lore.database).create(
            alice.id, now=datetime.now(UTC) - timedelta(minutes=20), ttl=timedelta(minutes=15)
        )
        expired = await _reply(fake, LATECOMER, f"/link {old.display}", "not valid")
        assert "expired" in expired
        assert await lore.bot.user_for(_identity(LATECOMER)) is None
        plain = await _reply(fake, LATECOMER, "/link", "invited")  # no code for strangers
        assert "invite" in plain


async def test_an_owner_identity_from_settings_links_only_to_an_owner(
    make_settings: SettingsFactory, fake: FakeTelegram
) -> None:
    settings = make_settings(owners="telegram:1001,console:owner")
    async with telegram(settings, fake) as (lore, _):
        await join(fake, ALICE)
        code = await _link_code(fake, ALICE)
        with pytest.raises(LinkRefusedError, match="only be linked with another owner"):
            await lore.bot.link_identity(LOCAL_OWNER, code)
        owner_code = await lore.bot.create_link_code(_identity(OWNER))
        linked = await lore.bot.link_identity(LOCAL_OWNER, owner_code.code)
        assert linked.startswith("Linked")
        telegram_owner = await _member(lore, OWNER)
        assert (await lore.bot.user_for(LOCAL_OWNER)) == telegram_owner
        with pytest.raises(LinkRefusedError, match="not valid"):  # used once
            await lore.bot.link_identity(LOCAL_OWNER, owner_code.code)
        alice = await _member(lore, ALICE)
        assert alice.id != telegram_owner.id


# -- sources from the chat ------------------------------------------------------------------


async def test_a_forwarded_message_is_saved_with_where_it_came_from(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        origin = {
            "type": "user",
            "date": int(time.time()) - 3600,
            "sender_user": {"id": 4005, "is_bot": False, "first_name": "Carol", "last_name": "Y"},
        }
        text = "The quarterly review moves to the Orchid meeting room on the third floor."
        fake.enqueue(fake.message(ALICE, text, forward_origin=origin))
        saved = await fake.wait_until_call(
            lambda c: c.chat_id == ALICE.id and c.text.startswith("✅")
        )
        assert "your private notes" in saved.text
        [document] = await lore.bot.sources(_identity(ALICE))
        assert document.title.startswith("Forwarded from Carol Y: The quarterly review")
        [found, *_] = await lore.bot.search(_identity(ALICE), "quarterly review meeting room")
        assert found.private
        assert re.search(
            r"Forwarded from Carol Y \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)", found.passage.text
        )
        assert "Orchid" in found.passage.text
        shared = await lore.bot.search(_identity(OWNER), "Orchid meeting room", private=False)
        assert all("Orchid" not in hit.passage.text for hit in shared)


async def test_owner_chooses_shared_or_private_for_a_document_and_a_link(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    page = {"/parking": static(PAGE, "text/html; charset=utf-8")}
    async with ScriptedServer(routes=page) as web, telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        documents = DocumentRepository(lore.database)
        fake.add_file("doc-1", HANDBOOK.encode(), "documents/handbook.md")
        document = {
            "file_id": "doc-1",
            "file_unique_id": "u-doc-1",
            "file_name": "handbook.md",
            "file_size": len(HANDBOOK),
        }
        fake.enqueue(fake.message(OWNER, None, document=document))
        choice = await fake.wait_until_call(lambda c: "Where should I keep" in c.text)
        assert [label for label, _ in choice.buttons()] == ["🔒 Private", "🌐 Shared"]
        assert fake.of("getFile") == []  # nothing is downloaded before the choice
        stranger_tap = await tap(fake, ALICE, choice, "🌐 Shared")
        assert "Only the person who sent it" in stranger_tap.params["text"]
        await tap(fake, OWNER, choice, "🌐 Shared")
        shared = await fake.wait_until_call(
            lambda c: c.method == "editMessageText" and c.text.startswith("✅")
        )
        assert "the shared knowledge" in shared.text
        assert shared.params["message_id"] == str(choice.result["message_id"])
        assert [d.title for d in await documents.list_for_owner(None)] == ["Travel handbook"]
        assert await lore.bot.sources(_identity(OWNER)) == []
        hits = await lore.bot.search(_identity(OWNER), "book train tickets Zephyr", private=False)
        assert any("Zephyr" in hit.passage.text and not hit.private for hit in hits)

        await send(fake, OWNER, web.url("/parking"))
        choice = await fake.wait_until_call(
            lambda c: "Where should I keep" in c.text and "parking" in c.text
        )
        await tap(fake, OWNER, choice, "🔒 Private")
        private = await fake.wait_until_call(
            lambda c: c.method == "editMessageText" and c.text.startswith("✅ Saved: <b>Parking")
        )
        assert "your private notes" in private.text
        assert [d.title for d in await lore.bot.sources(_identity(OWNER))] == ["Parking rules"]
        assert [d.title for d in await documents.list_for_owner(None)] == ["Travel handbook"]
        late = await tap(fake, OWNER, choice, "🌐 Shared")  # a second tap: already taken
        assert "expired" in late.params["text"]


async def test_share_publishes_an_owner_private_document_by_its_sources_handle(
    tg_settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(tg_settings, fake) as (lore, _):
        await join(fake, ALICE)
        await remember(lore.bot, _identity(OWNER), HANDBOOK, title="Travel handbook")
        await remember(lore.bot, _identity(ALICE), LOCKER, title="Locker")
        listed = await _reply(fake, OWNER, "/sources", "Your private documents")
        [handbook] = await lore.bot.sources(_identity(OWNER))
        assert f"<code>{handbook.handle}</code> Travel handbook" in listed

        numbered = await _reply(fake, OWNER, "/share 7", "named by their handle")
        assert "/sources" in numbered
        missing = await _reply(fake, OWNER, "/share 0000000", "has the handle")
        assert missing == "No document of yours has the handle '0000000'."
        shared = await _reply(fake, OWNER, f"/share {handbook.handle}", "Shared")
        assert "Travel handbook" in shared
        documents = DocumentRepository(lore.database)
        assert [d.title for d in await documents.list_for_owner(None)] == ["Travel handbook"]
        assert [d.title for d in await lore.bot.sources(_identity(OWNER))] == ["Travel handbook"]
        hits = await lore.bot.search(_identity(OWNER), "book train tickets Zephyr", private=False)
        assert any("Zephyr" in hit.passage.text for hit in hits)

        member = await _reply(fake, ALICE, "/share 1", "Only an owner")
        assert "/share" in member
        [locker] = await lore.bot.sources(_identity(ALICE))
        with pytest.raises(ShareRefusedError, match="not one of your private documents"):
            await lore.bot.share_document(_identity(OWNER), locker.id)
        await send(fake, OWNER, "/share The canteen closes at 2 pm on Fridays.")
        note = await fake.wait_until_call(
            lambda c: c.chat_id == OWNER.id and c.text.startswith("✅") and "canteen" in c.text
        )
        assert "the shared knowledge" in note.text
        assert not [c for c in fake.calls if "Where should I keep" in c.text]  # no question
        titles = {d.title for d in await documents.list_for_owner(None)}
        assert titles == {"Travel handbook", "The canteen closes at 2 pm on Fridays."}
