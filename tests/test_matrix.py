"""The Matrix edge end to end against a real Synapse homeserver (tests/matrix/homeserver.py),
with real nio clients as the people; the core is the real one with the offline model.
No fake anywhere: what a test asserts is what a Matrix client would show."""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import nio
import pytest

from adapters.matrix.config import STORE_FILE
from bot.app import open_lore
from bot.app.edge_failures import edge_start_error
from bot.errors import NotInvitedError, StartupError
from bot.settings import Settings
from storage.users import User
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.matrix.edge import cast_of, identity, matrix_edge, members, until_handled
from tests.matrix.homeserver import Account, Homeserver


async def lore_user(settings: Settings, account: Account) -> User | None:
    """Who Lore thinks an account is, read after the edge stopped."""
    async with open_lore(settings) as core:
        return await core.bot.user_for(identity(account))


LORE = Path(sys.executable).parent / "lore"
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
LOCKER = "Alice's locker code is 4417 and the spare key hangs behind the boiler."


async def test_a_dm_question_streams_to_a_cited_answer_with_feedback_reactions(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with (
        matrix_edge(settings, homeserver, cast) as (lore, running),
        members(homeserver, tmp_path, cast.alice) as [alice],
    ):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        code = await lore.bot.create_invite(identity(cast.owner))
        await lore.bot.redeem_invite(identity(cast.alice), code.code)
        room = await alice.direct_chat(cast.bot.user_id)
        await alice.joined(room, cast.bot.user_id)
        await alice.say(room, "When does the office open?")
        answer = await alice.reply_from(room, cast.bot.user_id, "Sources")
        assert "8 am" in answer.body
        assert "[1]" in answer.body
        assert "<b>Sources</b>" in answer.html
        assert answer.edits >= 1  # streamed into one message, then edited into the answer
        assert answer.content["m.mentions"] == {}
        await alice.wait_until(lambda: len(alice.said(room, cast.bot.user_id)[-1].reactions) == 2)
        [final] = alice.said(room, cast.bot.user_id)
        assert final.reactions == ("👍", "👎")
        await until_handled(lore, running, await alice.react(room, final.event_id, "👍"))
        row = await lore.database.fetch_one("SELECT value FROM feedback")
    assert row is not None
    assert row["value"] == 1


async def test_a_strangers_invite_is_answered_once_and_left_a_newcomer_with_a_code_stays(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with (
        matrix_edge(settings, homeserver, cast) as (lore, running),
        members(homeserver, tmp_path, cast.stranger, cast.alice) as [sam, alice],
    ):
        lonely = await sam.direct_chat(cast.bot.user_id)
        refusal = await sam.reply_from(lonely, cast.bot.user_id, "invited")
        assert refusal.body == str(NotInvitedError())
        await sam.wait_until(lambda: cast.bot.user_id not in sam.client.rooms[lonely].users)
        assert len(sam.said(lonely, cast.bot.user_id)) == 1

        # A newcomer opens the chat with the code before Lore has even joined.
        code = await lore.bot.create_invite(identity(cast.owner))
        welcome_room = await alice.direct_chat(cast.bot.user_id)
        await alice.say(welcome_room, f"!start {code.code}")
        welcome = await alice.reply_from(welcome_room, cast.bot.user_id, "Welcome")
        assert welcome.content["m.mentions"] == {}
        await alice.say(welcome_room, "!digest 07:30 Europe/Berlin")
        await alice.reply_from(welcome_room, cast.bot.user_id, "at 07:30 (Europe/Berlin)")
        tomorrow = datetime.now(UTC).astimezone(ZoneInfo("Europe/Berlin")) + timedelta(days=1)
        due = tomorrow.replace(hour=7, minute=30, second=0, microsecond=0)
        assert (await lore.bot.maintenance.send_due_digests(due)).sent == 1
        assert (await lore.bot.maintenance.send_due_digests(due + timedelta(minutes=1))).sent == 0
        digest = await alice.reply_from(welcome_room, cast.bot.user_id, "Good morning")
        await running.settled()
    assert digest.html.startswith("<b>Good morning, ")
    assert cast.bot.user_id in alice.client.rooms[welcome_room].users
    assert await lore_user(settings, cast.stranger) is None


async def test_a_room_mention_is_answered_from_shared_knowledge_only_as_a_reply(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with (
        matrix_edge(settings, homeserver, cast) as (lore, running),
        members(homeserver, tmp_path, cast.alice, cast.bob) as [alice, bob],
    ):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        for account in (cast.alice, cast.bob):
            code = await lore.bot.create_invite(identity(cast.owner))
            await lore.bot.redeem_invite(identity(account), code.code)
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


async def test_an_approval_by_reaction_survives_a_restart_is_refused_to_others_and_decided_once(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with members(homeserver, tmp_path, cast.owner, cast.alice, cast.bob) as [
        owner,
        alice,
        bob,
    ]:
        async with matrix_edge(settings, homeserver, cast) as (lore, _):
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
        # The bot process is gone; a new one starts on the same data directory and device.
        async with matrix_edge(settings, homeserver, cast) as (lore, running):
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


HANDBOOK = (
    "# Travel handbook\n\nBooking trains: every member books second class train tickets "
    "through the Zephyr travel portal at least ten days ahead.\n"
)


async def test_an_encrypted_dm_takes_a_file_and_answers_encrypted(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with (
        matrix_edge(settings, homeserver, cast) as (lore, running),
        members(homeserver, tmp_path, cast.alice) as [alice],
    ):
        code = await lore.bot.create_invite(identity(cast.owner))
        await lore.bot.redeem_invite(identity(cast.alice), code.code)
        room = await alice.direct_chat(cast.bot.user_id, encrypted=True)
        await alice.joined(room, cast.bot.user_id)
        await alice.send_file(room, "handbook.md", HANDBOOK.encode(), mimetype="text/markdown")
        saved = await alice.reply_from(room, cast.bot.user_id, "Saved")
        await alice.say(room, "How do members book train tickets?")
        answer = await alice.reply_from(room, cast.bot.user_id, "Sources")
        await running.settled()
        from_bot = [event for room_id, event in alice.events if event.sender == cast.bot.user_id]
        stats = await lore.bot.maintenance.stats()
    assert "Travel handbook" in saved.body
    assert "Zephyr" in answer.body
    assert stats.private_documents == 1
    # Never in the clear: every message, edit and reaction of the bot's was encrypted.
    sent = [event for event in from_bot if not isinstance(event, nio.RoomMemberEvent)]
    assert sent
    assert all(event.decrypted for event in sent), [type(event).__name__ for event in sent]


async def test_an_event_synced_again_after_a_restart_is_answered_once(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with members(homeserver, tmp_path, cast.alice) as [alice]:
        async with matrix_edge(settings, homeserver, cast) as (lore, running):
            await remember(lore.bot, None, text=OFFICE, title="Office hours")
            code = await lore.bot.create_invite(identity(cast.owner))
            await lore.bot.redeem_invite(identity(cast.alice), code.code)
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
    with pytest.raises(StartupError) as refused:
        async with matrix_edge(settings, homeserver, cast, access_token="syt_not_a_real_token"):
            pass
    with pytest.raises(StartupError) as unreachable:
        async with matrix_edge(settings, homeserver, cast, homeserver="http://127.0.0.1:9"):
            pass
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
        async with members(homeserver, tmp_path, cast.owner) as [owner]:
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
