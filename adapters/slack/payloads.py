"""Slack payloads read into Lore's terms: message text as plain words, where a message was
written (a direct message or a channel, and its thread), and the source a message carries
(files, a shared message, a lone link). Nothing here calls Slack.

Slack escapes `&`, `<` and `>` in message text and writes links, mentions and channels in
angle brackets (`<https://e.org|label>`, `<@U123>`, `<#C1|general>`); `plain_words` turns
that back into what the person typed.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from adapters.slack.config import PLATFORM
from bot.events import ChatRef
from bot.sources import IncomingSource, forwarded, is_link
from bot.voice import IncomingVoice

__all__ = [
    "SlackMessage",
    "is_direct_channel",
    "message_of",
    "plain_words",
    "sources_of",
    "voice_of",
]

_ANGLE = re.compile(r"<([^<>]*)>")
_SPACES = re.compile(r"[ \t]{2,}")
# Message subtypes that are a person writing (others are edits, joins, bot echoes...).
_WRITTEN = {None, "file_share", "thread_broadcast"}


def is_direct_channel(channel_id: str) -> bool:
    """Whether a conversation id names a direct message (Slack's ids start with D)."""
    return channel_id.startswith("D")


def _angle(match: re.Match[str], bot_user_id: str | None) -> str:
    inside = match.group(1)
    target, _, label = inside.partition("|")
    if target.startswith("@"):
        user = target[1:]
        return "" if user == bot_user_id else f"@{label or user}"
    if target.startswith("#"):
        return f"#{label or target[1:]}"
    if target.startswith("!"):
        special = target[1:].split("^", 1)[0]
        return label or f"@{special}"
    return target  # a link: the URL itself (the label is Slack's rendering of it)


def plain_words(text: str, bot_user_id: str | None = None) -> str:
    """Slack message text as typed: links as their URLs, mentions as @names (a mention of
    the bot itself removed), entities unescaped, runs of spaces collapsed."""
    replaced = _ANGLE.sub(lambda match: _angle(match, bot_user_id), text)
    return _SPACES.sub(" ", html.unescape(replaced)).strip()


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """A message a person wrote to Lore: in a direct message, or mentioning it in a channel."""

    user: str
    team: str | None
    channel: str
    ts: str
    thread_ts: str | None
    is_group: bool
    text: str
    raw: Mapping[str, Any]

    @property
    def chat(self) -> ChatRef:
        """Lore's view of where it was written. A channel mention's thread (the mention's
        `thread_ts or ts`) is its own conversation; a direct message's conversation is the
        thread it was written in, or the whole chat at the top level."""
        thread = (self.thread_ts or self.ts) if self.is_group else self.thread_ts
        return ChatRef(PLATFORM, self.channel, is_group=self.is_group, thread=thread)

    @property
    def reply_thread(self) -> str | None:
        """Where answers are posted: the mention's thread in a channel; in a direct
        message the thread it was written in (None: the top level)."""
        return self.chat.thread

    @property
    def question_thread(self) -> str:
        """The thread that starts at this message (streams are replies to the question)."""
        return self.thread_ts or self.ts


def message_of(
    event: Mapping[str, Any], *, bot_user_id: str | None, mention: bool
) -> SlackMessage | None:
    """The person's message in a `message` (direct messages only) or `app_mention` event;
    None for anything else (bot messages, edits, channel chatter, mentions in a DM, which
    arrive again as a direct message)."""
    user = event.get("user")
    channel = str(event.get("channel") or "")
    if not user or not channel or event.get("bot_id") or event.get("subtype") not in _WRITTEN:
        return None
    if user == bot_user_id:
        return None
    if mention:
        if is_direct_channel(channel):
            return None
        is_group = True
    elif event.get("channel_type") == "im":
        is_group = False
    else:
        return None
    return SlackMessage(
        user=str(user),
        team=event.get("team") or event.get("user_team"),
        channel=channel,
        ts=str(event.get("ts", "")),
        thread_ts=event.get("thread_ts"),
        is_group=is_group,
        text=plain_words(str(event.get("text") or ""), bot_user_id),
        raw=event,
    )


_CLIPS = frozenset({"slack_audio", "slack_video"})  # recorded in Slack's message box


def _usable(item: Any) -> bool:
    return (
        isinstance(item, Mapping)
        and bool(item.get("id"))
        and item.get("mode") not in {"tombstone", "hidden_by_limit", "external"}
    )


def voice_of(message: SlackMessage) -> IncomingVoice | None:
    """The audio or video clip a message carries (recorded in Slack, not an uploaded file),
    if any: a voice message, addressed to Lore since it came in a direct message or with a
    mention. Slack names every clip alike, so it is named after its file id."""
    for item in message.raw.get("files") or []:
        if _usable(item) and item.get("subtype") in _CLIPS:
            suffix = PurePath(str(item.get("name") or "clip.m4a")).suffix or ".m4a"
            size, duration = item.get("size"), item.get("duration_ms")
            return IncomingVoice(
                file_ref=str(item["id"]),
                file_name=f"voice-{item['id']}{suffix}",
                size=int(size) if isinstance(size, int | float) else None,
                seconds=duration / 1000 if isinstance(duration, int | float) else None,
                caption=message.text or None,
                addressed=True,
            )
    return None


def _files(event: Mapping[str, Any], caption: str) -> list[IncomingSource]:
    sources = []
    for item in event.get("files") or []:
        if not _usable(item) or item.get("subtype") in _CLIPS:
            continue
        size = item.get("size")
        sources.append(
            IncomingSource(
                file_ref=str(item["id"]),
                file_name=str(item.get("name") or item.get("title") or "document"),
                size=int(size) if isinstance(size, int | float) else None,
                caption=caption or None,
            )
        )
    return sources


def _shared(attachments: Sequence[Any]) -> IncomingSource | None:
    for attachment in attachments:
        if not isinstance(attachment, Mapping) or not attachment.get("is_share"):
            continue
        text = plain_words(str(attachment.get("text") or ""))
        if not text:
            continue
        origin = attachment.get("author_name") or attachment.get("author_subname")
        if not origin and attachment.get("channel_name"):
            origin = f"#{attachment['channel_name']}"
        try:
            when = datetime.fromtimestamp(float(attachment.get("ts") or 0), UTC)
        except (TypeError, ValueError, OverflowError):
            when = datetime.fromtimestamp(0, UTC)
        return forwarded(str(origin or "a Slack conversation"), when, text)
    return None


def sources_of(message: SlackMessage) -> list[IncomingSource]:
    """The sources a message carries: its files (the message's text is their caption), else
    a shared (forwarded) message, else the lone link that is the whole message."""
    files = _files(message.raw, message.text)
    if files:
        return files
    shared = _shared(message.raw.get("attachments") or [])
    if shared is not None:
        return [shared]
    if message.text and is_link(message.text):
        return [IncomingSource(url=message.text.strip())]
    return []
