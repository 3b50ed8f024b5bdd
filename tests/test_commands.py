"""Every chat command for {member, owner} in {private chat, group chat}, run through the terminal
chat and through Telegram (the real PTB edge on the fake Bot API server): both edges get the
same outcome and, for a refusal, the very same words — the rules live in `bot/` once."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

from adapters.console import ConsoleChat
from bot.app import Lore
from bot.commands import COMMANDS, Access, Place
from bot.events import ChatRef, Identity
from bot.people import LOCAL_OWNER
from bot.settings import Settings
from tests.chat_turns import invite
from tests.conftest import SettingsFactory
from tests.fakes.telegram_server import FakeTelegram
from tests.test_telegram import ALICE, GROUP, OWNER, join, send, telegram

# What each command is sent with: harmless arguments that reach the handler.
ARGS = {
    "start": "",
    "help": "",
    "link": "",
    "note": "The key of the blue cupboard is under the plant.",
    "sources": "",
    "forget": "",
    "digest": "",
    "new": "",
    "mcp": "",
    "invite": "",
    "budget": "",
    "approvals": "",
    "approve": "",
    "reject": "",
    "unanswered": "",
    "share": "",
    "watch": "",
    "watches": "",
    "unwatch": "",
}
OWNER_ONLY = {"invite", "budget", "approvals", "approve", "reject", "unanswered", "share"}
OWNER_ONLY |= {"watch", "watches", "unwatch"}
GROUPS_ALLOWED = {"help", "new"}


def expected(command: str, role: str, where: str) -> str:
    """The outcome the rules promise: written out by hand, not read from the registry."""
    if command in OWNER_ONLY and role == "member":
        return "owner_only"
    if where == "group" and command not in GROUPS_ALLOWED:
        return "private_only"
    return "ran"


def outcome(reply: str) -> str:
    """What a reply says happened."""
    if "Only an owner can use" in reply:
        return "owner_only"
    if "to me in a private chat" in reply:
        return "private_only"
    if "I don't know" in reply or "only talk with people" in reply:
        return "refused"
    return "ran"


@dataclass(frozen=True, slots=True)
class Case:
    command: str
    role: str
    where: str


CASES = [
    Case(command, role, where)
    for command in ARGS
    for role in ("member", "owner")
    for where in ("private", "group")
]


def test_the_table_covers_every_command_of_the_registry() -> None:
    chat_commands = {c.name for c in COMMANDS.available(owner=True, local=False)}
    assert chat_commands == set(ARGS)
    owners = {c.name for c in COMMANDS.available(owner=True, local=False)} - {
        c.name for c in COMMANDS.available(owner=False, local=False)
    }
    assert owners == OWNER_ONLY
    anywhere = {
        c.name for c in COMMANDS.available(owner=True, local=True) if c.place is Place.ANYWHERE
    }
    assert anywhere == GROUPS_ALLOWED
    assert all(c.access is not Access.OWNER for c in COMMANDS.available(owner=False, local=True))


@asynccontextmanager
async def edges(settings: Settings) -> AsyncIterator[tuple[Lore, FakeTelegram]]:
    async with FakeTelegram() as fake, telegram(settings, fake) as (lore, _):
        await join(fake, ALICE)
        yield lore, fake


async def console_reply(lore: Lore, who: Identity, chat: ChatRef, line: str) -> str:
    out: list[str] = []

    async def no_input(_prompt: str) -> str | None:
        return None

    console = ConsoleChat(
        lore.bot, read_line=no_input, write=out.append, interactive=False, identity=who, chat=chat
    )
    await console.handle(line)
    return "".join(out).strip()


async def telegram_reply(fake: FakeTelegram, role: str, where: str, line: str) -> str:
    user = OWNER if role == "owner" else ALICE
    chat_id = GROUP.id if where == "group" else user.id
    before = len([c for c in fake.calls if c.chat_id == chat_id and c.method == "sendMessage"])
    await send(fake, user, line, **({"chat": GROUP} if where == "group" else {}))
    await fake.wait_until(
        lambda: (
            len([c for c in fake.calls if c.chat_id == chat_id and c.method == "sendMessage"])
            > before
        )
    )
    sent = [c for c in fake.calls if c.chat_id == chat_id and c.method == "sendMessage"]
    return "\n".join(call.text for call in sent[before:])


def plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text).strip()


@pytest.fixture
def both_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="telegram:1001,console:owner")


async def test_every_command_has_the_same_outcome_on_the_terminal_and_on_telegram(
    both_settings: Settings,
) -> None:
    mismatches: list[tuple[object, ...]] = []
    async with edges(both_settings) as (lore, fake):
        mia = await invite(lore.bot, "mia", platform="console", owner=LOCAL_OWNER)
        for case in CASES:
            who = LOCAL_OWNER if case.role == "owner" else mia
            chat = ChatRef("console", "team" if case.where == "group" else who.platform_user_id)
            chat = ChatRef(chat.platform, chat.chat_id, is_group=case.where == "group")
            line = f"/{case.command} {ARGS[case.command]}".strip()
            on_console = await console_reply(lore, who, chat, line)
            on_telegram = plain(await telegram_reply(fake, case.role, case.where, line))
            want = expected(case.command, case.role, case.where)
            got = (outcome(on_console), outcome(on_telegram))
            if got != (want, want):
                mismatches.append((case, want, got, on_console[:80], on_telegram[:80]))
            elif want != "ran" and on_console != on_telegram:
                mismatches.append((case, "same words", on_console, on_telegram))
    assert mismatches == []


async def test_a_local_command_is_unknown_on_a_chat_platform(both_settings: Settings) -> None:
    async with edges(both_settings) as (lore, fake):
        reply = await telegram_reply(fake, "owner", "private", "/ingest /etc/passwd")
        local = await console_reply(lore, LOCAL_OWNER, ChatRef("console", "local"), "/help")
        documents = await lore_documents(lore)
    assert reply == "I don't know /ingest. Try /help."
    assert "/ingest [--shared] PATH|URL" in local
    assert documents == 0


async def lore_documents(lore: Lore) -> int:
    stats = await lore.bot.stats()
    return stats.shared_documents + stats.private_documents


async def test_a_stranger_is_refused_the_same_way_on_both_edges(both_settings: Settings) -> None:
    stranger = Identity("console", "sam", "Sam")
    async with edges(both_settings) as (lore, fake):
        on_console = await console_reply(lore, stranger, ChatRef("console", "sam"), "/sources")
        from tests.test_telegram import STRANGER  # noqa: PLC0415

        await send(fake, STRANGER, "/sources")
        told = await fake.wait_for("sendMessage", chat_id=STRANGER.id)
    assert on_console == told.text
    assert "invited" in told.text
