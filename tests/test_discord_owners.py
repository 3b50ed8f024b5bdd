"""The Discord edge end to end, continued: owners' approvals, the `/lore` commands, rate limits,
gateway RESUME, digests and notices, and starting from settings; through the fake Discord.

Helpers come from tests/test_discord.py; the core is the real one with the offline model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from discord.http import Route

from adapters.discord import DiscordConfig
from adapters.discord.config import lore_intents
from bot.app import open_lore
from bot.app.edges import platform_edges
from bot.errors import StartupError
from bot.settings import Settings
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.discord_payloads import CHANNEL_ID
from tests.fakes.discord_server import FakeDiscord
from tests.test_discord import (
    ALICE,
    BOB,
    LOCKER,
    OFFICE,
    OWNER,
    STRANGER,
    discord_edge,
    final_answer,
    identity,
    join,
    reply_in,
    send_dm,
    shown,
    slash,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        for user in (ALICE, BOB, STRANGER):
            server.user(user.id, user.name)
        yield server


@pytest.fixture
def dc_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="discord:1001,console:owner")


# -- owners: approvals ----------------------------------------------------------------------


async def test_an_approval_tap_by_a_non_owner_twice_and_after_a_restart(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    owner_dm = fake.dm_channel(OWNER)
    async with discord_edge(dc_settings, fake):
        await join(fake, ALICE)
        await join(fake, BOB)
        send_dm(fake, ALICE, "tell the owner that the printer is broken")
        request = await reply_in(fake, owner_dm, "Approval needed")
        assert [label for label, _ in request.buttons()] == ["✅ Approve", "❌ Reject"]
        told = await fake.wait_for_post(
            lambda p: "owner" in shown(p).lower(), channel_id=fake.dm_channel(ALICE)
        )
        assert told.channel_id == fake.dm_channel(ALICE)
    # The bot process is gone; a new one starts on the same data directory.
    async with discord_edge(dc_settings, fake) as (lore, _):
        fake.dispatch("INTERACTION_CREATE", fake.click(BOB, request, "✅ Approve"))
        refused = await reply_in(fake, owner_dm, "Only an owner")
        assert refused.ephemeral
        fake.dispatch("INTERACTION_CREATE", fake.click(OWNER, request, "✅ Approve"))
        decided = await reply_in(fake, owner_dm, "Approved** by Olivia")
        assert decided.message_id == request.message_id
        assert decided.buttons() == []
        assert (await reply_in(fake, owner_dm, "Approved.")).ephemeral
        outcome = await fake.wait_for_post(
            lambda p: "delivered to the owner" in shown(p), channel_id=fake.dm_channel(ALICE)
        )
        assert outcome.buttons()  # the delivered answer takes feedback too
        fake.dispatch("INTERACTION_CREATE", fake.click(OWNER, request, "✅ Approve"))
        again = await reply_in(fake, owner_dm, "already decided")
        assert again.ephemeral
        pending = (await lore.bot.pending_approvals(identity(OWNER))).cards
    assert pending == ()
    delivered = [p for p in fake.in_channel(owner_dm) if p.content.startswith("Message from")]
    assert [shown(p) for p in delivered] == ["Message from Alice: The printer is broken."]


# -- commands -------------------------------------------------------------------------------


async def test_slash_commands_come_from_the_registry_and_refuse_like_every_edge(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        [lore_command] = fake.commands["global"]
        subcommands = {option["name"] for option in lore_command["options"]}
        assert subcommands == {c.name for c in lore.bot.commands(owner=True)}
        assert lore_command["contexts"] == [0, 1]  # servers and DMs
        digest = next(o for o in lore_command["options"] if o["name"] == "digest")
        assert digest["description"] == "A morning digest, e.g. at 07:30 Europe/Berlin"
        [args] = digest["options"]
        assert args["description"] == "HH:MM ZONE [quiet] | off | now"

        await join(fake, ALICE)
        budget = await slash(fake, ALICE, "budget")
        assert shown(budget) == "Only an owner can use /lore budget."
        assert budget.ephemeral
        await remember(lore.bot, identity(ALICE), LOCKER, title="Locker")
        note = await slash(fake, ALICE, "note", "The bike shed key is in drawer 3.")
        assert note.content.startswith("✅")
        listed = await slash(fake, ALICE, "sources")
        assert "Locker" in shown(listed)
        assert listed.ephemeral

        confirm = await slash(fake, ALICE, "forget")
        assert "cannot be undone" in shown(confirm)
        assert len(await lore.bot.sources(identity(ALICE))) == 2  # nothing deleted before the tap
        fake.dispatch("INTERACTION_CREATE", fake.click(ALICE, confirm, "🗑 Yes, delete them"))
        done = await reply_in(fake, fake.dm_channel(ALICE), "Deleted your 2 private")
        assert done.message_id == confirm.message_id
        assert await lore.bot.sources(identity(ALICE)) == []

        typed = send_dm(fake, ALICE, "/lore link")
        linked = await reply_in(fake, fake.dm_channel(ALICE), "Linking accounts")
        assert linked.channel_id == int(typed["channel_id"])


async def test_commands_sync_to_one_server_when_a_guild_id_is_set(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake, guild_id=700):
        assert "guild" in fake.commands
        assert "global" not in fake.commands
        helped = await slash(fake, OWNER, "help", channel_id=CHANNEL_ID)
    assert "/lore invite" in shown(helped)


async def test_a_slow_command_posts_a_status_first_then_its_reply(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake, reply_deadline=0.0) as (lore, _):
        code = await lore.bot.create_invite(identity(OWNER))
        await lore.bot.redeem_invite(identity(ALICE), code.code)
        note = await slash(fake, ALICE, "note", "The bike shed key is in drawer 3.")
        saved = await reply_in(fake, fake.dm_channel(ALICE), "✅ Saved")
    assert note.via == "interaction"
    assert saved.message_id == note.message_id  # the status message became the reply
    assert saved.edit


# -- limits and delivery --------------------------------------------------------------------


async def test_a_429_while_editing_is_waited_out_and_the_final_text_lands(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        dm = fake.dm_channel(ALICE)
        fake.fail_next("PATCH", rf"/channels/{dm}/messages/\d+", retry_after=1.0)
        send_dm(fake, ALICE, "When does the office open?")
        answer = await final_answer(fake, dm)
    edits = fake.of("PATCH", rf"/channels/{dm}/messages/\d+")
    assert edits[0].status == 429
    assert edits[1].at - edits[0].at >= 1.0  # retried after retry_after, not dropped
    assert "8 am" in shown(answer)


async def test_a_message_delivered_again_after_a_resume_is_answered_once(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await join(fake, ALICE)
        dm = fake.dm_channel(ALICE)
        question = send_dm(fake, ALICE, "When does the office open?")
        await final_answer(fake, dm)
        await fake.gateway.drop(deliver_again=[("MESSAGE_CREATE", question)])
        await fake.wait_until(lambda: len(fake.gateway.resumes) == 1 and fake.gateway.connected)
        send_dm(fake, ALICE, "/lore link")  # handled after the redelivered message
        await reply_in(fake, dm, "Linking accounts")
    assert fake.gateway.resumes[0]["session_id"] == fake.gateway.session_id
    assert len(fake.gateway.identifies) == 1  # resumed, not a new session
    finals = [p for p in fake.in_channel(dm) if "8 am" in p.content and "👍" in dict(p.buttons())]
    assert len(finals) == 1


async def test_a_digest_arrives_in_the_dm_where_it_was_set(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await join(fake, ALICE)
        set_up = await slash(fake, ALICE, "digest", "07:30 Europe/Berlin")
        assert "at 07:30 (Europe/Berlin)" in shown(set_up)
        tomorrow = datetime.now(UTC).astimezone(ZoneInfo("Europe/Berlin")) + timedelta(days=1)
        due = tomorrow.replace(hour=7, minute=30, second=0, microsecond=0)
        assert (await lore.bot.maintenance.send_due_digests(due)).sent == 1
        [digest] = [
            p for p in fake.in_channel(fake.dm_channel(ALICE)) if "Good morning" in p.content
        ]
    assert digest.content.startswith("**Good morning, Alice!")
    assert digest.via == "channel"


async def test_an_expired_request_is_told_to_the_owner_in_their_dms(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    async with discord_edge(dc_settings, fake) as (lore, _):
        await join(fake, ALICE)
        send_dm(fake, ALICE, "tell the owner that the printer is broken")
        await reply_in(fake, fake.dm_channel(OWNER), "Approval needed")
        later = datetime.now(UTC) + timedelta(days=30)
        assert len(await lore.bot.maintenance.expire_approvals(later)) == 1
        notice = await reply_in(fake, fake.dm_channel(OWNER), "Expired without a decision")
    assert notice.content.startswith("**⌛ Expired")


# -- starting -------------------------------------------------------------------------------


async def test_lore_run_builds_the_discord_edge_from_settings(
    make_settings: SettingsFactory, fake: FakeDiscord
) -> None:
    settings = make_settings(
        owners="discord:1001,console:owner",
        discord_bot_token=fake.token,
        discord_api_url=fake.api_url,
        discord_guild_id="700",
    )
    async with open_lore(settings) as lore:
        [edge] = await platform_edges(lore)
        assert edge.platform == "discord"
        async with edge.running(lore.bot):
            helped = await slash(fake, OWNER, "help", channel_id=CHANNEL_ID)
    assert "/lore invite" in shown(helped)  # an owner: OWNERS=discord:1001 reached the core
    assert set(fake.commands) == {"guild"}
    assert fake.gateway.identifies[0]["intents"] == lore_intents().value
    assert fake.token not in repr(settings)


async def test_a_refused_token_or_intent_stops_the_start_with_a_clear_message(
    dc_settings: Settings, fake: FakeDiscord
) -> None:
    with pytest.raises(StartupError, match="refused DISCORD_BOT_TOKEN") as refused:
        async with discord_edge(dc_settings, fake, token="not-the-token"):
            pass
    assert "not-the-token" not in str(refused.value)
    fake.gateway.refuse_privileged = True
    with pytest.raises(StartupError, match="Message Content intent"):
        async with discord_edge(dc_settings, fake):
            pass
    assert Route.BASE == "https://discord.com/api/v10"  # discord.py's defaults are restored


def test_attachments_are_downloaded_only_from_discord_hosts() -> None:
    config = DiscordConfig(token="t", max_file_bytes=1024)
    assert config.may_download("https://cdn.discordapp.com/attachments/1/2/a.pdf")
    assert not config.may_download("http://cdn.discordapp.com/attachments/1/2/a.pdf")
    assert not config.may_download("https://169.254.169.254/latest/meta-data/")
    local = DiscordConfig(token="t", max_file_bytes=1024, api_url="http://127.0.0.1:9/api/v10")
    assert local.may_download("http://127.0.0.1:9/attachments/a.md")
    assert not local.may_download("http://127.0.0.2:9/attachments/a.md")
