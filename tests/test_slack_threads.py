"""Slack answers that do not fit one message or one moment: a long answer written by a model
(split into parts, the verifier's correction replacing what was streamed), and a request
made in a channel whose outcome comes back, after the owner's tap, in that thread."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.slack_edge import ALICE, CHANNEL, OWNER, identity, join, slack, welcome_people

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
# A notice that holds markup a careless edge would turn into a broadcast and a mention.
NOTICE = "Notice to the <!channel>: the office opens at 8 am, ask <@U0OWNER> & co."


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        welcome_people(server)
        yield server


async def test_a_long_corrected_answer_replaces_its_stream_and_continues_in_the_thread(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI, fake: FakeSlack
) -> None:
    settings = llm_settings(owners="slack:U0OWNER,console:owner", max_answer_tokens=4000)
    sentence = "The office opens at **8 am** on weekdays [1]. "
    async with slack(settings, fake) as run:
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        fake_openai.enqueue_tool_call("search_knowledge", json.dumps({"query": "office hours"}))
        # The first sentence cites a source that exists and one that does not ([7]).
        answer = "The office opens at 8 am [1][7]. " + sentence * 150
        fake_openai.enqueue_text(answer, chunks=40, hold_after=20)
        thread = fake.next_ts()
        question = run.send.dm_message(ALICE, "When does the office open?", thread_ts=thread)
        await run.send.event(question)
        dm = fake.dm(ALICE.id)
        await fake.wait_for_call(lambda c: c.method == "chat.startStream" and "[7]" in c.text)
        fake_openai.release()
        await fake.wait_until(lambda: any(c.buttons() for c in fake.calls if c.channel == dm))
    [stream] = fake.of("chat.startStream", channel=dm)
    streamed = stream.text + "".join(c.text for c in fake.of("chat.appendStream", ts=stream.ts))
    [first] = fake.of("chat.update", ts=stream.ts)
    rest = [c for c in fake.of("chat.postMessage", channel=dm) if c.at > first.at]
    parts = [first, *rest]
    assert len(parts) >= 3  # about 7,000 characters in parts of at most 3,000
    assert all(len(part.text) <= 3000 for part in parts)
    assert all(part.params.get("thread_ts") == thread for part in rest)
    assert [bool(part.buttons()) for part in parts] == [False] * (len(parts) - 1) + [True]
    assert streamed.startswith("The office opens at 8 am [1][7]")  # the model wrote it...
    assert all("[7]" not in part.text for part in parts)  # ...the verified answer has not
    assert "*8 am*" in first.text  # markdown bold as mrkdwn bold
    assert parts[-1].text.rstrip().endswith("Office hours")


async def test_a_request_made_in_a_channel_gets_its_outcome_in_that_thread(
    make_settings: SettingsFactory, fake: FakeSlack
) -> None:
    settings = make_settings(owners="slack:U0OWNER,console:owner")
    async with slack(settings, fake) as run:
        await join(run, ALICE)
        mention = run.send.mention(
            ALICE, f"<@{fake.bot_user_id}> tell the owner that the printer is broken", CHANNEL
        )
        await run.send.event(mention)
        request = await fake.wait_for_call(lambda c: "Approval needed" in c.text)
        await fake.wait_for("chat.postMessage", channel=CHANNEL)
        await run.send.action(run.send.tap(OWNER, request, "❌ Reject"))
        await fake.wait_for("chat.update", ts=request.ts)
        await fake.wait_for("chat.postMessage", channel=CHANNEL, count=2)
        pending = (await run.lore.bot.pending_approvals(identity(OWNER))).cards
    told, outcome = fake.of("chat.postMessage", channel=CHANNEL)
    assert told.params["thread_ts"] == mention["ts"]
    assert outcome.params["thread_ts"] == mention["ts"]
    assert outcome.text != told.text
    assert pending == ()
    assert not [c for c in fake.calls if c.text.startswith("Message from")]


@pytest.mark.parametrize("in_thread", [True, False], ids=["streamed", "edited"])
async def test_a_model_cannot_broadcast_or_mention_anyone_through_an_answer(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI, fake: FakeSlack, in_thread: bool
) -> None:
    settings = llm_settings(owners="slack:U0OWNER,console:owner")
    async with slack(settings, fake) as run:
        await remember(run.lore.bot, None, text=NOTICE, title="Office hours")
        await join(run, ALICE)
        dm = fake.dm(ALICE.id)
        fake_openai.enqueue_tool_call("search_knowledge", json.dumps({"query": "office"}))
        fake_openai.enqueue_text(
            "<!channel> The office opens at 8 am [1], ask <@U0OWNER> & co. Happy to help! "
            "Let me know if you have any other questions, thanks!",
            chunks=8,
            hold_after=7,
        )
        thread = fake.next_ts() if in_thread else None
        await run.send.event(run.send.dm_message(ALICE, "When?", thread_ts=thread))
        await fake.wait_until(lambda: any("!channel" in c.text for c in fake.calls))
        fake_openai.release()
        await fake.wait_until(lambda: any(c.buttons() for c in fake.calls if c.channel == dm))
    shown = [c.text for c in fake.calls if c.channel == dm and "!channel" in c.text]
    assert len(shown) >= 2  # what was shown while it was written, and the final answer
    assert all("&lt;!channel&gt;" in text and "<!channel>" not in text for text in shown)
    assert all("<@U0OWNER>" not in text for text in shown)
