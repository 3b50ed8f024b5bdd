"""Invitations into rooms. A member's or an owner's invite is accepted. A stranger's is
accepted on probation: Lore joins, so that what the stranger already wrote there is read
(a newcomer often opens the chat with `!start CODE`, before Lore has joined); once the
room's first sync has been handled, a stranger who is still a stranger is told once how to
get an invite (the words every edge uses, and how long they have) and has `stranger_grace`
seconds to send `!start CODE` there; then Lore leaves."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

import nio

from adapters.matrix.config import PREFIX
from adapters.matrix.context import EdgeContext, identity_of
from adapters.matrix.html import plain
from adapters.matrix.outbox import SendError
from bot.errors import NotInvitedError

__all__ = ["Invites", "inviter_of", "turned_away"]

logger = logging.getLogger(__name__)


def _duration(seconds: float) -> str:
    """`seconds` as people say it: "2 minutes", "45 seconds"."""
    minutes = round(seconds / 60)
    amount, unit = (minutes, "minute") if seconds >= 90 else (max(1, round(seconds)), "second")
    return f"{amount} {unit}{'' if amount == 1 else 's'}"


def turned_away(grace: float) -> str:
    """What a stranger who invited Lore reads: how to get an invite, and how long Lore stays."""
    return (
        f"{NotInvitedError()} If you already have an invite code, send {PREFIX}start CODE here "
        f"within {_duration(grace)}; after that I leave this room."
    )


def inviter_of(info: Any, me: str) -> str | None:
    """Who invited the bot, from an invited room's stripped state."""
    for event in info.invite_state:
        content = getattr(event, "content", None) or event.source.get("content", {})
        if getattr(event, "state_key", None) == me and content.get("membership") == "invite":
            return str(event.sender)
    return None


class Invites:
    """Accepts invites; keeps strangers' rooms on probation until their first sync is read."""

    def __init__(self, edge: EdgeContext) -> None:
        self._edge = edge
        self._probation: dict[str, str] = {}  # room id -> the stranger who invited
        self._joining: set[str] = set()
        self.spoken: set[tuple[str, str]] = set()  # (room, sender) whose messages were handled

    async def on_invite(self, room_id: str, inviter: str) -> None:
        """Accept an invite (a stranger's on probation)."""
        if room_id in self._joining:
            return
        self._joining.add(room_id)
        edge = self._edge
        try:
            room = edge.client.invited_rooms.get(room_id)
            user = await edge.bot.user_for(identity_of(room, inviter))
            if user is None:  # before joining: the first sync of the room finds it on probation
                self._probation[room_id] = inviter
            response = await edge.client.join(room_id)
            if not isinstance(response, nio.JoinResponse):
                self._probation.pop(room_id, None)
                logger.warning("Matrix: could not join %s: %s", room_id, response)
                return
            logger.info(
                "Matrix: joined a room (invited by %s)",
                "a stranger" if user is None else "a member",
            )
        finally:
            self._joining.discard(room_id)

    def on_probation(self, room_ids: Iterable[str]) -> list[str]:
        """Which of these rooms are on probation."""
        return [room_id for room_id in room_ids if room_id in self._probation]

    async def settle(self, room_id: str) -> None:
        """After a probation room's first sync was handled: a stranger is told, and Lore
        leaves; a newcomer who redeemed an invite there meanwhile is welcome to stay."""
        inviter = self._probation.pop(room_id, None)
        if inviter is None:
            return
        edge = self._edge
        room = edge.client.rooms.get(room_id)
        if await edge.bot.user_for(identity_of(room, inviter)) is not None:
            return
        try:
            if (room_id, inviter) not in self.spoken:
                await edge.outbox.send(room_id, plain(turned_away(edge.config.stranger_grace)))
            await asyncio.sleep(edge.config.stranger_grace)
            if await edge.bot.user_for(identity_of(room, inviter)) is not None:
                return
            await edge.outbox.leave(room_id)
        except (SendError, TimeoutError) as exc:
            logger.warning("Matrix: could not turn a stranger away in %s: %s", room_id, exc)
            return
        logger.info("Matrix: left a room a stranger invited Lore to")
