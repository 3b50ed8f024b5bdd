"""Updates to a message that grows (a streamed answer, a status line), sent at most about
once per interval: the latest text wins, a late one is flushed, and closing waits for a
send in flight so the final text always lands last."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

__all__ = ["Throttle"]


class Throttle:
    """Sends the latest of many texts, at most once per `interval` seconds."""

    def __init__(self, send: Callable[[str], Awaitable[None]], interval: float) -> None:
        self._send = send
        self._interval = interval
        self._last = float("-inf")
        self._pending: str | None = None
        self._sent: str | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def push(self, text: str) -> None:
        """Show `text` now if the interval has passed, else when it has."""
        self._pending = text
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            await self._flush()
        elif self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_later(wait))

    async def _flush_later(self, wait: float) -> None:
        await asyncio.sleep(wait)
        self._flusher = None
        await self._flush()

    async def _flush(self) -> None:
        async with self._lock:
            text, self._pending = self._pending, None
            if text is None or text == self._sent:
                return
            self._last = time.monotonic()
            self._sent = text
            await self._send(text)

    async def close(self) -> None:
        """Drop what is not sent yet; wait for a send in flight."""
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
            self._flusher = None
        async with self._lock:
            self._pending = None
