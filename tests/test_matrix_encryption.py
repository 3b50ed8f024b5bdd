"""End-to-end encryption on Matrix, against the real homeserver: an encrypted direct chat takes
a file and is answered encrypted only, and a message whose room key never reaches Lore's
device is logged and its sender told once."""

from __future__ import annotations

import logging

import nio
import pytest

from adapters.matrix.dispatch import UNREADABLE
from tests.conftest import SettingsFactory
from tests.matrix.edge import admit, cast_of, matrix_scene, until_handled
from tests.matrix.homeserver import Homeserver

HANDBOOK = (
    "# Travel handbook\n\nBooking trains: every member books second class train tickets "
    "through the Zephyr travel portal at least ten days ahead.\n"
)


async def test_an_encrypted_dm_takes_a_file_answers_encrypted_and_says_once_what_it_cannot_read(
    homeserver: Homeserver, make_settings: SettingsFactory, caplog: pytest.LogCaptureFixture
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    bot = cast.bot.user_id
    async with matrix_scene(settings, homeserver, cast, cast.alice, key_wait=1.0) as (
        lore,
        running,
        [alice],
    ):
        await admit(lore, cast, cast.alice)
        room = await alice.direct_chat(bot, encrypted=True)
        await alice.joined(room, bot)
        await alice.send_file(room, "handbook.md", HANDBOOK.encode(), mimetype="text/markdown")
        saved = await alice.reply_from(room, bot, "Saved")
        await alice.say(room, "How do members book train tickets?")
        answer = await alice.reply_from(room, bot, "Sources")
        await running.settled()
        from_bot = [event for room_id, event in alice.events if event.sender == bot]
        stats = await lore.bot.maintenance.stats()

        # Alice's client now shares room keys with verified devices only: in a new chat Lore's
        # device gets none, and cannot read what she writes there.
        await alice.withhold_keys_from(room, bot)
        unread = await alice.direct_chat(bot, encrypted=True)
        await alice.joined(unread, bot)
        with caplog.at_level(logging.WARNING, logger="adapters.matrix"):
            first = await alice.say(unread, "When does the office open?")
            told = await alice.reply_from(unread, bot, "could not read")
            second = await alice.say(unread, "Are you there?")
            await until_handled(lore, running, second)
        assert running.edge is not None
        newest = running.edge.outbox.latest[unread]
        spoken = alice.said(unread, bot)
    assert "Travel handbook" in saved.body
    assert "Zephyr" in answer.body
    assert stats.private_documents == 1
    # Never in the clear: every message, edit and reaction of the bot's was encrypted.
    sent = [event for event in from_bot if not isinstance(event, nio.RoomMemberEvent)]
    assert sent
    assert all(event.decrypted for event in sent), [type(event).__name__ for event in sent]
    # The unreadable messages: both logged, the sender told once, in reply to the first.
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert f"could not decrypt event {first}" in logged
    assert f"could not decrypt event {second}" in logged
    assert told.body == UNREADABLE
    assert told.content["m.relates_to"]["m.in_reply_to"]["event_id"] == first
    assert newest == told.event_id  # nothing said about the second one
    assert len(spoken) == 1
