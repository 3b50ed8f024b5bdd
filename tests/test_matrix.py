"""The Matrix edge end to end against a real Synapse homeserver (tests/matrix/homeserver.py),
with real nio clients as the people; the core is the real one with the offline model.
No fake anywhere: what a test asserts is what a Matrix client would show."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import nio
import pytest

from adapters.matrix import RunningMatrix
from adapters.matrix.config import STORE_FILE, MatrixConfig
from adapters.matrix.invites import turned_away
from bot.app import Lore, open_lore
from bot.app.core import backup_layout
from bot.app.edge_failures import edge_start_error
from bot.app.models import utc_now
from bot.backups import back_up_from_outside, restore_into
from bot.errors import NotInvitedError, StartupError
from bot.settings import Settings
from storage.users import User
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.matrix.edge import (
    admit,
    cast_of,
    edge_config,
    edge_on,
    identity,
    matrix_edge,
    matrix_scene,
    members,
    until_handled,
)
from tests.matrix.homeserver import Account, Homeserver


async def lore_user(settings: Settings, account: Account) -> User | None:
    """Who Lore thinks an account is, read after the edge stopped."""
    async with open_lore(settings) as core:
        return await core.bot.user_for(identity(account))


LORE = Path(sys.executable).parent / "lore"
GRACE = 3.0  # seconds a stranger who invited Lore has for !start (two minutes in earnest)
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
LOCKER = "Alice's locker code is 4417 and the spare key hangs behind the boiler."


async def test_a_dm_question_streams_to_a_cited_answer_rated_by_reaction_also_when_rate_limited(
    homeserver: Homeserver, make_settings: SettingsFactory, caplog: pytest.LogCaptureFixture
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    bot = cast.bot.user_id
    async with matrix_scene(settings, homeserver, cast, cast.alice) as (lore, running, [alice]):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await admit(lore, cast, cast.alice)
        room = await alice.direct_chat(bot)
        await alice.joined(room, bot)
        await alice.say(room, "When does the office open?")
        answer = await alice.reply_from(room, bot, "Sources")
        await alice.wait_until(lambda: len(alice.said(room, bot)[-1].reactions) == 2)
        [final] = alice.said(room, bot)
        await alice.react(room, final.event_id, "👍")
        thanks = await alice.reply_from(room, bot, "Thanks for the feedback!")
        liked = await lore.database.fetch_value("SELECT value FROM feedback")
        await until_handled(lore, running, await alice.react(room, final.event_id, "👎"))
        disliked = await lore.database.fetch_value("SELECT value FROM feedback")
        assert running.edge is not None
        newest = running.edge.outbox.latest[room]

        # Two events a second for the bot (Synapse's per-user override): a streamed answer
        # (a preview, its edits, the final text, two reactions) and a reply right behind it
        # meet 429s, each waited out as long as `retry_after_ms` says.
        homeserver.limit_messages(bot, per_second=2, burst_count=1)
        with caplog.at_level(logging.WARNING, logger="nio"):
            await alice.say(room, "When does the office close?")
            await alice.say(room, "!help")
            await alice.reply_from(room, bot, "Sources", count=2)
            await alice.reply_from(room, bot, "!sources")
            await running.settled()
            await alice.saw(running.edge.outbox.latest[room])
        limited = alice.said(room, bot)[2:]
    assert "8 am" in answer.body
    assert "[1]" in answer.body
    assert "<b>Sources</b>" in answer.html
    assert answer.edits >= 1  # streamed into one message, then edited into the answer
    assert answer.content["m.mentions"] == {}
    assert final.reactions == ("👍", "👎")
    assert thanks.content["m.relates_to"]["m.in_reply_to"]["event_id"] == final.event_id
    assert (liked, disliked) == (1, -1)
    assert newest == thanks.event_id  # a changed rating is thanked once, not again
    waits = [record.getMessage() for record in caplog.records if "429" in record.getMessage()]
    assert waits, "the homeserver never rate-limited the bot"
    assert all("sleeping for" in wait for wait in waits)
    # Both replies, each one message with all its parts: nothing lost, nothing twice.
    assert len(limited) == 2
    assert sum("!sources" in said.body for said in limited) == 1
    [closing] = [said for said in limited if "Sources" in said.body]
    assert "6 pm" in closing.body
    assert closing.reactions == ("👍", "👎")


async def test_a_strangers_invite_is_answered_once_and_left_after_the_grace_newcomers_stay(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    bot = cast.bot.user_id
    async with matrix_scene(
        settings, homeserver, cast, cast.stranger, cast.alice, cast.bob, stranger_grace=GRACE
    ) as (lore, running, [sam, alice, bob]):
        assert running.sync is not None
        # Sam and Alice invite Lore without a code; Bob opens with his code before Lore joined.
        lonely = await sam.direct_chat(bot)
        late = await alice.direct_chat(bot)
        early = await bob.direct_chat(bot)
        code = await lore.bot.create_invite(identity(cast.owner))
        await bob.say(early, f"!start {code.code}")
        refusal = await sam.reply_from(lonely, bot, "invited")
        await alice.reply_from(late, bot, "invited")
        code = await lore.bot.create_invite(identity(cast.owner))
        await alice.say(late, f"!start {code.code}")  # within the grace
        welcome = await alice.reply_from(late, bot, "Welcome")
        await bob.reply_from(early, bot, "Welcome")
        await sam.wait_until(lambda: bot not in sam.client.rooms[lonely].users)
        await running.sync.decided()  # every grace is over

        await alice.say(late, "!digest 07:30 Europe/Berlin")
        await alice.reply_from(late, bot, "at 07:30 (Europe/Berlin)")
        tomorrow = datetime.now(UTC).astimezone(ZoneInfo("Europe/Berlin")) + timedelta(days=1)
        due = tomorrow.replace(hour=7, minute=30, second=0, microsecond=0)
        assert (await lore.bot.maintenance.send_due_digests(due)).sent == 1
        assert (await lore.bot.maintenance.send_due_digests(due + timedelta(minutes=1))).sent == 0
        digest = await alice.reply_from(late, bot, "Good morning")
        await running.settled()
        told_sam = sam.said(lonely, bot)
        stayed = (bot in alice.client.rooms[late].users, bot in bob.client.rooms[early].users)
    assert refusal.body == turned_away(GRACE)
    assert refusal.body.startswith(str(NotInvitedError()))
    assert "!start CODE" in refusal.body
    assert welcome.content["m.mentions"] == {}
    assert len(told_sam) == 1
    assert digest.html.startswith("<b>Good morning, ")
    assert stayed == (True, True)
    assert await lore_user(settings, cast.stranger) is None


async def test_a_room_mention_is_answered_from_shared_knowledge_only_as_a_reply(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with matrix_scene(settings, homeserver, cast, cast.alice, cast.bob) as (
        lore,
        running,
        [alice, bob],
    ):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        await admit(lore, cast, cast.alice, cast.bob)
        await remember(lore.bot, identity(cast.alice), LOCKER, title="Locker")
        room = await alice.room(cast.bot.user_id, cast.bob.user_id)
        await bob.join(room)
        await alice.joined(room, cast.bot.user_id)

        ignored = await alice.say(room, "what is my locker code? ask nobody")
        asked = await alice.say(
            room,
            "what is my locker code?",
            **{"m.mentions": {"user_ids": [cast.bot.user_id]}},
        )
        refused = await alice.reply_from(room, cast.bot.user_id, "")
        office = await bob.say(room, f"{cast.bot.localpart}: when does the office open? @room")
        answer = await alice.reply_from(room, cast.bot.user_id, "8 am")
        await running.settled()
        spoken = alice.said(room, cast.bot.user_id)
    assert "4417" not in " ".join(said.body for said in spoken)  # invariant 11
    assert refused.content["m.relates_to"]["m.in_reply_to"]["event_id"] == asked
    assert answer.content["m.relates_to"]["m.in_reply_to"]["event_id"] == office
    assert answer.edits == 0  # a group gets the verified final answer only
    assert all(said.content["m.mentions"] == {} for said in spoken)
    assert len(spoken) == 2  # the unaddressed message got nothing
    assert ignored not in {
        said.content.get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id")
        for said in spoken
    }


def device_keys(running: RunningMatrix) -> dict[str, str]:
    """The bot device's identity keys (which a new device would not have)."""
    assert running.edge is not None
    return dict(running.edge.client.olm.account.identity_keys)


