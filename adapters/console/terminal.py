"""Reading lines from the terminal without blocking the event loop or shutdown.

`input()` runs in a daemon thread of its own, one line at a time when asked: the event
loop keeps serving other edges meanwhile, readline editing still works at a terminal, and
stopping Lore (Ctrl-C, SIGTERM) never waits for a line that will not come.
"""

from __future__ import annotations

import asyncio
import queue
import sys
import threading

__all__ = ["TerminalInput", "print_above_prompt"]

CLEAR_LINE = "\r\x1b[2K"


class _Prompt:
    """The prompt `input()` is showing right now (None when no line is being read)."""

    shown: str | None = None


def prompt_showing() -> bool:
    """Whether a prompt is waiting for a line at an interactive terminal."""
    return bool(_Prompt.shown) and sys.stdout.isatty()


def print_above_prompt(text: str) -> None:
    """Print `text` (a warning) on stderr; while a prompt waits for a line, above it: the
    prompt's line is cleared first and shown again after, with what was typed so far."""
    prompt = _Prompt.shown
    if prompt is None or not sys.stdout.isatty():
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        return
    readline = sys.modules.get("readline")  # line editing, when something loaded it
    typed = readline.get_line_buffer() if readline is not None else ""
    sys.stdout.write(CLEAR_LINE)
    sys.stdout.flush()
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    sys.stdout.write(prompt + typed)
    sys.stdout.flush()


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
            _Prompt.shown = prompt
            try:
                line: str | None = input(prompt)
            except (EOFError, KeyboardInterrupt):
                line = None
            finally:
                _Prompt.shown = None
            loop = future.get_loop()
            if not loop.is_closed():
                loop.call_soon_threadsafe(_settle, future, line)


def _settle(future: asyncio.Future[str | None], line: str | None) -> None:
    if not future.done():
        future.set_result(line)
