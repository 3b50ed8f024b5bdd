"""The terminal chat: the same agent as every other edge, for the local owner, in a terminal.

Streams answers as they are written, lists citations under them, asks for approvals
inline (y/n), and works with piped stdin so it can be scripted. It only translates
between lines of text and the `Bot` service.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Awaitable, Callable, Sequence

from bot.errors import LoreError
from bot.events import (
    AnswerDelta,
    ApprovalPending,
    ChatRef,
    Identity,
    RefusalEvent,
    ToolStatus,
    TurnDone,
    TurnError,
    TurnEvent,
)
from bot.ingest_requests import request_for
from bot.service import Bot

__all__ = ["LOCAL_OWNER", "ConsoleChat", "ConsoleNotifier"]

logger = logging.getLogger(__name__)

PLATFORM = "console"
LOCAL_OWNER = Identity(PLATFORM, "owner", "You")
LOCAL_CHAT = ChatRef(PLATFORM, "local")
ReadLine = Callable[[str], Awaitable[str | None]]
Write = Callable[[str], None]

HELP = """Ask anything about the knowledge base. Commands:
  /ingest [--shared] PATH|URL   remember a file, folder or web page (private unless --shared)
  /budget                       today's spending against the daily cap
  /approvals                    requests waiting for your decision
  /approve ID, /reject ID       decide one
  /unanswered                   questions the knowledge could not answer
  /invite                       an invite code for a new member
  /new                          start a fresh conversation (forget this chat's history)
  /help                         this text;  /quit (or an empty line) ends the chat"""


class TurnPrinter:
    """Renders one turn's events as terminal text."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self._streamed: list[str] = []
        self.approvals: list[ApprovalPending] = []

    def show(self, event: TurnEvent) -> None:
        """Print one event."""
        if isinstance(event, AnswerDelta):
            self._streamed.append(event.text)
            self._write(event.text)
        elif isinstance(event, ToolStatus):
            self._write(f"  ({event.message})\n")
        elif isinstance(event, ApprovalPending):
            self.approvals.append(event)
        elif isinstance(event, TurnError):
            self._write(f"Sorry: {event.message}\n")
        elif isinstance(event, RefusalEvent) and not self._streamed:
            self._streamed.append(event.message)
            self._write(event.message)
        elif isinstance(event, TurnDone):
            self._finish(event)

    def _finish(self, done: TurnDone) -> None:
        streamed = "".join(self._streamed)
        if done.answer and done.answer != streamed:
            if streamed:
                self._write("\n(Corrected answer:)\n")
            self._write(done.answer)
        self._write("\n")
        if done.citations:
            self._write("Sources:\n")
            for citation in done.citations:
                self._write(f"  [{citation.ref}] {citation.title} - {citation.source}\n")
        self._streamed = []


class ConsoleNotifier:
    """Notifications for the terminal: approval requests from others, delivered outcomes."""

    def __init__(self, write: Write, *, local_user_id: str) -> None:
        self._write = write
        self._local_user_id = local_user_id

    async def ask_owner(
        self,
        owner_platform_user_id: str,  # noqa: ARG002 - one terminal, one owner
        request: ApprovalPending,
    ) -> None:
        """Show another person's request; the local owner's own are asked inline."""
        if request.requester_user_id == self._local_user_id:
            return
        self._write(
            f"\n[approval {request.approval_id}] {request.summary}\n"
            f"  /approve {request.approval_id}  or  /reject {request.approval_id}\n"
        )

    async def deliver(self, chat_id: str, events: Sequence[TurnEvent]) -> None:  # noqa: ARG002
        """Print the outcome of an approved or rejected request."""
        printer = TurnPrinter(self._write)
        for event in events:
            printer.show(event)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:  # noqa: ARG002
        """Print a member's message to the owner."""
        self._write(f"\n[to the owner] {text}\n")


class ConsoleChat:
    """A read-answer loop for the local owner."""

    def __init__(self, bot: Bot, *, read_line: ReadLine, write: Write, interactive: bool) -> None:
        self._bot = bot
        self._read = read_line
        self._write = write
        self._prompt = "you> " if interactive else ""
        self._commands: dict[str, Callable[[list[str]], Awaitable[None]]] = {
            "/help": self._help,
            "/ingest": self._ingest,
            "/budget": self._budget,
            "/approvals": self._approvals,
            "/approve": self._approve,
            "/reject": self._reject,
            "/unanswered": self._unanswered,
            "/invite": self._invite,
            "/new": self._new,
        }

    async def run(self) -> None:
        """Chat until an empty line, /quit or end of input."""
        self._write("Lore is ready. Ask a question, or /help.\n")
        while True:
            line = await self._read(self._prompt)
            if line is None or not line.strip() or line.strip() in {"/quit", "/exit"}:
                return
            await self.handle(line.strip())

    async def handle(self, line: str) -> None:
        """One line: a command or a question."""
        if line.startswith("/"):
            words = shlex.split(line)
            command = self._commands.get(words[0])
            if command is None:
                self._write(f"Unknown command {words[0]}. Try /help.\n")
                return
            try:
                await command(words[1:])
            except LoreError as exc:
                self._write(f"{exc}\n")
            return
        await self._ask(line)

    async def _ask(self, text: str) -> None:
        printer = TurnPrinter(self._write)
        async for event in self._bot.handle_message(LOCAL_OWNER, LOCAL_CHAT, text):
            printer.show(event)
        for request in printer.approvals:
            self._write(f"Approval needed: {request.summary}\n")
            answer = await self._read("Approve? [y/N] ")
            approve = (answer or "").strip().lower() in {"y", "yes"}
            await self._decide(request.approval_id, approve=approve)

    async def _decide(self, approval_id: str, *, approve: bool) -> None:
        result = await self._bot.decide_approval(LOCAL_OWNER, approval_id, approve=approve)
        messages = {
            "decided": "Approved." if approve else "Rejected.",
            "already_decided": "That request was already decided.",
            "expired": "That request has expired.",
            "unknown": "There is no such request.",
            "not_owner": "Only an owner can decide.",
        }
        self._write(messages.get(result.outcome, result.outcome) + "\n")

    async def _new(self, _args: list[str]) -> None:
        await self._bot.conversations.new_conversation(LOCAL_OWNER, LOCAL_CHAT)
        self._write("Started a fresh conversation.\n")

    async def _help(self, _args: list[str]) -> None:
        self._write(HELP + "\n")

    async def _ingest(self, args: list[str]) -> None:
        shared = "--shared" in args
        sources = [arg for arg in args if arg != "--shared"]
        if len(sources) != 1:
            self._write("Usage: /ingest [--shared] PATH|URL\n")
            return
        owner = None if shared else (await self._bot.conversations.user_for(LOCAL_OWNER))
        owner_id = owner.id if owner is not None else None
        for request in await request_for(sources[0], owner_id):
            try:
                result = await self._bot.ingest(request)
            except LoreError as exc:  # one refused file does not stop a folder
                self._write(f"Skipped {request.path or request.url}: {exc}\n")
                continue
            verb = result.outcome.value.capitalize()
            self._write(f"{verb}: {result.title} ({result.chunk_count} chunks)\n")

    async def _budget(self, _args: list[str]) -> None:
        report = await self._bot.budget_report()
        self._write(f"Today ({report.day}): ${report.spent_usd:.4f} of ${report.cap_usd:.2f}\n")

    async def _approvals(self, _args: list[str]) -> None:
        pending = await self._bot.conversations.pending_approvals()
        if not pending:
            self._write("No requests are waiting.\n")
        for approval in pending:
            self._write(f"  {approval.id}: {approval.summary} (until {approval.expires_at:%c})\n")

    async def _approve(self, args: list[str]) -> None:
        await self._decide(args[0] if args else "", approve=True)

    async def _reject(self, args: list[str]) -> None:
        await self._decide(args[0] if args else "", approve=False)

    async def _unanswered(self, _args: list[str]) -> None:
        questions = await self._bot.unanswered()
        if not questions:
            self._write("Every question so far found a source.\n")
        for question in questions:
            self._write(f"  {question.created_at:%Y-%m-%d %H:%M}  {question.question}\n")

    async def _invite(self, _args: list[str]) -> None:
        invite = await self._bot.conversations.create_invite(LOCAL_OWNER)
        if invite is None:
            self._write("Only an owner can invite.\n")
            return
        self._write(f"Invite code (valid until {invite.expires_at:%Y-%m-%d}): {invite.code}\n")