async def moved_by_backup(source: Settings, target: Settings, folder: Path) -> bool:
    """Back up `source`'s data directory (no process holds it) into `folder` and restore that
    into `target`'s; whether the restored vectors are to be embedded again."""
    await back_up_from_outside(backup_layout(source), folder, utc_now())
    return (await restore_into(backup_layout(target), folder, force=False)).reembed


async def test_an_approval_by_reaction_survives_a_restore_is_refused_to_others_and_decided_once(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    restored = cast.settings(make_settings, data_dir=tmp_path / "restored")
    async with members(homeserver, cast.owner, cast.alice, cast.bob) as [
        owner,
        alice,
        bob,
    ]:
        async with matrix_edge(settings, homeserver, cast) as (lore, running):
            keys = device_keys(running)
            code = await lore.bot.create_invite(identity(cast.owner))
            await lore.bot.redeem_invite(identity(cast.alice, "Alice"), code.code)
            asked = await alice.direct_chat(cast.bot.user_id)
            await alice.joined(asked, cast.bot.user_id)
            await alice.say(asked, "tell the owner that the printer is broken")
            told = await alice.reply_from(asked, cast.bot.user_id, "owner")
            # Nobody had a direct chat with the owner: Lore opened one and asked there.
            await owner.wait_until(lambda: owner.client.invited_rooms)
            [owners_room] = owner.client.invited_rooms
            await owner.join(owners_room)
            request = await owner.reply_from(owners_room, cast.bot.user_id, "Approval needed")
            await owner.wait_until(
                lambda: owner.said(owners_room, cast.bot.user_id)[0].reactions == ("✅", "❌")
            )
        assert told.reactions == ()
        assert "!approve " in request.body
        # The bot process is gone; its backup is restored into a new data directory, and a
        # new process starts there: the same device, with its keys and the paused turn.
        reembed = await moved_by_backup(settings, restored, tmp_path / "backup")
        async with matrix_edge(restored, homeserver, cast) as (lore, running):
            await lore.bot.maintenance.finish_restore(reembed=reembed)
            assert device_keys(running) == keys
            await owner.client.room_invite(owners_room, cast.bob.user_id)
            await bob.wait_until(lambda: owners_room in bob.client.invited_rooms)
            await bob.join(owners_room)
            await bob.react(owners_room, request.event_id, "✅")
            not_owner = await owner.reply_from(owners_room, cast.bot.user_id, "Only an owner")
            await until_handled(lore, running, await bob.react(owners_room, request.event_id, "❌"))
            await owner.react(owners_room, request.event_id, "✅")
            decided = await owner.reply_from(owners_room, cast.bot.user_id, "Approved by")
            approved = await owner.reply_from(owners_room, cast.bot.user_id, "Approved.")
            outcome = await alice.reply_from(asked, cast.bot.user_id, "delivered to the owner")
            await owner.react(owners_room, request.event_id, "❌")
            again = await owner.reply_from(owners_room, cast.bot.user_id, "already decided")
            # Bob made the owner's room a group: Lore opens a new direct chat for the message.
            await owner.wait_until(lambda: owner.client.invited_rooms)
            [direct] = owner.client.invited_rooms
            await owner.join(direct)
            delivered = await owner.reply_from(direct, cast.bot.user_id, "Message from")
            pending = (await lore.bot.pending_approvals(identity(cast.owner))).cards
            await running.settled()
            spoken = owner.said(owners_room, cast.bot.user_id)
    assert pending == ()
    assert decided.event_id == request.event_id  # the request itself, edited
    assert cast.owner.localpart in decided.body
    for reply in (not_owner, approved, again):
        assert reply.content["m.relates_to"]["m.in_reply_to"]["event_id"] == request.event_id
    assert len([said for said in spoken if "Only an owner" in said.body]) == 1
    assert delivered.body == "Message from Alice: The printer is broken."
    assert outcome.reactions == ("👍", "👎") or outcome.body


async def test_an_event_synced_again_after_a_restart_is_answered_once(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with members(homeserver, cast.alice) as [alice]:
        async with matrix_edge(settings, homeserver, cast) as (lore, running):
            await remember(lore.bot, None, text=OFFICE, title="Office hours")
            await admit(lore, cast, cast.alice)
            room = await alice.direct_chat(cast.bot.user_id)
            await alice.joined(room, cast.bot.user_id)
            await running.settled()
            client = running.edge.client if running.edge else None
            assert client is not None
            before = client.store.load_sync_token()
            await alice.say(room, "When does the office open?")
            await alice.reply_from(room, cast.bot.user_id, "Sources")
            await running.settled()
            device = client.device_id
        # As if the process had died before it stored the newer sync token.
        store = nio.store.SqliteStore(
            cast.bot.user_id, device, str(settings.data_dir), "DEFAULT_KEY", STORE_FILE
        )
        store.save_sync_token(before)
        store.database.close()
        async with matrix_edge(settings, homeserver, cast) as (lore, running):
            await running.settled()
            skipped = running.edge.deduper.skipped if running.edge else 0
            await alice.say(room, "!help")
            await alice.reply_from(room, cast.bot.user_id, "!sources")
    answers = [said for said in alice.said(room, cast.bot.user_id) if "Sources" in said.body]
    assert skipped >= 1
    assert len(answers) == 1


async def start_and_stop(lore: Lore, config: MatrixConfig) -> None:
    async with edge_on(lore, config):
        pass


async def test_a_refused_token_and_an_unreachable_homeserver_name_the_setting(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(
        make_settings,
        matrix_homeserver=homeserver.url,
        matrix_user_id=cast.bot.user_id,
        matrix_access_token="syt_not_a_real_token",
    )
    async with open_lore(settings) as lore:  # one core, two edges that cannot start
        refusing = edge_config(settings, homeserver, cast, access_token="syt_not_a_real_token")
        with pytest.raises(StartupError) as refused:
            await start_and_stop(lore, refusing)
        nowhere = edge_config(settings, homeserver, cast, homeserver="http://127.0.0.1:9")
        with pytest.raises(StartupError) as unreachable:
            await start_and_stop(lore, nowhere)
    refused_line = str(edge_start_error(settings, "matrix", refused.value))
    unreachable_line = str(edge_start_error(settings, "matrix", unreachable.value))
    assert "MATRIX_ACCESS_TOKEN" in refused_line
    assert "syt_not_a_real_token" not in refused_line
    assert "MATRIX_HOMESERVER" in unreachable_line
    assert "\n" not in refused_line + unreachable_line


@pytest.mark.slow
async def test_lore_run_with_matrix_settings_answers_and_stops_on_sigterm(
    homeserver: Homeserver, tmp_path: Path, models_dir: Path
) -> None:
    cast = cast_of(homeserver)
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / ".env").write_text(
        f"DATA_DIR={workdir / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\n"
        f"LOG_LEVEL=WARNING\nOWNERS=matrix:{cast.owner.user_id}\n"
        f"MATRIX_HOMESERVER={homeserver.url}\nMATRIX_USER_ID={cast.bot.user_id}\n"
        f"MATRIX_PASSWORD={cast.bot.password}\n"
    )
    process = await asyncio.create_subprocess_exec(
        str(LORE),
        "run",
        cwd=workdir,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=120)
        assert line.decode().startswith("Lore is running on matrix."), line
        async with members(homeserver, cast.owner) as [owner]:
            room = await owner.direct_chat(cast.bot.user_id)
            await owner.say(room, "!help")
            helped = await owner.reply_from(room, cast.bot.user_id, "!sources")
    finally:
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), timeout=60)
    assert process.stderr is not None
    errors = (await process.stderr.read()).decode()
    assert code == 0, errors
    assert "Traceback" not in errors
    assert cast.bot.password not in errors
    assert "!invite" in helped.body  # the owner's help lists owner commands
    assert (workdir / "data" / STORE_FILE).stat().st_mode & 0o077 == 0
