"""The Matrix edge on a homeserver that rate-limits it (the real Synapse, with a per-user
override far below what a streamed answer needs): every 429 is waited out as long as
`retry_after_ms` asks, and everything is answered, once."""

from __future__ import annotations

import logging

import pytest

from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.matrix.edge import cast_of, identity, matrix_scene
from tests.matrix.homeserver import Homeserver

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."


async def test_a_rate_limited_bot_waits_out_each_429_and_answers_everything_once(
    homeserver: Homeserver,
    make_settings: SettingsFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    bot = cast.bot.user_id
    async with matrix_scene(settings, homeserver, cast, cast.alice) as (lore, running, [alice]):
        await remember(lore.bot, None, text=OFFICE, title="Office hours")
        code = await lore.bot.create_invite(identity(cast.owner))
        await lore.bot.redeem_invite(identity(cast.alice), code.code)
        room = await alice.direct_chat(bot)
        await alice.joined(room, bot)
        # Two events a second for the bot: a streamed answer (a preview, its edits, the final
        # text and two reactions) and a second reply right behind it meet 429s.
        homeserver.limit_messages(bot, per_second=2, burst_count=1)
        with caplog.at_level(logging.WARNING, logger="nio"):
            await alice.say(room, "When does the office open?")
            await alice.say(room, "!help")
            answer = await alice.reply_from(room, bot, "Sources")
            await alice.reply_from(room, bot, "!sources")
            await running.settled()
            assert running.edge is not None
            last = running.edge.outbox.latest[room]
            await alice.wait_until(
                lambda: any(getattr(event, "event_id", None) == last for _, event in alice.events)
            )
        spoken = alice.said(room, bot)
    waits = [record.getMessage() for record in caplog.records if "429" in record.getMessage()]
    assert waits, "the homeserver never rate-limited the bot"
    assert all("sleeping for" in wait for wait in waits)  # each one waited out, as told
    assert len(spoken) == 2  # both replies, each one message: nothing lost, nothing twice
    [final] = [said for said in spoken if said.event_id == answer.event_id]
    assert "8 am" in final.body
    assert final.reactions == ("👍", "👎")
    assert sum("!sources" in said.body for said in spoken) == 1
