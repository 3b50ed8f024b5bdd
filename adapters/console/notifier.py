"""The `Notifier` for the terminal: approval requests from other people, outcomes delivered
after a decision, messages to the owner and texts such as digests, printed as they come."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.console.render import TurnPrinter, Write
from bot.events import ApprovalPending, ChatRef, TurnEvent

__all__ = ["ConsoleNotifier"]


class ConsoleNotifier:
    """Implements `bot.notifications.Notifier` for one terminal."""

    def __init__(self, write: Write, *, local_user_id: str) -> None:
        self._write = write
        self._local_user_id = local_user_id
        self._sent = 0

    async def ask_owner(
        self,
        owner_platform_user_id: str,  # noqa: ARG002 - one terminal, one owner
        request: ApprovalPending,
    ) -> None:
        """Show another person's request; the local person's own are asked inline."""
        if request.requester_user_id == self._local_user_id:
            return
        self._write(
            f"\n[approval {request.approval_id}] {request.summary}\n"
            f"  /approve {request.approval_id}  or  /reject {request.approval_id}\n"
        )

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:  # noqa: ARG002
        """Print the outcome of an approved or rejected request."""
        printer = TurnPrinter(self._write)
        for event in events:
            printer.show(event)

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:  # noqa: ARG002
        """Print a member's message to the owner."""
        self._write(f"\n[to the owner] {text}\n")

    async def send_text(self, chat: ChatRef, text: str) -> str | None:  # noqa: ARG002
        """Print a text (a digest, a notice); the terminal's line is its message id."""
        self._sent += 1
        self._write(f"\n{text}\n")
        return f"console-{self._sent}"
