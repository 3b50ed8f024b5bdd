"""The `Notifier` for Slack: approval requests with buttons in each owner's direct message,
finished turns delivered into the conversation and thread where they were asked, messages
to owners and texts such as digests. A chat id that is a user id (an owner's notice) means
the bot's direct message with that user, opened with `conversations.open`."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from slack_sdk.errors import SlackApiError

from adapters.slack.blocks import approval_buttons, feedback_buttons
from adapters.slack.config import PLATFORM
from adapters.slack.context import SlackContext
from adapters.slack.mrkdwn import Piece, escape, final_pieces, render_rich, split
from adapters.slack.outbox import Place
from bot.approvals import approval_card
from bot.events import ApprovalPending, ChatRef, TurnEvent
from bot.turn_view import TurnView

__all__ = ["SlackNotifier"]

logger = logging.getLogger(__name__)


def _is_user(chat_id: str) -> bool:
    return chat_id[:1] in {"U", "W"}


class SlackNotifier:
    """Implements `bot.notifications.Notifier` for one Slack workspace."""

    def __init__(self, edge: SlackContext) -> None:
        self._edge = edge

    async def _place(self, chat: ChatRef) -> Place:
        channel = chat.chat_id
        if _is_user(channel):
            channel = await self._edge.directory.direct_channel(channel)
        return Place(channel, chat.thread)

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """An approval request with Approve / Reject in the owner's direct message."""
        try:
            channel = await self._edge.directory.direct_channel(owner_platform_user_id)
            await self._edge.outbox.post(
                Place(channel),
                render_rich(approval_card(request)),
                approval_buttons(request.approval_id),
            )
        except SlackApiError as exc:
            logger.warning("Could not ask owner %s: %s", owner_platform_user_id, exc)

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:
        """A finished turn (the outcome of an approval) in its conversation and thread."""
        view = TurnView(chat)
        for event in events:
            view.add(event)
        final = view.final()
        buttons = feedback_buttons(final.feedback_turn) if final.feedback_turn else None
        try:
            place = await self._place(chat)
            await self._edge.outbox.post_parts(place, split(final_pieces(final)), buttons)
        except SlackApiError as exc:
            logger.warning("Could not deliver to %s: %s", chat.chat_id, exc)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """A plain message in an owner's direct message."""
        try:
            place = await self._place(ChatRef(PLATFORM, owner_platform_user_id))
            await self._edge.outbox.post_parts(place, split([Piece(escape(text))]))
        except SlackApiError as exc:
            logger.warning("Could not message owner %s: %s", owner_platform_user_id, exc)

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Plain text (its first line bold), split to Slack's limit; the first message's ts,
        or None when Slack refused any part."""
        head, _, rest = text.partition("\n")
        pieces = [Piece(escape(head), "*")] + ([Piece("\n" + escape(rest))] if rest else [])
        try:
            place = await self._place(chat)
            sent = await self._edge.outbox.post_parts(place, split(pieces))
        except SlackApiError as exc:
            logger.warning("Could not send a text to %s: %s", chat.chat_id, exc)
            return None
        return sent[0] if sent else None
