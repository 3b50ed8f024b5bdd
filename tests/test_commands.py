"""Every chat command for {member, owner} in {private chat, group chat}, run through the terminal
chat, Telegram (the real PTB edge on the fake Bot API server), Slack (the real Bolt edge on
the fake Slack) and Discord (the real discord.py edge on the fake Discord), where commands
are `/lore NAME`: every edge gets the same outcome and, for a refusal, the very same words
once each edge's spelling of a command is accounted for — the rules live in `bot/` once."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest

from adapters.console import ConsoleChat
from adapters.matrix import RunningMatrix
from bot.app import Lore
from bot.commands import COMMANDS, Access, Place
from bot.events import ChatRef, Identity
from bot.people import LOCAL_OWNER
from bot.settings import Settings
from tests.chat_turns import invite
from tests.conftest import SettingsFactory
from tests.fakes.discord_payloads import CHANNEL_ID
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.matrix.edge import admit, cast_of, matrix_scene
from tests.matrix.homeserver import Homeserver
from tests.matrix.members import Member
from tests.slack_edge import ALICE as SLACK_ALICE
from tests.slack_edge import CHANNEL, SlackRun, in_dm, slack_on, welcome_people
from tests.slack_edge import OWNER as SLACK_OWNER
from tests.slack_edge import STRANGER as SLACK_STRANGER
from tests.slack_edge import join as slack_join
from tests.test_discord import ALICE as DC_ALICE
from tests.test_discord import OWNER as DC_OWNER
from tests.test_discord import discord_edge, shown
from tests.test_discord import join as dc_join
from tests.test_discord import slash as dc_slash
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
async def edges(settings: Settings) -> AsyncIterator[tuple[Lore, FakeTelegram, SlackRun]]:
    async with (
        FakeTelegram() as fake,
        FakeSlack() as slack_fake,
        telegram(settings, fake) as (lore, _),
        slack_on(lore, slack_fake) as slack,
    ):
        welcome_people(slack_fake)
        await join(fake, ALICE)
        await slack_join(slack, SLACK_ALICE)
        yield lore, fake, slack


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


async def slack_reply(slack: SlackRun, role: str, where: str, line: str) -> str:
    """What `/lore NAME ARGS` answers on Slack, in the bot's direct message (ordinary
    messages) or in a channel (through the command's response_url)."""
    fake, user = slack.fake, SLACK_OWNER if role == "owner" else SLACK_ALICE
    channel = fake.dm(user.id) if where == "private" else CHANNEL
    form = slack.send.command(user, line.removeprefix("/"), channel)
    before = len(in_dm(fake, user))
    await slack.send.slash(form)
    if where == "private":
        await fake.wait_until(lambda: len(in_dm(fake, user)) > before)
        texts = [call.text for call in in_dm(fake, user)[before:]]
    else:
        await fake.wait_for_response(lambda posted: posted.url == form["response_url"])
        texts = [posted.text for posted in fake.responses if posted.url == form["response_url"]]
    return "\n".join(texts)


def as_typed_elsewhere(slack_text: str) -> str:
    """Slack's words with Slack's spelling of commands (`/lore NAME`) as `/NAME`, mrkdwn's
    entities and markers undone."""
    text = html.unescape(re.sub(r"(?<![\w/])[*_`]|[*_`](?![\w])", "", slack_text))
    return text.replace("/lore ", "/").strip()


@pytest.fixture
def both_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="telegram:1001,slack:U0OWNER,console:owner")


