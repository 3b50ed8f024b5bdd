"""What every Discord handler shares: the `Bot`, the edge's settings and its de-duplication;
the translation of Discord users, channels, threads and mentions into Lore's `Identity` and
`ChatRef`; and the one way this edge sends and edits messages — never pinging anyone, never
unfurling a link (invariant 9)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import discord

from adapters.discord.config import PLATFORM, DiscordConfig
from bot.dedupe import EventDeduper
from bot.events import ChatRef, Identity
from bot.service import Bot

__all__ = [
    "NO_MENTIONS",
    "EdgeContext",
    "addressed_text",
    "chat_of",
    "edit",
    "identity_of",
    "send",
]

NO_MENTIONS = discord.AllowedMentions.none()


@dataclass(frozen=True, slots=True)
class EdgeContext:
    """Shared by the handlers of one running Discord edge."""

    bot: Bot
    config: DiscordConfig
    deduper: EventDeduper


def identity_of(user: discord.User | discord.Member) -> Identity:
    """The Lore identity of a Discord user (the same in every server and in DMs)."""
    return Identity(PLATFORM, str(user.id), user.display_name or user.name)


def chat_of(channel: Any, guild_id: int | None) -> ChatRef:
    """Where a message was written: a DM, or a server channel (shared knowledge only) and the
    thread within it."""
    if guild_id is None:
        return ChatRef(PLATFORM, str(channel.id))
    if isinstance(channel, discord.Thread):
        return ChatRef(PLATFORM, str(channel.parent_id), is_group=True, thread=str(channel.id))
    return ChatRef(PLATFORM, str(channel.id), is_group=True)


def addressed_text(message: discord.Message, me: discord.ClientUser) -> str | None:
    """In a server: the text without the bot's mention if the message is for the bot (it
    mentions the bot, or replies to one of its messages), else None. @everyone is not a call."""
    mentioned = any(user.id == me.id for user in message.mentions)
    reference = message.reference
    replied = (
        reference is not None
        and isinstance(reference.resolved, discord.Message)
        and reference.resolved.author.id == me.id
    )
    if not (mentioned or replied):
        return None
    return " ".join(re.sub(rf"<@!?{me.id}>", " ", message.content).split())


async def send(
    channel: discord.abc.Messageable,
    content: str,
    *,
    view: discord.ui.View | None = None,
    reference: discord.Message | None = None,
) -> discord.Message:
    """A new message: no mention pings anyone, no link unfurls."""
    extra: dict[str, Any] = {}
    if view is not None:
        extra["view"] = view
    if reference is not None:
        extra["reference"] = reference
        extra["mention_author"] = False
    return await channel.send(content, allowed_mentions=NO_MENTIONS, suppress_embeds=True, **extra)


async def edit(
    message: discord.Message, content: str, *, view: discord.ui.View | None = None
) -> discord.Message:
    """New text for one of the bot's messages (buttons replaced by `view`, or removed)."""
    return await message.edit(
        content=content, view=view, allowed_mentions=NO_MENTIONS, suppress=True
    )
