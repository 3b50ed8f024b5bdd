"""Choices made with reactions on Matrix, against the real homeserver: an owner keeps a file
Private 🔒 or Shared 🌐 (or shares it later with `!share`), and nobody else's reaction
chooses for them."""

from __future__ import annotations

from storage.document_records import HANDLE_LENGTH
from tests.conftest import SettingsFactory
from tests.matrix.edge import admit, cast_of, identity, matrix_scene, until_handled
from tests.matrix.homeserver import Homeserver
from tests.matrix.members import Member, Said

LOCKER = b"# Locker\n\nThe spare key of the blue locker hangs behind the boiler.\n"
TRAINS = b"# Trains\n\nMembers book second class train tickets ten days ahead.\n"
PLANS = b"# Plans\n\nThe garden party moves to the roof terrace in June.\n"


async def question_for(owner: Member, room: str, bot: str, name: str, data: bytes) -> Said:
    """Send a file; Lore's Private/Shared question about it, once both choices are under it."""
    await owner.send_file(room, name, data, mimetype="text/markdown")
    question = await owner.reply_from(room, bot, f"Where should I keep {name}?")

    def offered() -> bool:
        shown = {said.event_id: said for said in owner.said(room, bot)}
        return shown[question.event_id].reactions == ("🔒", "🌐")

    await owner.wait_until(offered)
    return question


async def test_an_owner_keeps_files_private_or_shared_by_reaction_or_share_others_cannot(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    bot = cast.bot.user_id
    async with matrix_scene(settings, homeserver, cast, cast.owner, cast.bob) as (
        lore,
        running,
        [owner, bob],
    ):
        await admit(lore, cast, cast.bob)
        room = await owner.direct_chat(bot)
        await owner.joined(room, bot)

        locker = await question_for(owner, room, bot, "locker.md", LOCKER)
        await owner.react(room, locker.event_id, "🔒")
        kept = await owner.reply_from(room, bot, "in your private notes")
        trains = await question_for(owner, room, bot, "trains.md", TRAINS)
        await owner.react(room, trains.event_id, "🌐")
        shared = await owner.reply_from(room, bot, "in the shared knowledge")
        handle = await lore.database.fetch_value(
            "SELECT substr(id, 1, ?) FROM documents WHERE title = 'Locker'", (HANDLE_LENGTH,)
        )
        await owner.say(room, f"!share {handle}")
        published = await owner.reply_from(room, bot, "🌐 Shared")

        # Bob joins the chat (now a room of three) and taps on the owner's question.
        plans = await question_for(owner, room, bot, "plans.md", PLANS)
        await owner.client.room_invite(room, cast.bob.user_id)
        await bob.wait_until(lambda: room in bob.client.invited_rooms)
        await bob.join(room)
        await bob.react(room, plans.event_id, "🌐")
        refused = await bob.reply_from(room, bot, "Only the person who sent it")
        await until_handled(lore, running, await bob.react(room, plans.event_id, "🔒"))
        untouched = await lore.database.fetch_value(
            "SELECT count(*) FROM documents WHERE title = 'Plans'"
        )
        await owner.react(room, plans.event_id, "🔒")
        await owner.reply_from(room, bot, "✅ Saved: Plans")
        await running.settled()
        spoken = owner.said(room, bot)
        rows = await lore.database.fetch_all(
            "SELECT d.title, d.collection, d.owner_id IS NULL AS everyone FROM documents d"
            " ORDER BY d.title, d.collection"
        )
        owner_user = await lore.bot.user_for(identity(cast.owner))
        private_owners = await lore.database.fetch_all(
            "SELECT DISTINCT owner_id FROM documents WHERE collection = 'private'"
        )
    # The question itself becomes the outcome: one message per file.
    assert kept.event_id == locker.event_id
    assert shared.event_id == trains.event_id
    assert "Locker" in published.body
    assert refused.content["m.relates_to"]["m.in_reply_to"]["event_id"] == plans.event_id
    assert untouched == 0
    assert [(row["title"], row["collection"], row["everyone"]) for row in rows] == [
        ("Locker", "knowledge", 1),
        ("Locker", "private", 0),
        ("Plans", "private", 0),
        ("Trains", "knowledge", 1),
    ]
    assert owner_user is not None
    assert [row["owner_id"] for row in private_owners] == [owner_user.id]
    assert len([said for said in spoken if "Only the person" in said.body]) == 1
