"""The terminal as an edge: the chat loop runs beside the other edges until the input ends
or Lore stops."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from adapters.console.chat import ConsoleChat
from adapters.console.notifier import ConsoleNotifier
from adapters.console.terminal import TerminalInput, prompt_showing
from bot.edge import RunningEdge
from bot.people import LOCAL_OWNER, LOCAL_PLATFORM
from bot.service import Bot

__all__ = ["ConsoleEdge"]


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


class ConsoleEdge:
    """The terminal chat for the person at this machine."""

    platform = LOCAL_PLATFORM

    def __init__(self, *, interactive: bool) -> None:
        self._interactive = interactive
        self._chat: ConsoleChat | None = None

    @property
    def got_input(self) -> bool:
        """Whether any line was read (False when the input ended before anything was asked)."""
        return self._chat is not None and self._chat.got_input

    @asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningEdge]:
        """Register the terminal's notifier and chat until the input ends."""
        user = await bot.user_for(LOCAL_OWNER)
        bot.register_notifier(
            LOCAL_PLATFORM, ConsoleNotifier(_write, local_user_id=user.id if user else "")
        )
        terminal = TerminalInput()
        chat = self._chat = ConsoleChat(
            bot, read_line=terminal.read, write=_write, interactive=self._interactive
        )
        running = RunningEdge("terminal")

        async def serve() -> None:
            try:
                await chat.run()
            finally:
                running.finished.set()

        task = asyncio.create_task(serve(), name="terminal-chat")
        try:
            yield running
        finally:
            if prompt_showing():
                _write("\n")  # stopped at the prompt (Ctrl-C): end its line
            terminal.close()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
