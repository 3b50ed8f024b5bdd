"""Which room messages are for Lore, and their words without the call.

In a group room Lore answers only what names it: its ID in `m.mentions` (what current
clients send for a pill), a pill or its ID in the text, its display name at the start, or a
reply to one of its messages. A thread's replies that merely fall back to the thread's last
message are not replies. The quoted fallback of a reply (`> <@someone> …`) is never part of
the question.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import nio

from adapters.matrix.context import relation

__all__ = ["addressed_text", "replies_to_me", "reply_target", "unquoted"]

_FALLBACK = re.compile(r"^(?:>[^\n]*\n)+\n?")
_LEADING = " \t:,;.-\u2013\u2014"  # separators after a name, dashes too


def unquoted(content: dict[str, Any]) -> str:
    """The message's text without a reply's quoted fallback."""
    body = str(content.get("body") or "")
    if isinstance(content.get("m.relates_to"), dict) and body.startswith(">"):
        body = _FALLBACK.sub("", body, count=1)
    return body.strip()


def reply_target(event: Any) -> str | None:
    """The event a message really replies to (not a thread's fallback), if any."""
    related = relation(event)
    if related.get("is_falling_back"):
        return None
    target = related.get("m.in_reply_to")
    event_id = target.get("event_id") if isinstance(target, dict) else None
    return str(event_id) if event_id else None


def _mentions(content: dict[str, Any], me: str) -> bool:
    mentions = content.get("m.mentions")
    users = mentions.get("user_ids") if isinstance(mentions, dict) else None
    if isinstance(users, list) and me in users:
        return True
    formatted = str(content.get("formatted_body") or "")
    return f"matrix.to/#/{me}" in formatted or f"matrix.to/#/{quote(me)}" in formatted


def _without_call(text: str, me: str, name: str | None) -> tuple[str, bool]:
    """`text` without the bot's ID or leading display name; whether either was there."""
    called = me in text
    text = text.replace(me, " ")
    if name and text.lower().startswith(name.lower()):
        rest = text[len(name) :]
        if not rest or rest[0] in _LEADING:
            text, called = rest, True
    return " ".join(text.strip(_LEADING).split()), called


async def replies_to_me(client: nio.AsyncClient, room_id: str, event: Any) -> bool:
    """Whether `event` is a reply to one of the bot's own messages."""
    target = reply_target(event)
    if target is None:
        return False
    response = await client.room_get_event(room_id, target)
    found = getattr(response, "event", None)
    return bool(getattr(found, "sender", None) == client.user_id)


async def addressed_text(client: nio.AsyncClient, room: Any, event: Any) -> str | None:
    """In a group room: the text without the call if the message is for the bot, else None.
    `@room` is not a call."""
    content = event.source.get("content", {})
    me = str(client.user_id)
    text, named = _without_call(unquoted(content), me, room.user_name(me))
    if named or _mentions(content, me) or await replies_to_me(client, room.room_id, event):
        return text
    return None
