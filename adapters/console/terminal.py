"""Reading lines from the terminal without blocking the event loop or shutdown.

`input()` runs in a daemon thread of its own, one line at a time when asked: the event
loop keeps serving other edges meanwhile, readline editing still works at a terminal, and
stopping Lore (Ctrl-C, SIGTERM) never waits for a line that will not come.
"""

from __future__ import annotations

import asyncio
import queue
import threading

__all__ = ["TerminalInput"]


class TerminalInput:
    """Lines from stdin, asked for one at a time; None at the end of input."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[str, asyncio.Future[str | None]] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    async def read(self, prompt: str) -> str | None:
        """Show `prompt` and wait for the next line (None at the end of input)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="terminal-input", daemon=True)
            self._thread.start()
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._requests.put((prompt, future))
        return await future

    def close(self) -> None:
        """Let the reading thread end once its current line (if any) arrives."""
        self._requests.put(None)

    def _serve(self) -> None:
        while (request := self._requests.get()) is not None:
            prompt, future = request
            try:
                line: str | None = input(prompt)
            except (EOFError, KeyboardInterrupt):
                line = None
            loop = future.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_settle, future, line)


def _settle(future: asyncio.Future[str | None], line: str | None) -> None:
    if not future.done():
        future.set_result(line)
