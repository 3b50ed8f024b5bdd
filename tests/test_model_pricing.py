"""What a model's calls cost, said where the owner looks: a model with no price served from a
loopback or private address is free; any other unpriced model is charged an assumed high rate,
named at start and in `/budget` with the setting that fixes it (LLM_PRICES); a secret too
short to keep out of the logs is refused at start."""

from __future__ import annotations

import logging

import pytest

from bot.app import open_lore
from bot.events import ChatRef
from bot.replies import Message
from bot.settings import SettingsError, load_settings
from tests.chat_turns import OWNER, ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

CHAT = ChatRef(OWNER.platform, OWNER.platform_user_id)
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."


async def budget_text(settings_factory: SettingsFactory, **overrides: object) -> str:
    async with open_lore(settings_factory(**overrides)) as core:
        reply = await core.bot.run_command(OWNER, CHAT, "budget")
    assert isinstance(reply, Message)
    return "".join(span.text for span in reply.body)


async def test_an_unpriced_model_on_a_loopback_address_is_free(
    make_settings: SettingsFactory, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(llm_base_url=fake_openai.base_url, llm_model="local-model")
    caplog.set_level(logging.INFO, logger="bot")
    async with open_lore(settings) as core:
        mia = await invite(core.bot, "mia")
        await remember(core.bot, None, OFFICE)
        fake_openai.enqueue_text("The office opens at 8 am [1].", usage=(5000, 200, 0))
        turn = await ask(core.bot, mia, "When does the office open?")
        reply = await core.bot.run_command(OWNER, CHAT, "budget")
    assert turn.done.fallback == ""
    assert turn.done.cost_usd == 0
    assert isinstance(reply, Message)
    text = "".join(span.text for span in reply.body)
    assert "$0.0000 of $1.00 spent" in text
    assert "local-model runs on a local address" in text
    assert "counted as free" in caplog.text


async def test_an_unpriced_remote_model_is_charged_an_assumed_rate_and_said_so(
    make_settings: SettingsFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bot")
    text = await budget_text(
        make_settings, llm_base_url="http://llm.example.invalid/v1", llm_model="mystery-7b"
    )
    assert "mystery-7b has no price configured" in text
    assert "$10 input / $10 cached / $30 output per million tokens" in text
    assert "LLM_PRICES=mystery-7b=INPUT/CACHED/OUTPUT" in text
    assert "mystery-7b has no price configured" in caplog.text  # also said at start


async def test_a_priced_model_says_nothing_more(make_settings: SettingsFactory) -> None:
    text = await budget_text(
        make_settings,
        llm_base_url="http://llm.example.invalid/v1",
        llm_model="mystery-7b",
        llm_prices="mystery-7b=0.2/0.1/0.8",
    )
    assert text.startswith("Today (")
    assert "\n" not in text


def test_a_secret_too_short_to_redact_is_refused_at_start() -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings(_env_file=None, llm_base_url="http://127.0.0.1:9/v1", llm_api_key="x")
    assert str(refused.value) == (
        "Invalid configuration: LLM_API_KEY is shorter than 8 characters, too short to keep "
        "out of the logs; leave LLM_API_KEY unset if the service needs no key"
    )
