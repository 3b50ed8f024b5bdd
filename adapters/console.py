"""The terminal chat: the same agent as every other edge, for the local owner, in a terminal.

Streams answers as they are written, lists citations under them, asks for approvals
inline (y/n), and works with piped stdin so it can be scripted. It only translates
between lines of text and the `Bot` service.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Awaitable, Callable, Sequence

from bot.conversation import LINK_REPLIES
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
  /digest HH:MM ZONE [quiet]    a morning digest here (/digest off, /digest now)
  /link [CODE]                  a code to link another chat account; CODE: join that one
  /watch URL                    follow a feed or page for the shared knowledge
  /watches, /unwatch URL|NUMBER list the watched sources, stop following one
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
        self._sent = 0

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

    async def send_text(self, chat_id: str, text: str) -> str | None:  # noqa: ARG002
        """Print a text (a digest, a notice); the terminal's line is its message id."""
        self._sent += 1
        self._write(f"\n{text}\n")
        return f"console-{self._sent}"


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
            "/watch": self._watch,
            "/watches": self._watches,
            "/unwatch": self._unwatch,
            "/digest": self._digest,
            "/link": self._link,
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
            self._write(f"{verb}: {result.title} ({result.chunks_text})\n")

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

    async def _link(self, args: list[str]) -> None:
        if args:
            result = await self._bot.link_identity(LOCAL_OWNER, "".join(args))
            self._write(LINK_REPLIES[result.outcome] + "\n")
            return
        code = await self._bot.create_link_code(LOCAL_OWNER)
        if code is None:
            self._write("Only a registered person can link accounts.\n")
            return
        self._write(
            f"Send /link {code.display} from your other account (e.g. to the bot in Telegram)"
            f" before {code.expires_at:%H:%M} UTC; the code works once.\n"
        )

    async def _digest(self, args: list[str]) -> None:
        if args == ["off"]:
            stopped = await self._bot.digest_off(LOCAL_OWNER)
            self._write("Morning digests are off.\n" if stopped else "Your digest was not on.\n")
        elif args == ["now"]:
            await self._bot.digest_now(LOCAL_OWNER, LOCAL_CHAT)
        elif len(args) in (2, 3) and args[2:] in ([], ["quiet"]):
            schedule = await self._bot.set_digest(
                LOCAL_OWNER, LOCAL_CHAT, args[0], args[1], quiet_days=len(args) == 3
            )
            self._write(f"Morning digest at {schedule.local_time} ({schedule.timezone}).\n")
        else:
            self._write("Usage: /digest HH:MM ZONE [quiet], /digest off, /digest now\n")

    async def _watch(self, args: list[str]) -> None:
        added = await self._bot.watch(LOCAL_OWNER, args[0] if len(args) == 1 else "")
        source = added.source
        if not added.created:
            self._write(f"Already watching that (number {source.id}).\n")
            return
        count = f", {added.entries} entries now" if added.entries is not None else ""
        self._write(f"Watching {source.url} ({source.kind}{count}), number {source.id}.\n")

    async def _watches(self, _args: list[str]) -> None:
        sources = await self._bot.watches()
        if not sources:
            self._write("Nothing is watched yet. /watch URL adds a feed or page.\n")
        for source in sources:
            state = source.last_error or source.last_status or "not checked yet"
            self._write(
                f"  {source.id}: {source.title or source.url} ({source.kind}; {state};"
                f" next {source.next_check_at:%Y-%m-%d %H:%M} UTC)\n"
            )

    async def _unwatch(self, args: list[str]) -> None:
        removed = await self._bot.unwatch(LOCAL_OWNER, args[0] if len(args) == 1 else "")
        if removed is None:
            self._write("Not watching that. /watches lists the watched sources.\n")
            return
        self._write(f"Stopped watching {removed.url}.\n")
