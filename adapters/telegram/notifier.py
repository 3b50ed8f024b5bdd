"""The `Notifier` for Telegram: approval requests with buttons to owners, delivered outcomes,
plain messages to owners and texts such as digests, sent outside any turn (into the chat's
forum topic when it has one)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import TelegramError

from adapters.telegram.buttons import approval_keyboard, feedback_keyboard
from adapters.telegram.rendering import escape, render_final, render_rich, split_html
from bot.approvals import approval_card
from bot.events import ApprovalPending, ChatRef, TurnEvent
from bot.turn_view import TurnView

__all__ = ["TelegramNotifier"]

logger = logging.getLogger(__name__)


def _topic(chat: ChatRef) -> int | None:
    return int(chat.thread) if chat.thread and chat.thread.isdigit() else None


class TelegramNotifier:
    """Implements `bot.notifications.Notifier`; a Telegram user id is their private chat id."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """An approval request with Approve / Reject buttons."""
        try:
            await self._bot.send_message(
                int(owner_platform_user_id),
                render_rich(approval_card(request)),
                parse_mode=ParseMode.HTML,
                reply_markup=approval_keyboard(request.approval_id),
            )
        except TelegramError as exc:
            logger.warning("Could not ask owner %s: %s", owner_platform_user_id, exc)

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:
        """A finished turn (e.g. the outcome of an approval) sent into its chat."""
        view = TurnView(chat)
        for event in events:
            view.add(event)
        final = view.final()
        parts = split_html(render_final(final))
        try:
            for index, part in enumerate(parts):
                last = index == len(parts) - 1
                turn = final.feedback_turn
                await self._bot.send_message(
                    int(chat.chat_id),
                    part,
                    parse_mode=ParseMode.HTML,
                    reply_markup=feedback_keyboard(turn) if last and turn else None,
                    message_thread_id=_topic(chat),
                )
        except TelegramError as exc:
            logger.warning("Could not deliver to chat %s: %s", chat.chat_id, exc)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """A plain message to an owner."""
        try:
            await self._bot.send_message(int(owner_platform_user_id), text)
        except TelegramError as exc:
            logger.warning("Could not message owner %s: %s", owner_platform_user_id, exc)

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Plain text (its first line bold), split to Telegram's limit; the first message's id,
        or None when Telegram refused any part."""
        head, _, rest = text.partition("\n")
        markup = f"<b>{escape(head)}</b>" + (f"\n{escape(rest)}" if rest else "")
        first: str | None = None
        try:
            for part in split_html(markup):
                message = await self._bot.send_message(
                    int(chat.chat_id),
                    part,
                    parse_mode=ParseMode.HTML,
                    message_thread_id=_topic(chat),
                )
                first = first or str(message.message_id)
        except TelegramError as exc:
            logger.warning("Could not send a text to chat %s: %s", chat.chat_id, exc)
            return None
        return first
