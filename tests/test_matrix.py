"""The Matrix edge end to end against a real Synapse homeserver (tests/matrix/homeserver.py),
with real nio clients as the people; the core is the real one with the offline model.
No fake anywhere: what a test asserts is what a Matrix client would show."""

from __future__ import annotations

from pathlib import Path

from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.matrix.edge import cast_of, identity, matrix_edge, members
from tests.matrix.homeserver import Homeserver

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
LOCKER = "Alice's locker code is 4417 and the spare key hangs behind the boiler."


async def test_a_dm_question_streams_to_a_cited_answer_with_feedback_reactions(
    homeserver: Homeserver, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    cast = cast_of(homeserver)
    settings = cast.settings(make_settings)
    async with (
        matrix_edge(settings, homeserver, cast) as (lore, _),
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
        await alice.react(room, final.event_id, "👍")
        row = None
        while row is None:
            row = await lore.database.fetch_one("SELECT value FROM feedback")
    assert row["value"] == 1
