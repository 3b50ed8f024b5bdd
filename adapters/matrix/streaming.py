"""Text that grows in a room: an answer previewed in one message edited (`m.replace`) at
most once per interval, and a status message (downloading, reading, saved) edited in place.
The `Throttle` keeps the latest text and sends it last; a 429 on an edit is waited out by
the outbox meanwhile."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from adapters.matrix.html import Formatted, plain
from adapters.matrix.outbox import Outbox, SendError
from bot.throttle import Throttle

__all__ = ["LiveReply", "StatusMessage"]

logger = logging.getLogger(__name__)

PREVIEW_CHARS = 8000


class LiveReply:
    """One answer in a room: a preview message edited while it streams (private chats only),
    then the final parts, the first replacing the preview (or the bot's message `editing`)."""

    def __init__(
        self,
        outbox: Outbox,
        room_id: str,
        *,
        reply_to: str | None = None,
        thread: str | None = None,
        interval: float = 1.0,
        editing: str | None = None,
    ) -> None:
        self._outbox = outbox
        self._room_id = room_id
        self._reply_to = reply_to
        self._thread = thread
        self._event_id = editing  # an existing message of the bot's, edited in place
        self._throttle = Throttle(self._show, interval)

    async def update(self, text: str) -> None:
        """Show `text` (the whole answer so far, plain) soon; previews are best effort."""
        if text.strip():
            shown = text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS] + " …"
            await self._throttle.push(shown)

    async def _show(self, text: str) -> None:
        try:
            await self.write(plain(text))
        except SendError as exc:
            logger.warning("Answer preview failed: %s", exc)

    async def write(self, text: Formatted) -> str:
        if self._event_id is None:
            self._event_id = await self._outbox.send(
                self._room_id, text, reply_to=self._reply_to, thread=self._thread
            )
            return self._event_id
        await self._outbox.edit(self._room_id, self._event_id, text)
        return self._event_id

    async def finish(self, parts: Sequence[Formatted]) -> str:
        """Replace the preview with the final parts; the event id of the last one."""
        await self._throttle.close()
        last = await self.write(parts[0])
        for part in parts[1:]:
            last = await self._outbox.send(
                self._room_id, part, reply_to=self._reply_to, thread=self._thread
            )
        return last


class StatusMessage:
    """One message that says what is happening, edited in place (sent the first time)."""

    def __init__(self, reply: LiveReply, *, interval: float = 1.0) -> None:
        self._reply = reply
        self._throttle = Throttle(self._show, interval)
        self._tasks: set[asyncio.Task[None]] = set()

    async def _show(self, text: str) -> None:
        try:
            await self._reply.write(plain(text))
        except SendError as exc:
            logger.warning("Status update failed: %s", exc)

    async def push(self, text: str) -> None:
        """Show `text` now, or when the interval has passed."""
        await self._throttle.push(text)

    def set(self, text: str) -> None:
        """Show `text` soon (safe to call from a synchronous progress callback)."""
        task = asyncio.get_running_loop().create_task(self._throttle.push(text))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def finish(self, text: Formatted) -> str:
        """Wait for the updates in flight, drop those not sent, and write the final text."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._throttle.close()
        return await self._reply.finish([text])
