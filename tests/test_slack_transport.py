"""How Slack reaches the Slack edge and how the edge reaches Slack: signed HTTP-mode requests
(bad and stale signatures refused, retried deliveries answered once, also after a
restart), Socket Mode envelopes acknowledged, 429s waited out, streaming falling back to
edits, mrkdwn that survives being split, and the settings that switch the edge on."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from adapters.slack import SlackEdge
from adapters.slack.mrkdwn import Piece, escape, final_pieces, render, rich_pieces, split
from bot.app import open_lore
from bot.app.edges import EDGE_SETTINGS, platform_edges
from bot.errors import StartupError
from bot.events import CitationEvent
from bot.replies import bold, link, rich
from bot.settings import Settings, SettingsError, load_settings
from bot.turn_view import FinalAnswer, FinalKind
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.slack_server import FakeSlack
from tests.slack_edge import (
    ALICE,
    SECRET,
    STRANGER,
    final_answer,
    in_dm,
    join,
    slack,
    welcome_people,
)

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        welcome_people(server)
        yield server


@pytest.fixture
def slack_settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="slack:U0OWNER,console:owner")


def answers_to(fake: FakeSlack, channel: str, needle: str) -> int:
    return len(
        [
            call
            for call in fake.calls
            if call.channel == channel
            and call.method in {"chat.postMessage", "chat.update"}
            and needle in call.text
            and "*Sources*" in call.text
        ]
    )


# -- HTTP mode ------------------------------------------------------------------------------


async def test_bad_and_stale_signatures_get_401_and_change_nothing(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        send = run.send
        body = json.dumps(send.envelope(send.dm_message(STRANGER, "hello?"))).encode()
        forged = await send.post(body, "application/json", secret="not-the-secret")
        stale = await send.post(body, "application/json", timestamp=int(time.time()) - 600)
        unsigned_form = send.command(STRANGER, "help", fake.dm(STRANGER.id))
        tampered = await send.post(
            b"x" + json.dumps(unsigned_form).encode(), "application/json", secret="nope"
        )
        challenge = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "t"})
        verified = await send.post(challenge.encode(), "application/json")
        good = await send.post(body, "application/json")
        await fake.wait_for("chat.postMessage", channel=fake.dm(STRANGER.id))
    assert (forged.status_code, stale.status_code, tampered.status_code) == (401, 401, 401)
    assert verified.json() == {"challenge": "c-123"}
    assert good.status_code == 200
    assert len(in_dm(fake, STRANGER)) == 1  # only the signed delivery was handled


async def test_a_retried_event_is_answered_once_even_after_a_restart(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        question = run.send.envelope(run.send.dm_message(ALICE, "When does the office open?"))
        first = await run.send.event_body(question)
        retried = await run.send.event_body(question, retry=1)  # while the first is running
        assert (first.status_code, retried.status_code) == (200, 200)
        await final_answer(fake, fake.dm(ALICE.id), "*Sources*")
        again = await run.send.event_body(question, retry=2)  # after it was answered
        assert again.status_code == 200
        await run.send.event(run.send.dm_message(ALICE, "marker: what is open at 8 am?"))
        await fake.wait_until(lambda: answers_to(fake, fake.dm(ALICE.id), "8 am") >= 2)
    async with slack(slack_settings, fake) as run:
        await run.send.event_body(question, retry=3)
        await run.send.slash(run.send.command(ALICE, "link", fake.dm(ALICE.id)))
        await fake.wait_for_call(lambda c: "Linking accounts" in c.text)
    previews = [c for c in in_dm(fake, ALICE) if c.text.startswith("⏳")]
    assert len(previews) == 2  # the question once, the marker once
    assert answers_to(fake, fake.dm(ALICE.id), "8 am") == 2


# -- Socket Mode ----------------------------------------------------------------------------


async def test_socket_mode_connects_with_the_app_token_and_acknowledges_each_envelope(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake, app_token=fake.app_token, signing_secret=None) as run:
        assert run.edge.http is None
        [opened] = fake.of("apps.connections.open")
        assert opened.token == fake.app_token
        event = run.send.envelope(run.send.dm_message(STRANGER, "hello?"))
        await fake.push(
            {
                "envelope_id": "env-1",
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": 0,
                "retry_reason": "",
                "payload": event,
            }
        )
        ack = await fake.wait_for_ack("env-1")
        told = await fake.wait_for("chat.postMessage", channel=fake.dm(STRANGER.id))
        assert "invited" in told.text
        command = run.send.command(STRANGER, "help", fake.dm(STRANGER.id))
        await fake.push({"envelope_id": "env-2", "type": "slash_commands", "payload": command})
        await fake.wait_for_ack("env-2")
        helped = await fake.wait_for("chat.postMessage", channel=fake.dm(STRANGER.id), count=2)
        await fake.push(
            {
                "envelope_id": "env-3",
                "type": "events_api",
                "retry_attempt": 1,
                "retry_reason": "timeout",
                "payload": event,
            }
        )
        await fake.wait_for_ack("env-3")
    assert ack == {"envelope_id": "env-1"}
    assert "/lore help" in helped.text
    assert len(in_dm(fake, STRANGER)) == 2  # the retried envelope was not answered again


async def test_a_wrong_token_fails_the_start_with_slacks_error_and_no_secret(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    with pytest.raises(StartupError, match=r"SLACK_APP_TOKEN \(invalid_auth\)") as app:
        async with slack(slack_settings, fake, app_token="xapp-wrong", signing_secret=None):
            pass
    with pytest.raises(StartupError, match=r"SLACK_BOT_TOKEN \(invalid_auth\)") as bot:
        async with slack(slack_settings, fake, bot_token="xoxb-wrong-secret"):
            pass
    assert "xapp-wrong" not in str(app.value)
    assert "xoxb-wrong-secret" not in str(bot.value)


# -- limits and delivery --------------------------------------------------------------------


async def test_a_429_during_streaming_is_waited_out_not_dropped(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    async with slack(slack_settings, fake) as run:
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        fake.fail_next("chat.startStream", retry_after=1)
        question = run.send.dm_message(ALICE, "When does the office open?", thread_ts="1.0")
        await run.send.event(question)
        answer = await final_answer(fake, fake.dm(ALICE.id), "*Sources*")
    refused, started = fake.of("chat.startStream")  # refused with 429, then sent again
    assert (refused.status, started.status) == (429, 200)
    assert started.at - refused.at >= 1.0
    assert answer.params["ts"] == started.ts
    assert "8 am" in answer.text


async def test_without_the_streaming_api_one_message_is_posted_and_edited(
    slack_settings: Settings, fake: FakeSlack
) -> None:
    fake.disable("chat.startStream")
    fake.disable("assistant.threads.setStatus")
    async with slack(slack_settings, fake) as run:
        await remember(run.lore.bot, None, text=OFFICE, title="Office hours")
        await join(run, ALICE)
        thread = fake.next_ts()
        question = run.send.dm_message(ALICE, "When does the office open?", thread_ts=thread)
        await run.send.event(question)
        answer = await final_answer(fake, fake.dm(ALICE.id), "*Sources*")
        again = run.send.dm_message(ALICE, "When does the office close?", thread_ts=thread)
        await run.send.event(again)
        await fake.wait_until(lambda: answers_to(fake, fake.dm(ALICE.id), "6 pm") >= 1)
    assert len(fake.of("chat.startStream")) == 1  # learnt once: not asked again
    assert len(fake.of("assistant.threads.setStatus")) == 1
    preview = next(c for c in in_dm(fake, ALICE) if c.at <= answer.at and c.ts == answer.ts)
    assert preview.params.get("thread_ts") == thread  # where the question was
    assert answer.method == "chat.update"  # the preview message became the answer
    assert "8 am" in answer.text
    assert fake.of("chat.appendStream") == []


# -- mrkdwn ---------------------------------------------------------------------------------


def _visible(mrkdwn: str) -> str:
    text = re.sub(r"<([^|>]+)\|([^>]*)>", r"\2", mrkdwn)
    return text.replace("*", "").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def test_rich_text_escapes_slacks_control_characters_and_keeps_links() -> None:
    body = rich("Tom & Jerry <b> ", bold("saved"), " ", link("a|b & c", "https://e.org/?a=1&b=2"))
    rendered = render(rich_pieces(body))
    assert rendered == "Tom &amp; Jerry &lt;b&gt; *saved* <https://e.org/?a=1&amp;b=2|a|b &amp; c>"
    assert escape("<@U1>") == "&lt;@U1&gt;"  # user text cannot mention anyone


def test_a_long_answer_splits_within_a_section_without_breaking_markup() -> None:
    citation = CitationEvent(1, "d1", "Handbook", "https://e.org/handbook?x=1&y=2", private=False)
    sentence = "Read **the handbook** & `code <x>` first [1]. "
    final = FinalAnswer(sentence * 300, (citation,), FinalKind.ANSWER, False, "t1")
    parts = split(final_pieces(final))
    assert len(parts) > 1
    for part in parts:
        assert len(part) <= 3000
        assert part.count("*") % 2 == 0
        assert part.count("`") % 2 == 0
        assert not re.search(r"&[a-z]*$", part)  # no entity cut in two
        assert part.count("<") == part.count(">")
    joined = "".join(_visible(part).replace("`", "") for part in parts)
    expected = _visible(render(final_pieces(final))).replace("`", "")
    assert re.sub(r"\s+", "", joined) == re.sub(r"\s+", "", expected)
    assert "<https://e.org/handbook?x=1&amp;y=2|[1]>" in parts[0]
    assert parts[-1].endswith("<https://e.org/handbook?x=1&amp;y=2|Handbook>")


def test_one_styled_run_longer_than_a_part_is_closed_and_reopened() -> None:
    parts = split([Piece("word " * 1000, "*")], limit=200)
    assert all(part.startswith("*") and part.endswith("*") for part in parts)
    assert all(len(part) <= 200 for part in parts)


# -- settings -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"slack_bot_token": "xoxb-1"}, "SLACK_APP_TOKEN"),
        ({"slack_bot_token": "xapp-1", "slack_app_token": "xapp-2"}, "xoxb-"),
        ({"slack_bot_token": "xoxb-1", "slack_app_token": "xoxb-2"}, "xapp-"),
        ({"slack_http_port": 70000}, "SLACK_HTTP_PORT"),
    ],
)
def test_slack_settings_are_checked_at_start(overrides: dict[str, object], words: str) -> None:
    with pytest.raises(SettingsError, match=words):
        load_settings(_env_file=None, **overrides)


def test_slack_secrets_are_not_printed() -> None:
    settings = load_settings(
        _env_file=None, slack_bot_token="xoxb-s3cret", slack_signing_secret="sign-s3cret"
    )
    assert "s3cret" not in repr(settings)
    assert "s3cret" not in str(settings.model_dump())


async def test_lore_run_starts_slack_when_its_token_is_set(
    make_settings: SettingsFactory, fake: FakeSlack
) -> None:
    settings = make_settings(
        slack_bot_token=fake.bot_token, slack_signing_secret=SECRET, slack_api_url=fake.api_url
    )
    assert "SLACK_BOT_TOKEN" in EDGE_SETTINGS
    async with open_lore(settings) as lore:
        edges = await platform_edges(lore)
    assert [type(edge) for edge in edges] == [SlackEdge]
    assert edges[0].platform == "slack"


def test_the_manifest_in_the_docs_asks_for_what_the_edge_uses() -> None:
    import yaml  # noqa: PLC0415 - only this test reads YAML

    page = (Path(__file__).resolve().parents[1] / "docs" / "slack.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", page, re.DOTALL)
    socket, http = (yaml.safe_load(block) for block in blocks)
    scopes = set(socket["oauth_config"]["scopes"]["bot"])
    assert scopes >= {"app_mentions:read", "chat:write", "im:history", "im:read", "im:write"}
    assert scopes >= {"files:read", "commands", "users:read", "assistant:write"}
    assert set(socket["settings"]["event_subscriptions"]["bot_events"]) == {
        "app_mention",
        "message.im",
    }
    assert [c["command"] for c in socket["features"]["slash_commands"]] == ["/lore"]
    assert socket["settings"]["interactivity"]["is_enabled"] is True
    assert socket["settings"]["socket_mode_enabled"] is True
    urls = {
        http["settings"]["event_subscriptions"]["request_url"],
        http["settings"]["interactivity"]["request_url"],
        http["features"]["slash_commands"][0]["url"],
    }
    assert {url.rsplit("/", 2)[-2:] == ["slack", "events"] for url in urls} == {True}
    assert http["settings"]["socket_mode_enabled"] is False


MALFORMED = [
    ("not-a-number", "v0=" + "0" * 64),
    ("1.7e9", "v0=" + "0" * 64),
    (None, "v0=" + "0" * 64),
    ("1700000000", "sha256=abc"),
    ("1700000000", None),
]


async def test_row_i_malformed_signing_headers_get_401_and_one_warning_without_traceback(
    slack_settings: Settings, fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    async with slack(slack_settings, fake) as run:
        body = json.dumps(run.send.envelope(run.send.dm_message(STRANGER, "hello?"))).encode()
        statuses = []
        with caplog.at_level(logging.INFO):
            async with httpx.AsyncClient() as client:
                for timestamp, signature in MALFORMED:
                    headers = {"Content-Type": "application/json"}
                    if timestamp is not None:
                        headers["X-Slack-Request-Timestamp"] = timestamp
                    if signature is not None:
                        headers["X-Slack-Signature"] = signature
                    answer = await client.post(run.send.url, content=body, headers=headers)
                    statuses.append(answer.status_code)
        good = await run.send.post(body, "application/json")
        await fake.wait_for("chat.postMessage", channel=fake.dm(STRANGER.id))
    assert statuses == [401] * len(MALFORMED)
    assert good.status_code == 200
    # One line for the first (the rest within the minute are counted, not logged).
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(noisy) == 1
    assert noisy[0].levelno == logging.WARNING
    assert noisy[0].exc_info is None
    assert "malformed X-Slack-Request-Timestamp" in noisy[0].getMessage()
