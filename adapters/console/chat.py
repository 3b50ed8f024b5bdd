"""The terminal chat: lines in, the same agent and commands as every other edge, text out.

Streams answers as they are written and lists their sources; commands go to the `bot/`
registry. At an interactive terminal, approvals and confirmations are asked inline (y/N);
with piped input they are never answered by the next line — a request stays waiting
(decide later with /approve), a confirmation is not taken.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from adapters.console.render import TurnPrinter, Write, render_reply, text_of
from bot.errors import LoreError
from bot.events import ChatRef, Identity
from bot.people import LOCAL_OWNER, LOCAL_PLATFORM
from bot.replies import Confirmation
from bot.service import Bot

__all__ = ["LOCAL_CHAT", "ConsoleChat", "ReadLine"]

LOCAL_CHAT = ChatRef(LOCAL_PLATFORM, "local")
ReadLine = Callable[[str], Awaitable[str | None]]
QUIT = frozenset({"/quit", "/exit"})
TERMINAL_HELP = "\n/quit (or an empty line) ends the chat."


class ConsoleChat:
    """A read-answer loop for one person at the terminal (the local owner by default).

    `got_input` tells whether any line came before the input ended."""

    def __init__(
        self,
        bot: Bot,
        *,
        read_line: ReadLine,
        write: Write,
        interactive: bool,
        identity: Identity = LOCAL_OWNER,
        chat: ChatRef = LOCAL_CHAT,
    ) -> None:
        self._bot = bot
        self._read = read_line
        self._write = write
        self._interactive = interactive
        self._prompt = "you> " if interactive else ""
        self._identity = identity
        self._chat = chat
        self.got_input = False

    async def run(self) -> None:
        """Chat until an empty line, /quit or the end of input."""
        self._write("Lore is ready. Ask a question, or /help.\n")
        while True:
            line = await self._read(self._prompt)
            if line is None:
                if self._interactive:
                    self._write("\n")  # Ctrl-D: the shell's prompt starts on its own line
                return
            self.got_input = True
            if not line.strip() or line.strip() in QUIT:
                return
            await self.handle(line.strip())

    async def handle(self, line: str) -> None:
        """One line: a command or a question."""
        if line.startswith("/"):
            name, _, args = line[1:].partition(" ")
            await self._command(name, args.strip())
            return
        await self._ask(line)

    async def _command(self, name: str, args: str) -> None:
        reply = await self._bot.run_command(
            self._identity, self._chat, name, args, progress=self._line
        )
        if reply is None:
            return
        if isinstance(reply, Confirmation):
            await self._confirm(reply)
            return
        text = render_reply(reply)
        self._line(text + (TERMINAL_HELP if name == "help" else ""))

    def _line(self, text: str) -> None:
        self._write(text + "\n")

    async def _confirm(self, question: Confirmation) -> None:
        self._line(text_of(question.body))
        if not self._interactive:
            self._line("Not done: confirm it at an interactive terminal.")
            return
        answer = await self._read(f"{question.yes_label}? [y/N] ")
        yes = (answer or "").strip().lower() in {"y", "yes"}
        reply = await self._bot.confirm(self._identity, self._chat, question.action, yes)
        self._line(render_reply(reply))

    async def _ask(self, text: str) -> None:
        printer = TurnPrinter(self._write)
        try:
            async for event in self._bot.handle_message(self._identity, self._chat, text):
                printer.show(event)
        except LoreError as exc:
            self._line(str(exc))
            return
        for request in printer.approvals:
            await self._approval(request.approval_id, request.summary)

    async def _approval(self, approval_id: str, summary: str) -> None:
        self._line(f"Approval needed: {summary}")
        if not self._interactive:
            self._line(f"It waits for an owner: /approve {approval_id} or /reject {approval_id}.")
            return
        answer = await self._read("Approve? [y/N] ")
        approve = (answer or "").strip().lower() in {"y", "yes"}
        decision = await self._bot.decide_approval(self._identity, approval_id, approve=approve)
        self._line(decision.answer)
