"""A stable prefix is what makes a provider's prompt cache pay: the instructions, the pinned
documents and the tool definitions are byte-identical across turns, chats and days, and what
changes (the date, the chat, the canary, the hardened rules) comes after them."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.app import open_lore
from graphs.agent.prompts import stable_prefix, system_prompt
from tests.chat_turns import ask, invite, remember
from tests.conftest import SettingsFactory
from tests.fakes.openai_server import FakeOpenAI

OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."


def test_what_changes_comes_after_the_stable_prefix() -> None:
    prompts = [
        system_prompt(
            now=datetime(2026, 12, day, hour, tzinfo=UTC),
            timezone=zone,
            is_group=group,
            role=role,
            canary=canary,
            hardened=hardened,
        )
        for day, hour, zone, group, role, canary, hardened in [
            (4, 3, "UTC", False, "member", "lore-canary-0000000000000000", False),
            (7, 23, "Europe/Berlin", True, "owner", "lore-canary-1111111111111111", True),
        ]
    ]
    prefix = stable_prefix()
    assert all(prompt.startswith(prefix + "\n\n") for prompt in prompts)
    assert prompts[0] != prompts[1]
    assert "canary" not in prefix
    assert "2026" not in prefix


async def test_two_turns_send_the_same_prefix_and_tools(
    llm_settings: SettingsFactory, fake_openai: FakeOpenAI
) -> None:
    async with open_lore(llm_settings()) as core:
        mia, noah = await invite(core.bot, "mia"), await invite(core.bot, "noah")
        await remember(core.bot, None, OFFICE)
        for who in (mia, noah, mia):
            fake_openai.enqueue_text("The office opens at 8 am [1].")
            await ask(core.bot, who, "When does the office open?")
    first, second, third = (request.body for request in fake_openai.requests)
    prefix = stable_prefix()
    assert all(body["messages"][0]["content"].startswith(prefix) for body in (first, second))
    assert first["tools"] == second["tools"] == third["tools"]
    # In one thread the whole system message stays the same all day, so the history after
    # it is cached too: the third request starts with the first one's messages.
    assert third["messages"][: len(first["messages"])] == first["messages"]