async def test_every_command_has_the_same_outcome_on_the_terminal_telegram_and_slack(
    both_settings: Settings,
) -> None:
    mismatches: list[tuple[object, ...]] = []
    async with edges(both_settings) as (lore, fake, slack):
        mia = await invite(lore.bot, "mia", platform="console", owner=LOCAL_OWNER)
        for case in CASES:
            who = LOCAL_OWNER if case.role == "owner" else mia
            chat = ChatRef("console", "team" if case.where == "group" else who.platform_user_id)
            chat = ChatRef(chat.platform, chat.chat_id, is_group=case.where == "group")
            line = f"/{case.command} {ARGS[case.command]}".strip()
            on_console = await console_reply(lore, who, chat, line)
            on_telegram = plain(await telegram_reply(fake, case.role, case.where, line))
            on_slack = as_typed_elsewhere(await slack_reply(slack, case.role, case.where, line))
            want = expected(case.command, case.role, case.where)
            got = (outcome(on_console), outcome(on_telegram), outcome(on_slack))
            if got != (want, want, want):
                mismatches.append((case, want, got, on_console[:80], on_slack[:80]))
            elif want != "ran" and not on_console == on_telegram == on_slack:
                mismatches.append((case, "same words", on_console, on_telegram, on_slack))
    assert mismatches == []


async def test_a_local_command_is_unknown_on_a_chat_platform(both_settings: Settings) -> None:
    async with edges(both_settings) as (lore, fake, slack):
        reply = await telegram_reply(fake, "owner", "private", "/ingest /etc/passwd")
        on_slack = await slack_reply(slack, "owner", "private", "/ingest /etc/passwd")
        local = await console_reply(lore, LOCAL_OWNER, ChatRef("console", "local"), "/help")
        documents = await lore_documents(lore)
    assert reply == "I don't know /ingest. Try /help."
    assert on_slack == "I don't know /lore ingest. Try /lore help."
    assert "/ingest [--shared] PATH|URL" in local
    assert documents == 0


async def lore_documents(lore: Lore) -> int:
    stats = await lore.bot.maintenance.stats()
    return stats.shared_documents + stats.private_documents


async def test_a_stranger_is_refused_the_same_way_on_every_edge(both_settings: Settings) -> None:
    stranger = Identity("console", "sam", "Sam")
    async with edges(both_settings) as (lore, fake, slack):
        on_console = await console_reply(lore, stranger, ChatRef("console", "sam"), "/sources")
        from tests.test_telegram import STRANGER  # noqa: PLC0415

        await send(fake, STRANGER, "/sources")
        told = await fake.wait_for("sendMessage", chat_id=STRANGER.id)
        direct = slack.fake.dm(SLACK_STRANGER.id)
        await slack.send.slash(slack.send.command(SLACK_STRANGER, "sources", direct))
        on_slack = await slack.fake.wait_for("chat.postMessage", channel=direct)
    assert on_console == told.text == on_slack.text
    assert "invited" in told.text


# -- the same table on Discord --------------------------------------------------------------


async def discord_reply(fake: FakeDiscord, role: str, where: str, command: str, args: str) -> str:
    """`/lore command args` on Discord: a slash command for the menu's commands, typed text
    (mentioning the bot in a server) for the others; the bot's answer as a person reads it."""
    user = DC_OWNER if role == "owner" else DC_ALICE
    channel = CHANNEL_ID if where == "group" else fake.dm_channel(user)
    if command in MENU:
        return shown(await dc_slash(fake, user, command, args, channel_id=channel))
    before = len(fake.in_channel(channel))
    line = f"/lore {command} {args}".strip()
    event = fake.in_server(user, line) if where == "group" else fake.dm(user, line)
    fake.dispatch("MESSAGE_CREATE", event)
    await fake.wait_until(lambda: len(fake.in_channel(channel)) > before)
    return shown(fake.in_channel(channel)[before])


MENU = {c.name for c in COMMANDS.available(owner=True, local=False) if c.in_menu}


@pytest.fixture
def discord_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="discord:1001,console:owner")


