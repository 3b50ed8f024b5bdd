"""Text that grows in a chat: answer previews (drafts or one edited message), status messages,
and the typing action, each updated at most about once per `interval`.

In private chats a reply previews with `sendMessageDraft`; when the Bot API does not know
that method (an older or self-hosted server) it falls back, for good, to sending one
message and editing it. The final text always arrives as ordinary messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Sequence

from telegram import Bot, InlineKeyboardMarkup, Message, ReplyParameters
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, RetryAfter, TelegramError

from adapters.telegram.rendering import MAX_MESSAGE
from bot.throttle import Throttle

__all__ = ["DraftSupport", "LiveReply", "StatusMessage", "typing_action"]

logger = logging.getLogger(__name__)

PREVIEW_CHARS = MAX_MESSAGE - 100


class DraftSupport:
    """Whether the Bot API answers `sendMessageDraft`; learnt from the first refusal."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled


def _preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"


async def _edit(
    bot: Bot,
    message: Message,
    text: str,
    *,
    parse_mode: str | None = None,
    reply_markup: InlineKeyboardMarkup | None = None,
) -> None:
    try:
        await bot.edit_message_text(
            text,
            chat_id=message.chat_id,
            message_id=message.message_id,
            parse_mode=parse_mode,
            reply_markup=reply_markup,
        )
    except BadRequest as exc:
        if "not modified" not in str(exc).lower():
            raise


class LiveReply:
    """One answer written into a chat: previews while it streams, then the final parts."""

    def __init__(
        self,
        bot: Bot,
        chat_id: int,
        *,
        private: bool,
        drafts: DraftSupport,
        interval: float = 1.0,
        reply_to: int | None = None,
        thread: int | None = None,
    ) -> None:
        self._bot = bot
        self._chat_id = chat_id
        self._thread = thread
        self._drafts = drafts
        self._use_draft = private and drafts.enabled
        self._draft_id = secrets.randbelow(2**31 - 2) + 1
        self._reply = (
            ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None
        )
        self._message: Message | None = None
        self._throttle = Throttle(self._show, interval)

    async def update(self, text: str) -> None:
        """Show `text` (plain, the whole answer so far) soon; previews are best effort."""
        if text.strip():
            await self._throttle.push(_preview(text))

    async def _show(self, text: str) -> None:
        try:
            if self._use_draft:
                await self._bot.send_message_draft(
                    self._chat_id, self._draft_id, text, message_thread_id=self._thread
                )
            elif self._message is None:
                self._message = await self._bot.send_message(
                    self._chat_id,
                    text,
                    reply_parameters=self._reply,
                    message_thread_id=self._thread,
                )
            else:
                await _edit(self._bot, self._message, text)
        except RetryAfter as exc:  # the rate limiter already waited; a preview can be skipped
            logger.info("Answer preview skipped: %s", exc)
        except TelegramError as exc:
            if not self._use_draft:
                logger.warning("Answer preview failed: %s", exc)
                return
            logger.info("sendMessageDraft unavailable (%s); editing messages instead", exc)
            self._drafts.enabled = False
            self._use_draft = False
            await self._show(text)

    async def finish(
        self, parts: Sequence[str], markup: InlineKeyboardMarkup | None = None
    ) -> list[Message]:
        """Replace the preview with the final HTML parts; `markup` goes under the last one."""
        await self._throttle.close()
        sent: list[Message] = []
        for index, part in enumerate(parts):
            buttons = markup if index == len(parts) - 1 else None
            if index == 0 and self._message is not None:
                await _edit(
                    self._bot, self._message, part, parse_mode=ParseMode.HTML, reply_markup=buttons
                )
                sent.append(self._message)
                continue
            sent.append(
                await self._bot.send_message(
                    self._chat_id,
                    part,
                    parse_mode=ParseMode.HTML,
                    reply_markup=buttons,
                    reply_parameters=self._reply if index == 0 else None,
                    message_thread_id=self._thread,
                )
            )
        return sent


class StatusMessage:
    """One message that says what is happening (fetching, reading, saved), edited in place."""

    def __init__(self, bot: Bot, chat_id: int, *, interval: float = 1.0) -> None:
        self._bot = bot
        self._chat_id = chat_id
        self._message: Message | None = None
        self._throttle = Throttle(self._show, interval)
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def message(self) -> Message | None:
        """The status message, once sent."""
        return self._message

    @property
    def bot(self) -> Bot:
        """The Telegram bot that writes this status."""
        return self._bot

    async def start(self, text: str, markup: InlineKeyboardMarkup | None = None) -> Message:
        """Send the status message (or adopt an existing one with `adopt`)."""
        self._message = await self._bot.send_message(self._chat_id, text, reply_markup=markup)
        return self._message

    def adopt(self, message: Message) -> None:
        """Use a message this bot sent earlier (e.g. the one whose buttons were tapped)."""
        self._message = message

    def set(self, text: str) -> None:
        """Show `text` soon (safe to call from a synchronous progress callback)."""
        task = asyncio.get_running_loop().create_task(self._throttle.push(text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _show(self, text: str) -> None:
        if self._message is None:
            await self.start(text)
            return
        try:
            await _edit(self._bot, self._message, text)
        except TelegramError as exc:
            logger.warning("Status update failed: %s", exc)

    async def done(self, text: str, *, html: bool = False) -> None:
        """The final status; replaces whatever was shown."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._throttle.close()
        parse_mode = ParseMode.HTML if html else None
        if self._message is None:
            await self._bot.send_message(self._chat_id, text, parse_mode=parse_mode)
        else:
            await _edit(self._bot, self._message, text, parse_mode=parse_mode, reply_markup=None)


@contextlib.asynccontextmanager
async def typing_action(
    bot: Bot, chat_id: int, *, every: float = 4.5, delay: float = 0.0
) -> AsyncIterator[None]:
    """Show "typing…" in the chat from `delay` seconds on until the block ends (Telegram shows
    it for ~5 s a call); a block that ends sooner sends nothing."""

    async def keep_typing() -> None:
        await asyncio.sleep(delay)
        while True:
            try:
                await bot.send_chat_action(chat_id, ChatAction.TYPING)
            except TelegramError as exc:
                logger.debug("Typing action failed: %s", exc)
            await asyncio.sleep(every)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
