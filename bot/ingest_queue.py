"""One ingest per member at a time: the member's other sources wait in line, told their place.

Reading, chunking and embedding a long document takes minutes. A member who sends five files
at once gets them saved one after another, in the order sent, each with its own status
message: while a source waits, its status says how many of the member's sources are ahead of
it ("position 3"), and the line is edited as it moves up. Other members have lines of their
own, so nobody waits behind somebody else's upload (and the embedding model takes the
documents of different members in turns, see `graphs.fair_embedding`).

A running job reports its progress through the same sink: the ingest graph's steps
("Embedding 840 chunks...") and whatever a long reader reports (a transcription's minutes)
become the status lines an edge shows by editing one message.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from bot.errors import IngestRefusedError

__all__ = ["MAX_WAITING", "IngestQueue", "ProgressSink", "waiting_text"]

ProgressSink = Callable[[str], None]
"""Where a job's status lines go (an edge edits one status message with each)."""

T = TypeVar("T")

#: Sources one member may have waiting behind the running one (each holds its bytes).
MAX_WAITING = 10


def waiting_text(ahead: int) -> str:
    """The status of a source with `ahead` of the member's sources before it."""
    sources = "1 earlier source" if ahead == 1 else f"{ahead} earlier sources"
    return (
        f"⏳ In line behind {sources} of yours (position {ahead + 1}); "
        "I'll start on this as soon as the one before it is saved."
    )


@dataclass(eq=False, slots=True)
class _Ticket:
    sink: ProgressSink | None
    turn: asyncio.Event = field(default_factory=asyncio.Event)
    told: int = -1  # the place last shown, so a line is edited only when it moves

    def tell(self, ahead: int) -> None:
        if self.sink is not None and ahead != self.told:
            self.told = ahead
            self.sink(waiting_text(ahead))


class IngestQueue:
    """Per-member lines of ingest jobs; one event loop."""

    def __init__(self, *, max_waiting: int = MAX_WAITING) -> None:
        self._lines: dict[str, deque[_Ticket]] = {}
        self._max_waiting = max_waiting

    def waiting(self, member: str) -> int:
        """How many of the member's jobs wait behind the running one."""
        return max(0, len(self._lines.get(member, ())) - 1)

    async def run(
        self, member: str, job: Callable[[], Awaitable[T]], on_progress: ProgressSink | None
    ) -> T:
        """Run `job` when the member's earlier jobs are done; meanwhile tell `on_progress`
        its place. Raises `IngestRefusedError` when too many already wait."""
        line = self._lines.setdefault(member, deque())
        if len(line) > self._max_waiting:
            raise IngestRefusedError(
                f"You already have {len(line) - 1} sources waiting to be saved. Send this one "
                "again once they are done."
            )
        ticket = _Ticket(on_progress)
        line.append(ticket)
        try:
            if line[0] is not ticket:
                ticket.tell(len(line) - 1)
                await ticket.turn.wait()
            return await job()
        finally:
            self._leave(member, line, ticket)

    def _leave(self, member: str, line: deque[_Ticket], ticket: _Ticket) -> None:
        line.remove(ticket)
        if not line:
            del self._lines[member]
            return
        line[0].turn.set()  # a no-op when the first one is already running
        for ahead, waiting in enumerate(line):
            if ahead:
                waiting.tell(ahead)