async def test_every_command_has_the_same_outcome_and_words_on_discord(
    discord_settings: Settings,
) -> None:
    mismatches: list[tuple[object, ...]] = []
    async with FakeDiscord() as fake, discord_edge(discord_settings, fake) as (lore, _):
        await dc_join(fake, DC_ALICE)
        mia = await invite(lore.bot, "mia", platform="console", owner=LOCAL_OWNER)
        for case in CASES:
            who = LOCAL_OWNER if case.role == "owner" else mia
            chat = ChatRef("console", "team" if case.where == "group" else who.platform_user_id)
            chat = ChatRef(chat.platform, chat.chat_id, is_group=case.where == "group")
            line = f"/{case.command} {ARGS[case.command]}".strip()
            on_console = await console_reply(lore, who, chat, line)
            on_discord = await discord_reply(
                fake, case.role, case.where, case.command, ARGS[case.command]
            )
            want = expected(case.command, case.role, case.where)
            got = (outcome(on_console), outcome(on_discord))
            if got != (want, want):
                mismatches.append((case, want, got, on_console[:80], on_discord[:80]))
            elif want != "ran" and on_console != on_discord.replace("/lore ", "/"):
                mismatches.append((case, "same words", on_console, on_discord))
    assert mismatches == []
    assert all(post.suppressed for post in fake.posts)


# -- the same table on Matrix, against a real homeserver --------------------------------------


async def matrix_reply(
    lore: Lore, running: RunningMatrix, person: Member, room: str, bot: str, line: str
) -> str:
    """What the bot answers `line` in a room, once everything it sent has reached `person`."""
    before = len(person.said(room, bot))
    await person.say(room, line)
    await person.wait_until(lambda: len(person.said(room, bot)) > before)
    await running.settled()
    assert running.edge is not None
    await person.saw(running.edge.outbox.latest[room])
    return "\n".join(said.body for said in person.said(room, bot)[before:])


def as_typed_on_the_terminal(matrix_text: str) -> str:
    """Matrix's words with its spelling of commands (`!NAME`) as the terminal's (`/NAME`)."""
    return re.sub(r"!(?=[a-z])", "/", matrix_text).strip()


async def test_every_command_has_the_same_outcome_and_words_on_matrix(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with matrix_scene(settings, homeserver, cast, cast.owner, cast.alice) as (
        lore,
        running,
        [owner, alice],
    ):
        await admit(lore, cast, cast.alice)
        mia = await invite(lore.bot, "mia", platform="console", owner=LOCAL_OWNER)
        people = {"owner": (owner, LOCAL_OWNER), "member": (alice, mia)}
        rooms = {}
        for role, (person, _) in people.items():
            rooms[role, "private"] = await person.direct_chat(cast.bot.user_id)
            rooms[role, "group"] = await person.room(cast.bot.user_id, cast.bob.user_id)
        for (role, _), room in rooms.items():
            await people[role][0].joined(room, cast.bot.user_id)

        async def compare(role: str, where: str) -> list[tuple[object, ...]]:
            """This role's cases in this kind of chat, one after the other; the four
            (role, chat) pairs run side by side, each in its own Matrix room."""
            person, who = people[role]
            chat_id = "team" if where == "group" else who.platform_user_id
            chat = ChatRef("console", chat_id, is_group=where == "group")
            found: list[tuple[object, ...]] = []
            for case in (c for c in CASES if (c.role, c.where) == (role, where)):
                line = f"/{case.command} {ARGS[case.command]}".strip()
                on_console = await console_reply(lore, who, chat, line)
                typed = "!" + line[1:]
                if where == "group":
                    typed = f"{cast.bot.localpart}: {typed}"
                room = rooms[role, where]
                on_matrix = await matrix_reply(lore, running, person, room, cast.bot.user_id, typed)
                want = expected(case.command, role, where)
                got = (outcome(on_console), outcome(on_matrix))
                if got != (want, want):
                    found.append((case, want, got, on_console[:80], on_matrix[:80]))
                elif want != "ran" and on_console != as_typed_on_the_terminal(on_matrix):
                    found.append((case, "same words", on_console, on_matrix))
            return found

        found = await asyncio.gather(*(compare(role, where) for role, where in rooms))
    mismatches = [mismatch for stream in found for mismatch in stream]
    assert mismatches == []
