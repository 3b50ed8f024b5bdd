"""What every Telegram handler shares: the edge's configuration, the `Bot` service, and the
translation of Telegram users, chats, topics and mentions into Lore's `Identity` and
`ChatRef`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from telegram import Chat, Message, User

from adapters.telegram.streaming import DraftSupport
from bot.events import ChatRef, Identity
from bot.service import Bot

__all__ = [
    "CLOUD_DOWNLOAD_LIMIT",
    "PLATFORM",
    "EdgeContext",
    "TelegramConfig",
    "addressed_text",
    "chat_ref",
    "identity_of",
]

PLATFORM = "telegram"
# The cloud Bot API serves downloads up to 20 MB; a self-hosted Bot API server has no such cap.
CLOUD_DOWNLOAD_LIMIT = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TelegramConfig:
    """The Telegram edge's settings, as plain values."""

    token: str
    max_file_bytes: int
    owner_ids: frozenset[str] = frozenset()
    api_root: str | None = None
    webhook_url: str | None = None
    webhook_secret: str | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = 8443
    stream_interval: float = 1.0
    download_timeout: float = 120.0
    typing_delay: float = 0.5
    """Seconds before "typing…" is shown: an answer that appears sooner needs none (one Bot API
    call less per update)."""
    poll_interval: float = 0.0
    poll_timeout: float = 10.0
    concurrent_updates: int = 32
    rate_limit: bool = True
    max_retries: int = 3

    @property
    def download_limit(self) -> int:
        """The largest file taken from a chat (the cloud Bot API serves at most 20 MB)."""
        if self.api_root:
            return self.max_file_bytes
        return min(self.max_file_bytes, CLOUD_DOWNLOAD_LIMIT)


@dataclass
class EdgeContext:
    """Shared by the handlers of one running Telegram edge."""

    bot: Bot
    config: TelegramConfig
    drafts: DraftSupport = field(default_factory=DraftSupport)


def identity_of(user: User) -> Identity:
    """The Lore identity of a Telegram user."""
    return Identity(PLATFORM, str(user.id), user.full_name or user.username or str(user.id))


def chat_ref(chat: Chat, message: Message | None = None) -> ChatRef:
    """The Lore view of a chat: private, or a group (shared knowledge only), and the forum
    topic a message was written in."""
    topic = message.message_thread_id if message is not None and message.is_topic_message else None
    return ChatRef(
        PLATFORM,
        str(chat.id),
        is_group=chat.type != Chat.PRIVATE,
        thread=str(topic) if topic is not None else None,
    )


def addressed_text(message: Message, bot_username: str, bot_id: int) -> str | None:
    """In a group: the text without the @mention if the message is for the bot, else None.

    A message is for the bot when it mentions @bot_username or replies to the bot.
    """
    text = message.text or message.caption or ""
    mention = re.compile(rf"@{re.escape(bot_username)}\b", re.IGNORECASE)
    replied = (
        message.reply_to_message is not None
        and message.reply_to_message.from_user is not None
        and message.reply_to_message.from_user.id == bot_id
    )
    if not (mention.search(text) or replied):
        return None
    return " ".join(mention.sub(" ", text).split())
