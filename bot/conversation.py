"""Conversations: a message from an identity becomes an agent turn, one at a time per thread.

Identity is resolved before any model call, and the acting `user_id` always comes from it.
Approval requests a turn makes are handed to `bot.approvals.Approvals`, which asks the
owners and opens the request's own waiting thread.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import datetime

from bot.approvals import Approvals
from bot.errors import NOT_INVITED
from bot.events import ApprovalPending, ChatRef, Identity, RefusalEvent, TurnDone, TurnEvent
from bot.people import People
from bot.thread_locks import ThreadLocks
from graphs.agent.context import AgentContext
from graphs.agent.graph import AgentGraph, delete_conversation, run_turn
from graphs.agent.state import TurnInput
from graphs.agent.threads import chat_thread_id, thread_id_of
from graphs.guards import check_sensitive
from storage.incidents import IncidentRepository
from storage.users import User

__all__ = ["Conversations"]

logger = logging.getLogger(__name__)

WITHHELD = "[message withheld: it contained payment data]"


class Conversations:
    """Turns for known people, refusals for everyone else."""

    def __init__(
        self,
        *,
        graph: AgentGraph,
        context: AgentContext,
        people: People,
        approvals: Approvals,
        incidents: IncidentRepository,
        locks: ThreadLocks,
        clock: Callable[[], datetime],
    ) -> None:
        self._graph = graph
        self._context = context
        self._people = people
        self._approvals = approvals
        self._incidents = incidents
        self._locks = locks
        self._clock = clock

    async def handle_message(
        self, identity: Identity, chat: ChatRef, text: str
    ) -> AsyncIterator[TurnEvent]:
        """Answer one message, streaming the turn's events."""
        user = await self._people.find(identity)
        if user is None:
            await self._incidents.record_guard(
                guard="unknown_user",
                reason="identity not registered",
                platform=chat.platform,
                chat_id=chat.chat_id,
                now=self._clock(),
            )
            yield RefusalEvent("unknown_user", NOT_INVITED)
            yield TurnDone(turn_id="", outcome="refused", answer=NOT_INVITED)
            return
        turn = self._turn(user, chat, text)
        requested: list[str] = []
        async with self._locks(thread_id_of(turn)):
            async for event in run_turn(self._graph, turn, self._context):
                if isinstance(event, ApprovalPending):
                    requested.append(event.approval_id)
                    await self._approvals.ask_owners(event, user)
                yield event
        for approval_id in requested:
            await self._approvals.start_wait(approval_id)

    def _turn(self, user: User, chat: ChatRef, text: str) -> TurnInput:
        sensitive = check_sensitive(text)
        return TurnInput(
            turn_id=uuid.uuid4().hex,
            user_id=user.id,
            role=user.role.value,
            platform=chat.platform,
            chat_id=chat.chat_id,
            is_group=chat.is_group,
            text=text if sensitive.allowed else WITHHELD,
            timezone=user.timezone or "UTC",
            received_at=self._clock().isoformat(),
            withheld_guard=sensitive.guard,
            withheld_reason=sensitive.reason or "",
            chat_thread=chat.thread,
            language=self._context.reply_language_of(text),
        )

    async def new_conversation(self, user: User, chat: ChatRef) -> None:
        """Forget this chat's conversation history for `user` (/new)."""
        thread = chat_thread_id(chat.platform, chat.chat_id, user.id, chat.thread)
        async with self._locks(thread):
            await delete_conversation(self._graph, thread)
