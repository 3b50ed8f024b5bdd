"""The `Notifier` for Telegram: approval requests with buttons to owners, delivered outcomes,
plain messages to owners and texts such as digests, sent outside any turn."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from telegram import Bot
from telegram.constants import ParseMode
from telegram.error import TelegramError

from adapters.telegram.buttons import approval_keyboard, feedback_keyboard
from adapters.telegram.rendering import TurnView, escape, split_html
from bot.events import ApprovalPending, TurnEvent

__all__ = ["TelegramNotifier", "approval_text"]

logger = logging.getLogger(__name__)


def approval_text(request: ApprovalPending) -> str:
    """The owner's view of a request (HTML)."""
    return (
        f"🔔 <b>Approval needed</b>\n{escape(request.summary)}\n\n"
        f"Tool: <code>{escape(request.tool)}</code>\nExpires: {escape(request.expires_at)}"
    )


class TelegramNotifier:
    """Implements `bot.notifications.Notifier`; a Telegram user id is their private chat id."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """An approval request with Approve / Reject buttons."""
        try:
            await self._bot.send_message(
                int(owner_platform_user_id),
                approval_text(request),
                parse_mode=ParseMode.HTML,
                reply_markup=approval_keyboard(request.approval_id),
            )
        except TelegramError as exc:
            logger.warning("Could not ask owner %s: %s", owner_platform_user_id, exc)

    async def deliver(self, chat_id: str, events: Sequence[TurnEvent]) -> None:
        """A finished turn (e.g. the outcome of an approval) sent into its chat."""
        view = TurnView()
        for event in events:
            view.add(event)
        parts = view.parts()
        turn = view.answered_turn
        try:
            for index, part in enumerate(parts):
                last = index == len(parts) - 1
                await self._bot.send_message(
                    int(chat_id),
                    part,
                    parse_mode=ParseMode.HTML,
                    reply_markup=feedback_keyboard(turn) if last and turn else None,
                )
        except TelegramError as exc:
            logger.warning("Could not deliver to chat %s: %s", chat_id, exc)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """A plain message to an owner."""
        try:
            await self._bot.send_message(int(owner_platform_user_id), text)
        except TelegramError as exc:
            logger.warning("Could not message owner %s: %s", owner_platform_user_id, exc)

    async def send_text(self, chat_id: str, text: str) -> str | None:
        """Plain text (its first line bold), split to Telegram's limit; the first message's id,
        or None when Telegram refused any part."""
        head, _, rest = text.partition("\n")
        markup = f"<b>{escape(head)}</b>" + (f"\n{escape(rest)}" if rest else "")
        first: str | None = None
        try:
            for part in split_html(markup):
                message = await self._bot.send_message(
                    int(chat_id), part, parse_mode=ParseMode.HTML, disable_web_page_preview=True
                )
                first = first or str(message.message_id)
        except TelegramError as exc:
            logger.warning("Could not send a text to chat %s: %s", chat_id, exc)
            return None
        return first
