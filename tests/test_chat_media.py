"""Voice messages and pictures on Slack and Discord take the same path as on Telegram, through
the real edges and their fake APIs: a clip (Slack) or voice message (Discord) asked as a
question gets the answer led by what it said; a picture's text is kept and found."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.settings import Settings
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.slack_server import FakeSlack
from tests.media_files import drawn_text, png_bytes
from tests.slack_edge import ALICE as SLACK_ALICE
from tests.slack_edge import final_answer, join, slack, welcome_people
from tests.test_discord import ALICE as DISCORD_ALICE
from tests.test_discord import discord_edge, reply_in, send_dm, shown
from tests.test_discord import join as discord_join

SPEECH = Path(__file__).resolve().parent / "fixtures" / "speech"
QUESTION = (SPEECH / "question.ogg").read_bytes()
BOILER = "The key to the boiler room hangs on the hook next to the printer on the second floor."
SCREENSHOT = ["Error 502: Bad Gateway", "upstream nginx timed out"]


@pytest.fixture
async def slack_fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        welcome_people(server)
        yield server


@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        yield server


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="slack:U0OWNER,discord:1001,console:owner")


async def test_a_slack_clip_is_heard_and_an_image_share_is_read(
    settings: Settings, slack_fake: FakeSlack
) -> None:
    fake = slack_fake
    async with slack(settings, fake) as run:
        await remember(run.lore.bot, None, text=BOILER, title="Building keys")
        await join(run, SLACK_ALICE)
        clip = fake.add_file("F0CLIP", "audio_message.ogg", QUESTION, "audio/ogg")
        clip |= {"subtype": "slack_audio", "duration_ms": 2300}
        await run.send.event(
            run.send.dm_message(SLACK_ALICE, "", subtype="file_share", files=[clip])
        )
        answer = await final_answer(fake, fake.dm(SLACK_ALICE.id), "Building keys")
        assert answer.text.startswith("🎙 “Where is the key to the boiler room?”")

        picture = fake.add_file(
            "F0SHOT", "error.png", png_bytes(drawn_text(SCREENSHOT)), "image/png"
        )
        upload = run.send.dm_message(SLACK_ALICE, "", subtype="file_share", files=[picture])
        await run.send.event(upload)
        await fake.wait_for_call(lambda c: c.method == "chat.update" and "✅ Saved" in c.text)
        await run.send.event(run.send.dm_message(SLACK_ALICE, "What did upstream nginx do?"))
        found = await final_answer(fake, fake.dm(SLACK_ALICE.id), "timed out")
    assert "Error 502: Bad Gateway" in found.text  # the picture, cited


async def test_a_discord_voice_message_is_heard_and_an_image_attachment_is_read(
    settings: Settings, discord_fake: FakeDiscord
) -> None:
    fake = discord_fake
    async with discord_edge(settings, fake) as (lore, _):
        await remember(lore.bot, None, text=BOILER, title="Building keys")
        await discord_join(fake, DISCORD_ALICE)
        dm = fake.dm_channel(DISCORD_ALICE)
        voice = fake.voice_attachment(QUESTION, seconds=2.3)
        send_dm(fake, DISCORD_ALICE, "", attachments=[voice], flags=1 << 13)
        answer = await reply_in(fake, dm, "Building keys")
        assert shown(answer).startswith("🎙 “Where is the key to the boiler room?”")
        steps = [shown(p) for p in fake.in_channel(dm) if p.message_id == answer.message_id]
        assert steps[0] == "🎙 Listening…"  # the message that will hold the answer, at once

        picture = fake.attachment("error.png", png_bytes(drawn_text(SCREENSHOT)))
        send_dm(fake, DISCORD_ALICE, "", attachments=[picture])
        await reply_in(fake, dm, "✅ Saved")
        send_dm(fake, DISCORD_ALICE, "What did upstream nginx do?")
        found = await reply_in(fake, dm, "timed out")
    assert "Error 502: Bad Gateway" in shown(found)  # the picture, cited
