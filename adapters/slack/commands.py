"""The `/lore` slash command: `/lore NAME ARGUMENTS` runs the `bot/` registry's command
NAME (no command table here; `/lore` alone is `/lore help`). Replies go to the person: as
ordinary messages in the bot's own direct message, through the command's `response_url`
anywhere else (ephemeral when they concern only the person who asked)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from adapters.slack.config import PLATFORM
from adapters.slack.context import PREFIX, SlackContext
from adapters.slack.inbox import SORRY
from adapters.slack.outbox import Place
from adapters.slack.payloads import plain_words
from adapters.slack.replies import Target, send_reply, tell
from bot.events import ChatRef

__all__ = ["run_slash_command"]

logger = logging.getLogger(__name__)


def split_command(text: str) -> tuple[str, str]:
    """(name, arguments) of what followed `/lore`; `help` when nothing did."""
    name, _, args = plain_words(text).partition(" ")
    return (name.lower() or "help"), args.strip()


async def run_slash_command(edge: SlackContext, command: Mapping[str, Any]) -> None:
    """Run one `/lore ...` and answer the person who typed it."""
    user = str(command.get("user_id", ""))
    channel = str(command.get("channel_id", ""))
    if not user or not channel:
        return
    private = await edge.directory.is_direct_with(user, channel)
    response_url = command.get("response_url")
    target = Target(
        Place(channel), user, private, response_url if isinstance(response_url, str) else None
    )
    try:
        identity = await edge.directory.identity(user, command.get("user_name"))
        name, args = split_command(str(command.get("text") or ""))
        chat = ChatRef(PLATFORM, channel, is_group=not private)
        reply = await edge.bot.run_command(identity, chat, name, args, prefix=PREFIX)
        if reply is not None:
            await send_reply(edge.outbox, target, reply)
    except Exception:  # the command's boundary: log, answer politely
        logger.exception("A Slack command could not be handled")
        await tell(edge.outbox, target, SORRY)
