"""The Discord edge's settings as plain values, and the gateway intents and bot permissions it
asks for (the minimum: see docs/discord.md)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import discord

__all__ = ["PERMISSIONS", "PLATFORM", "PREFIX", "DiscordConfig", "lore_intents"]

PLATFORM = "discord"
# Where Discord serves attachments; nothing else is downloaded as one.
FILE_HOSTS = frozenset({"cdn.discordapp.com", "media.discordapp.net"})
PREFIX = "/lore "  # how commands are spelt on Discord: one /lore command, a subcommand each

# What the bot does in a server: read the channels it is in and their history (a reply to
# the bot names the message it replies to), answer in a thread it opens on the question.
PERMISSIONS = discord.Permissions(
    view_channel=True,
    send_messages=True,
    read_message_history=True,
    create_public_threads=True,
    send_messages_in_threads=True,
)


def lore_intents() -> discord.Intents:
    """Guild messages and DMs, their content (privileged: a mention must be read), and guilds
    (without it discord.py keeps no channels, so a thread cannot be told from a channel)."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.dm_messages = True
    intents.message_content = True
    return intents


@dataclass(frozen=True, slots=True)
class DiscordConfig:
    """The Discord edge's settings. `api_url` points REST at another server (the gateway URL
    then comes from its `GET /gateway/bot`); `guild_id` syncs the commands to one server
    (instant) instead of globally."""

    token: str
    max_file_bytes: int
    owner_ids: frozenset[str] = frozenset()
    api_url: str | None = None
    guild_id: int | None = None
    stream_interval: float = 1.0
    reply_deadline: float = 2.0  # a slash command answers "working on it" after this long
    guild_ready_timeout: float = 2.0
    connect_timeout: float = 60.0
    download_timeout: float = 60.0

    @property
    def download_limit(self) -> int:
        """The largest attachment taken from a chat."""
        return self.max_file_bytes

    def may_download(self, url: str) -> bool:
        """Whether `url` is one of Discord's attachment hosts (or, with another API server,
        that server's host)."""
        parts = urlsplit(url)
        if self.api_url:
            api = urlsplit(self.api_url)
            if (parts.scheme, parts.hostname) == (api.scheme, api.hostname):
                return True
        return parts.scheme == "https" and parts.hostname in FILE_HOSTS
