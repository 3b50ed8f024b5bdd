"""Discord objects as the gateway and the REST API carry them, for the fake Discord server:
users, the test server (guild) with a channel and a thread, messages and interactions.

Shapes follow Discord's API v10 documentation and what discord.py 2.7 reads.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "APP_ID",
    "CHANNEL_ID",
    "GUILD_ID",
    "THREAD_ID",
    "DcUser",
    "Post",
    "Snowflakes",
    "guild_create",
    "now_iso",
]

APP_ID = 4242
GUILD_ID = 700
CHANNEL_ID = 701  # #general
THREAD_ID = 702  # a thread in #general that exists before the bot starts
ATTACHMENT_LIMIT = 25 * 1024 * 1024


@dataclass(slots=True)
class Post:
    """A message as a channel shows it after a create or an edit (`edit` tells which)."""

    channel_id: int
    message_id: int
    content: str
    components: list[dict[str, Any]]
    flags: int
    allowed_mentions: Any
    edit: bool
    at: float
    via: str  # "channel", "interaction" or "followup"

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & 64)  # EPHEMERAL

    @property
    def suppressed(self) -> bool:
        return bool(self.flags & 4)

    def buttons(self) -> list[tuple[str, str]]:
        """(label, custom_id) of every button."""
        return [
            (button.get("label", ""), button.get("custom_id", ""))
            for row in self.components
            for button in row.get("components", [])
        ]


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True, slots=True)
class DcUser:
    """A Discord user."""

    id: int
    name: str
    bot: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name.lower(),
            "global_name": self.name,
            "discriminator": "0",
            "avatar": None,
            "bot": self.bot,
        }

    def member(self) -> dict[str, Any]:
        """This user as a member of the test server."""
        return {
            "user": self.as_dict(),
            "roles": [],
            "joined_at": now_iso(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "permissions": "2248473465835073",
        }


class Snowflakes:
    """Increasing ids, as Discord's are."""

    def __init__(self) -> None:
        self._next = itertools.count(1_300_000_000_000_000_000)

    def __call__(self) -> int:
        return next(self._next)


def _text_channel(channel_id: int, name: str) -> dict[str, Any]:
    return {
        "id": str(channel_id),
        "type": 0,
        "guild_id": str(GUILD_ID),
        "name": name,
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
    }


def thread(thread_id: int, name: str, owner_id: int) -> dict[str, Any]:
    """A public thread in #general."""
    return {
        "id": str(thread_id),
        "type": 11,
        "guild_id": str(GUILD_ID),
        "parent_id": str(CHANNEL_ID),
        "owner_id": str(owner_id),
        "name": name,
        "message_count": 0,
        "member_count": 1,
        "rate_limit_per_user": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": now_iso(),
            "locked": False,
        },
        "last_message_id": None,
        "flags": 0,
    }


def guild_create(owner: DcUser) -> dict[str, Any]:
    """The test server as GUILD_CREATE carries it after READY."""
    return {
        "id": str(GUILD_ID),
        "name": "Team",
        "icon": None,
        "owner_id": str(owner.id),
        "unavailable": False,
        "member_count": 3,
        "large": False,
        "features": [],
        "roles": [
            {
                "id": str(GUILD_ID),
                "name": "@everyone",
                "permissions": "2248473465835073",
                "position": 0,
                "color": 0,
                "hoist": False,
                "managed": False,
                "mentionable": False,
                "flags": 0,
            }
        ],
        "emojis": [],
        "stickers": [],
        "members": [],
        "channels": [_text_channel(CHANNEL_ID, "general")],
        "threads": [thread(THREAD_ID, "Questions", owner.id)],
        "voice_states": [],
        "presences": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "joined_at": now_iso(),
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "nsfw_level": 0,
        "system_channel_flags": 0,
    }


def message(
    message_id: int,
    channel_id: int,
    author: DcUser,
    content: str,
    *,
    guild: bool,
    components: list[dict[str, Any]] | None = None,
    flags: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A message as MESSAGE_CREATE and the REST API carry it."""
    data: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author.as_dict(),
        "content": content,
        "timestamp": now_iso(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": False,
        "type": 0,
        "flags": flags,
        "components": components or [],
        **extra,
    }
    if guild:
        data["guild_id"] = str(GUILD_ID)
        if not author.bot:
            data["member"] = {k: v for k, v in author.member().items() if k != "user"}
    return data


def interaction(
    interaction_id: int,
    kind: int,
    user: DcUser,
    channel: dict[str, Any],
    data: dict[str, Any],
    *,
    guild: bool,
    token: str,
    **extra: Any,
) -> dict[str, Any]:
    """An INTERACTION_CREATE: a slash command (kind 2) or a button tap (kind 3)."""
    payload: dict[str, Any] = {
        "id": str(interaction_id),
        "application_id": str(APP_ID),
        "type": kind,
        "data": data,
        "channel_id": channel["id"],
        "channel": channel,
        "token": token,
        "version": 1,
        "locale": "en-US",
        "app_permissions": "2248473465835073",
        "entitlements": [],
        "attachment_size_limit": ATTACHMENT_LIMIT,
        "context": 0 if guild else 1,
        "authorizing_integration_owners": {"0": str(GUILD_ID)},
        **extra,
    }
    if guild:
        payload["guild_id"] = str(GUILD_ID)
        payload["guild_locale"] = "en-US"
        payload["member"] = user.member()
    else:
        payload["user"] = user.as_dict()
    return payload
