"""Who is who on Slack, learnt from the Web API and kept in memory: a user's display name
(`users.info`) and the direct-message conversation between the bot and a user
(`conversations.open`), which is also how a slash command or a tap is known to come from
the bot's own direct message rather than from a channel or someone else's DM."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.config import PLATFORM
from adapters.slack.payloads import is_direct_channel
from bot.events import Identity

__all__ = ["Directory"]

logger = logging.getLogger(__name__)

CAPACITY = 5000


class _Cache:
    def __init__(self) -> None:
        self._items: OrderedDict[str, str] = OrderedDict()

    def get(self, key: str) -> str | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: str, value: str) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > CAPACITY:
            self._items.popitem(last=False)


def _display_name(user: dict[str, Any]) -> str | None:
    profile = user.get("profile") or {}
    for name in (
        profile.get("display_name"),
        profile.get("real_name"),
        user.get("real_name"),
        user.get("name"),
    ):
        if isinstance(name, str) and name.strip():
            return name.strip()
    return None


class Directory:
    """Display names and direct-message conversations, looked up once per user."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._names = _Cache()
        self._direct = _Cache()

    async def identity(self, user_id: str, known_name: str | None = None) -> Identity:
        """The Lore identity of a Slack user, with their display name when Slack tells it."""
        name = self._names.get(user_id)
        if name is None:
            name = await self._lookup_name(user_id) or known_name or user_id
            self._names.put(user_id, name)
        return Identity(PLATFORM, user_id, name)

    async def _lookup_name(self, user_id: str) -> str | None:
        try:
            response = await self._client.users_info(user=user_id)
        except SlackApiError as exc:
            logger.info("users.info for %s failed: %s", user_id, exc.response.get("error"))
            return None
        user = response.get("user")
        return _display_name(user) if isinstance(user, dict) else None

    async def direct_channel(self, user_id: str) -> str:
        """The direct-message conversation between the bot and `user_id` (opened if needed)."""
        channel = self._direct.get(user_id)
        if channel is None:
            response = await self._client.conversations_open(users=user_id)
            channel = str(response["channel"]["id"])
            self._direct.put(user_id, channel)
        return channel

    async def is_direct_with(self, user_id: str, channel_id: str) -> bool:
        """Whether `channel_id` is the bot's own direct message with `user_id` (a DM between
        two people, or a channel, is shared with someone else)."""
        if not is_direct_channel(channel_id):
            return False
        try:
            return await self.direct_channel(user_id) == channel_id
        except SlackApiError as exc:
            logger.warning("conversations.open for %s failed: %s", user_id, exc)
            return False
