"""What every Matrix handler shares (the `Bot`, the settings, the de-duplication, the client,
the outbox, the markers), and the translation of Matrix senders and rooms into Lore's
`Identity` and `ChatRef`.

A room is a private chat while only the bot and one person are in it (joined or invited);
any larger room is a group chat: shared knowledge only, verified final answers only
(invariant 11). A thread's root event names the conversation's thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import nio

from adapters.matrix.config import PLATFORM, MatrixConfig
from adapters.matrix.markers import Markers
from adapters.matrix.outbox import Outbox
from bot.dedupe import EventDeduper
from bot.events import ChatRef, Identity
from bot.service import Bot

__all__ = ["EdgeContext", "chat_of", "identity_of", "is_private", "relation", "thread_of"]

TOLD_KEPT = 24 * 3600.0  # what was said to someone is remembered for a day at most
TOLD_PRUNED_AT = 4096  # then what is older than that is forgotten


@dataclass(frozen=True, slots=True)
class EdgeContext:
    """Shared by the handlers of one running Matrix edge."""

    bot: Bot
    config: MatrixConfig
    deduper: EventDeduper
    client: nio.AsyncClient
    outbox: Outbox
    markers: Markers
    # Things said once per person and subject (a non-owner's reaction, an unreadable message,
    # thanks for a rating): when each was last said (monotonic seconds).
    told: dict[str, float] = field(default_factory=dict)

    @property
    def me(self) -> str:
        """The bot's own Matrix ID."""
        return str(self.client.user_id)

    def tell_once(self, key: str, *, within: float = TOLD_KEPT) -> bool:
        """True unless `key` was told less than `within` seconds ago (then say nothing)."""
        now = time.monotonic()
        last = self.told.get(key)
        if last is not None and now - last < within:
            return False
        if len(self.told) >= TOLD_PRUNED_AT:
            for old in [k for k, at in self.told.items() if now - at >= TOLD_KEPT]:
                del self.told[old]
        self.told[key] = now
        return True


def identity_of(room: Any, sender: str) -> Identity:
    """The Lore identity of a Matrix user (the same in every room)."""
    name = room.user_name(sender) if room is not None else None
    return Identity(PLATFORM, sender, name or sender.removeprefix("@").split(":")[0])


def is_private(room: Any) -> bool:
    """Whether only the bot and one person are in the room."""
    return int(room.member_count) <= 2


def relation(event: Any) -> dict[str, Any]:
    """The event's `m.relates_to` (empty when it relates to nothing)."""
    content = event.source.get("content", {})
    related = content.get("m.relates_to")
    return related if isinstance(related, dict) else {}


def thread_of(event: Any) -> str | None:
    """The root event of the thread the event is in, if any."""
    related = relation(event)
    root = related.get("event_id")
    return str(root) if related.get("rel_type") == "m.thread" and root else None


def chat_of(room: Any, thread: str | None = None) -> ChatRef:
    """Where a message was written: a private chat, or a group (and its thread)."""
    if is_private(room):
        return ChatRef(PLATFORM, room.room_id)
    return ChatRef(PLATFORM, room.room_id, is_group=True, thread=thread)
