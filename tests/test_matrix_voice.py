"""Voice messages on Matrix, against the real homeserver: one recorded in a direct chat is
heard like the same words typed (a cited answer led by what was heard), also in an
encrypted chat; an audio file that is not a voice message is kept like any file; in a group
room a voice message is heard only as a reply to Lore."""

from __future__ import annotations

from pathlib import Path

import nio

from adapters.matrix.voice_chat import VOICE
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.matrix.edge import admit, cast_of, matrix_scene, until_handled
from tests.matrix.homeserver import Homeserver
from tests.matrix.members import Member

SPEECH = Path(__file__).resolve().parent / "fixtures" / "speech"
BOILER = "The key to the boiler room hangs on the hook next to the printer on the second floor."
HEARD = "🎙 “Where is the key to the boiler room?”"


async def send_voice(member: Member, room: str, **extra: object) -> str:
    """What Element sends for a recorded voice message."""
    data = (SPEECH / "question.ogg").read_bytes()
    return await member.send_file(
        room,
        "Voice message.ogg",
        data,
        msgtype="m.audio",
        mimetype="audio/ogg",
        info={"duration": 2100},
        **{VOICE: {}, "org.matrix.msc1767.audio": {"duration": 2100, "waveform": [0, 512]}},
        **extra,
    )


async def test_a_voice_message_in_a_dm_is_heard_encrypted_too_an_audio_file_is_kept(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings, max_file_bytes=1024 * 1024)
    bot = cast.bot.user_id
    async with matrix_scene(settings, homeserver, cast, cast.alice) as (lore, _, [alice]):
        await admit(lore, cast, cast.alice)
        await remember(lore.bot, None, text=BOILER, title="Building keys")
        room = await alice.direct_chat(bot)
        await alice.joined(room, bot)
        await send_voice(alice, room)
        answer = await alice.reply_from(room, bot, "Sources", within=120)

        secret = await alice.direct_chat(bot, encrypted=True)
        await alice.joined(secret, bot)
        await send_voice(alice, secret)
        sealed = await alice.reply_from(secret, bot, "Sources", within=120)
        in_secret = [e for r, e in alice.events if r == secret and e.sender == bot]

        data = (SPEECH / "question.ogg").read_bytes()
        await alice.send_file(room, "memo.ogg", data, msgtype="m.audio", mimetype="audio/ogg")
        kept = await alice.reply_from(room, bot, "in your private notes", within=120)

    assert answer.body.startswith(HEARD)
    assert "Building keys" in answer.body
    assert answer.edits >= 1  # "🎙 Listening…" first, then the words and the answer
    assert sealed.body.startswith(HEARD)
    # The voice message was decrypted to be heard, and the answer sent encrypted only.
    sent = [e for e in in_secret if not isinstance(e, nio.RoomMemberEvent)]
    assert sent
    assert all(event.decrypted for event in sent)
    assert kept.body.startswith(
        "✅ Saved: Where is the key to the boiler room?"
    )  # kept, titled by its words


async def test_in_a_room_a_voice_message_is_heard_only_as_a_reply_to_lore(
    homeserver: Homeserver, make_settings: SettingsFactory
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings, max_file_bytes=1024 * 1024)
    bot = cast.bot.user_id
    async with matrix_scene(settings, homeserver, cast, cast.owner, cast.alice) as (
        lore,
        running,
        [owner, alice],
    ):
        await admit(lore, cast, cast.alice)
        await remember(lore.bot, None, text=BOILER, title="Building keys")
        room = await owner.room(bot, cast.alice.user_id)
        await owner.joined(room, bot)
        await alice.join(room)
        await owner.joined(room, cast.alice.user_id)
        ignored = await send_voice(alice, room)
        await until_handled(lore, running, ignored, within=60)
        await owner.say(room, f"{bot} where is the key to the boiler room?")
        first = await alice.reply_from(room, bot, "Sources", within=60)
        await send_voice(
            alice, room, **{"m.relates_to": {"m.in_reply_to": {"event_id": first.event_id}}}
        )
        heard = await alice.reply_from(room, bot, HEARD, within=120)

    assert not first.body.startswith(HEARD)  # the voice message before was left alone
    assert "Building keys" in heard.body
    assert len([s for s in alice.said(room, bot) if s.body.startswith(HEARD)]) == 1
