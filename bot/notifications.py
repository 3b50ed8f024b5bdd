"""How the core reaches people outside the turn they are in: owners asked to approve, a requester
told the outcome, a member's message delivered to the owner, a morning digest. Each edge
registers a `Notifier` for its platform; the `Bot` routes by platform."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from bot.events import ApprovalPending, ChatRef, TurnEvent

__all__ = ["Notifier", "Notifiers"]

logger = logging.getLogger(__name__)


class Notifier(Protocol):
    """One platform's way to send unprompted messages."""

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """Show an owner an approval request with Approve / Reject."""

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:
        """Send a finished turn's events (e.g. after an approval) into a chat (and thread)."""

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """Send an owner a plain message."""

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Send plain text into a chat (a digest, a notice); the platform's message id, or None
        if the platform did not take it."""


class Notifiers:
    """The registered notifiers, by platform."""

    def __init__(self) -> None:
        self._by_platform: dict[str, Notifier] = {}

    def register(self, platform: str, notifier: Notifier) -> None:
        """Route this platform's notifications to `notifier` (the last registration wins)."""
        self._by_platform[platform] = notifier

    def for_platform(self, platform: str) -> Notifier | None:
        """The notifier of a platform, if its edge is running."""
        notifier = self._by_platform.get(platform)
        if notifier is None:
            logger.info("No running edge for platform %s; notification kept for later", platform)
        return notifier
