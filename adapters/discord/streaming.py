"""Text that grows in a channel: an answer previewed in one message edited at most about once
per interval, a status message (fetching, reading, saved) edited in place, and the typing
indicator while a turn runs.

A 429 on an edit is waited out by discord.py (it sleeps `retry_after` and sends again) while
the `Throttle` holds newer text back, so the latest text always lands last.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import discord

from adapters.discord.context import edit, send
from adapters.discord.markdown import MAX_MESSAGE, escape
from bot.throttle import Throttle

__all__ = ["LiveReply", "StatusMessage", "Write", "channel_status", "typing"]

logger = logging.getLogger(__name__)

PREVIEW_CHARS = MAX_MESSAGE - 200
TYPING_EVERY = 8.0  # Discord shows "typing…" for about 10 s per call


def _preview(text: str) -> str:
    """The answer so far as plain text; escaping at most doubles it, so it always fits."""
    head = PREVIEW_CHARS // 2
    return escape(text) if len(text) <= head else escape(text[:head]) + " …"


class LiveReply:
    """One answer in a channel: a preview message edited while it streams (private chats),
    then the final parts, the first replacing the preview."""

    def __init__(
        self,
        channel: Callable[[], Awaitable[discord.abc.Messageable]],
        *,
        interval: float = 1.0,
    ) -> None:
        self._channel = channel
        self._message: discord.Message | None = None
        self._throttle = Throttle(self._show, interval)

    async def update(self, text: str) -> None:
        """Show `text` (the whole answer so far, plain) soon; previews are best effort."""
        if text.strip():
            await self._throttle.push(_preview(text))

    async def _show(self, text: str) -> None:
        try:
            if self._message is None:
                self._message = await send(await self._channel(), text)
            else:
                await edit(self._message, text)
        except discord.HTTPException as exc:
            logger.warning("Answer preview failed: %s", exc)

    async def finish(
        self, parts: Sequence[str], view: discord.ui.View | None = None
    ) -> list[discord.Message]:
        """Replace the preview with the final parts; `view` goes under the last one."""
        await self._throttle.close()
        sent: list[discord.Message] = []
        for index, part in enumerate(parts):
            buttons = view if index == len(parts) - 1 else None
            if index == 0 and self._message is not None:
                sent.append(await edit(self._message, part, view=buttons))
            else:
                sent.append(await send(await self._channel(), part, view=buttons))
        return sent


Show = Callable[[str], Awaitable[None]]
Write = Callable[[str, "discord.ui.View | None"], Awaitable[None]]


class StatusMessage:
    """One message that says what is happening, edited in place; `show` writes it (sends it
    the first time, edits it after)."""

    def __init__(self, show: Show, *, interval: float = 1.0) -> None:
        self._show_text = show
        self._throttle = Throttle(self._show, interval)
        self._tasks: set[asyncio.Task[None]] = set()

    async def _show(self, text: str) -> None:
        try:
            await self._show_text(text)
        except discord.HTTPException as exc:
            logger.warning("Status update failed: %s", exc)

    async def push(self, text: str) -> None:
        """Show `text` now, or when the interval has passed."""
        await self._throttle.push(text)

    def set(self, text: str) -> None:
        """Show `text` soon (safe to call from a synchronous progress callback)."""
        task = asyncio.get_running_loop().create_task(self._throttle.push(text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def settle(self) -> None:
        """Wait for the updates in flight and drop those not sent yet."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._throttle.close()


def channel_status(
    channel: discord.abc.Messageable,
    message: discord.Message | None = None,
    *,
    interval: float = 1.0,
) -> tuple[StatusMessage, Write]:
    """A status message in `channel` (or the bot's `message` there, edited), and the function
    that writes its final text."""
    held: list[discord.Message] = [message] if message is not None else []

    async def write(text: str, view: discord.ui.View | None = None) -> None:
        if held:
            held[0] = await edit(held[0], text, view=view)
        else:
            held.append(await send(channel, text, view=view))

    async def show(text: str) -> None:
        await write(text)

    return StatusMessage(show, interval=interval), write


@contextlib.asynccontextmanager
async def typing(channel: discord.abc.Messageable) -> AsyncIterator[None]:
    """Show "typing…" in the channel until the block ends (best effort)."""

    async def keep_typing() -> None:
        while True:
            try:
                await channel.typing()
            except discord.HTTPException as exc:
                logger.debug("Typing indicator failed: %s", exc)
            await asyncio.sleep(TYPING_EVERY)

    task = asyncio.create_task(keep_typing())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
