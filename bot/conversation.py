"""Conversations: a message from an identity becomes an agent turn; an owner's tap resumes a paused
turn. Identity (owners from settings, members by invite) is resolved here, before any model
call, and the acting `user_id` always comes from it."""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from bot.events import (
    ApprovalPending,
    ChatRef,
    Identity,
    RefusalEvent,
    TurnDone,
    TurnEvent,
)
from bot.notifications import Notifiers
from graphs.agent.context import AgentContext
from graphs.agent.graph import (
    AgentGraph,
    approval_thread_id,
    is_waiting,
    resume_turn,
    run_turn,
    start_approval_wait,
    thread_id_of,
)
from graphs.agent.state import AgentState, TurnInput, TurnUsage, chat_thread_id
from graphs.guards import check_sensitive
from graphs.llm.types import ChatMessage, ToolCall
from storage.approvals import Approval, ApprovalRepository
from storage.ids import ApprovalId
from storage.incidents import IncidentRepository
from storage.invites import Invite, InviteRepository
from storage.link_codes import LinkCode, LinkCodeRepository, LinkResult
from storage.users import Role, User, UserRepository

__all__ = ["LINK_REPLIES", "NOT_INVITED", "Conversations", "DecisionResult"]

logger = logging.getLogger(__name__)

WITHHELD = "[message withheld: it contained payment data]"
NOT_INVITED = (
    "Hi! I only talk with people the owner has invited. "
    "Ask the owner for an invite link, then open it to start."
)
LINK_CODE_TTL = timedelta(minutes=15)
LINK_REPLIES: Mapping[str, str] = {
    "linked": "Linked: this account now shares your notes and settings with your other one.",
    "already_linked": "This account is already linked to yours; nothing to do.",
    "taken": (
        "This account already belongs to someone registered with me, so I did not link it. "
        "Accounts are never merged; ask the owner if this is a mistake."
    ),
    "invalid": "That link code is not valid (unknown, already used or expired). Get a new one.",
    "refused": "An owner account can only be linked with another owner account.",
}


@dataclass(frozen=True, slots=True)
class DecisionResult:
    """What an owner's tap did: `decided`, `already_decided`, `expired`, `unknown`, `not_owner`."""

    outcome: str
    approval: Approval | None = None
    decided_by: str | None = None


class Conversations:
    """Turns for known people; approvals for owners; invites for newcomers."""

    def __init__(
        self,
        *,
        graph: AgentGraph,
        context: AgentContext,
        users: UserRepository,
        invites: InviteRepository,
        approvals: ApprovalRepository,
        incidents: IncidentRepository,
        notifiers: Notifiers,
        owners: frozenset[tuple[str, str]],
        clock: Callable[[], datetime],
        link_codes: LinkCodeRepository | None = None,
    ) -> None:
        self._link_codes = link_codes
        self._graph = graph
        self._context = context
        self._users = users
        self._invites = invites
        self._approvals = approvals
        self._incidents = incidents
        self._notifiers = notifiers
        self._owners = owners
        self._clock = clock
        # One lock per thread while anyone uses it; unused locks are dropped (weak values).
        self._thread_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    def _lock(self, thread_id: str) -> asyncio.Lock:
        """The lock that keeps one thread's runs in order (checkpoints are per thread)."""
        lock = self._thread_locks.get(thread_id)
        if lock is None:
            lock = asyncio.Lock()
            self._thread_locks[thread_id] = lock
        return lock

    async def user_for(self, identity: Identity) -> User | None:
        """The registered user behind an identity; owners from settings register on first use."""
        user = await self._users.by_identity(identity.platform, identity.platform_user_id)
        if user is None and (identity.platform, identity.platform_user_id) in self._owners:
            user = await self._users.register(
                identity.platform, identity.platform_user_id, identity.display_name, Role.OWNER
            )
        return user

    async def handle_message(
        self, identity: Identity, chat: ChatRef, text: str
    ) -> AsyncIterator[TurnEvent]:
        """Answer one message, streaming the turn's events."""
        user = await self.user_for(identity)
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
        sensitive = check_sensitive(text)
        turn = TurnInput(
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
        )
        requested: list[str] = []
        async with self._lock(thread_id_of(turn)):
            async for event in run_turn(self._graph, turn, self._context):
                if isinstance(event, ApprovalPending):
                    requested.append(event.approval_id)
                    await self._ask_owners(event, user)
                yield event
        for approval_id in requested:
            await self._start_wait(approval_id)

    async def new_conversation(self, identity: Identity, chat: ChatRef) -> bool:
        """Forget this chat's conversation history (/new); False for an unknown person."""
        user = await self.user_for(identity)
        checkpointer = self._graph.checkpointer
        if user is None or not isinstance(checkpointer, BaseCheckpointSaver):
            return False
        thread = chat_thread_id(chat.platform, chat.chat_id, user.id)
        async with self._lock(thread):
            await checkpointer.adelete_thread(thread)
        return True

    async def _start_wait(self, approval_id: str) -> None:
        """Open the approval thread, which pauses (checkpointed) until an owner decides."""
        approval = await self._approvals.get(ApprovalId(approval_id))
        if approval is None or await is_waiting(self._graph, approval_id):
            return
        async for _ in start_approval_wait(
            self._graph, approval_seed(approval, self._clock()), approval_id, self._context
        ):
            pass  # the thread stops at its interrupt before it emits anything

    async def recover_approvals(self) -> int:
        """At start: give every pending request whose wait never began (a crash) its thread."""
        started = 0
        for approval in await self._approvals.pending(now=self._clock()):
            if not await is_waiting(self._graph, approval.id):
                await self._start_wait(approval.id)
                started += 1
        return started

    async def _ask_owners(self, request: ApprovalPending, requester: User) -> None:
        for platform, owner_id in sorted(self._owners):
            notifier = self._notifiers.for_platform(platform)
            if notifier is not None:
                await notifier.ask_owner(owner_id, request)
        logger.info("Approval %s requested by user %s", request.approval_id, requester.id)

    async def decide_approval(
        self, identity: Identity, approval_id: str, *, approve: bool
    ) -> DecisionResult:
        """An owner's tap. Only owners decide; the first decision wins; the paused turn resumes
        here (in whatever process runs now) and its outcome goes to the requester's chat."""
        decider = await self.user_for(identity)
        if decider is None or decider.role is not Role.OWNER:
            return DecisionResult("not_owner")
        decision = await self._approvals.decide(
            ApprovalId(approval_id), decider.id, approve, self._clock()
        )
        if decision.outcome == "expired" and decision.changed and decision.record is not None:
            # This tap found the request overdue and expired it: the requester hears so now.
            await self._resume(decision.record, {"approved": False, "expired": True})
        if decision.outcome != "decided" or decision.record is None:
            return DecisionResult(decision.outcome, decision.record)
        await self._resume(decision.record, {"approved": approve, "decided_by": decider.id})
        return DecisionResult("decided", decision.record, decider.display_name)

    async def expire_approvals(self, *, now: datetime | None = None) -> list[Approval]:
        """Auto-reject requests past their deadline (at `now`, default the clock); tell both
        sides: the requester gets the outcome in their chat, the owners a notice."""
        expired = await self._approvals.expire_due(now or self._clock())
        for approval in expired:
            await self._resume(approval, {"approved": False, "expired": True})
            await self._tell_owners(
                f"⌛ Expired without a decision, so rejected: {approval.summary}"
            )
        return expired

    async def _tell_owners(self, text: str) -> None:
        for platform, owner_id in sorted(self._owners):
            notifier = self._notifiers.for_platform(platform)
            if notifier is not None:
                await notifier.send_text(owner_id, text)

    async def _resume(self, approval: Approval, decision: Mapping[str, Any]) -> None:
        if not await is_waiting(self._graph, approval.id):
            await self._start_wait(approval.id)
        async with self._lock(approval_thread_id(approval.id)):
            events = [
                event
                async for event in resume_turn(self._graph, approval.id, decision, self._context)
            ]
        notifier = self._notifiers.for_platform(approval.platform)
        if notifier is not None:
            await notifier.deliver(approval.chat_id, events)

    async def pending_approvals(self) -> list[Approval]:
        """Requests still waiting for an owner."""
        return await self._approvals.pending(now=self._clock())

    async def create_invite(self, owner: Identity, *, days: float = 7.0) -> Invite | None:
        """A new member invite, for owners only."""
        user = await self.user_for(owner)
        if user is None or user.role is not Role.OWNER:
            return None
        return await self._invites.create(
            user.id, Role.MEMBER, now=self._clock(), ttl=timedelta(days=days)
        )

    async def redeem_invite(self, identity: Identity, code: str) -> User | None:
        """Register a newcomer with an invite code; None if the code is unknown, used or old."""
        existing = await self.user_for(identity)
        if existing is not None:
            return existing
        return await self._invites.register_with_invite(
            code,
            platform=identity.platform,
            platform_user_id=identity.platform_user_id,
            display_name=identity.display_name,
            now=self._clock(),
        )

    async def create_link_code(self, identity: Identity) -> LinkCode | None:
        """A one-time code (15 minutes) that links another identity to this person; None for
        someone not registered."""
        user = await self.user_for(identity)
        if user is None:
            return None
        return await self._require_link_codes().create(
            user.id, now=self._clock(), ttl=LINK_CODE_TTL
        )

    async def link_identity(self, identity: Identity, code: str) -> LinkResult:
        """Attach `identity` to the user who made `code`: once, before it expires, and only if
        the identity belongs to nobody else (no silent merge). An identity configured as an
        owner joins only an owner's account."""
        link_codes = self._require_link_codes()
        now = self._clock()
        if (identity.platform, identity.platform_user_id) in self._owners:
            found = await link_codes.usable(code, now=now)
            target = await self._users.get(found.user_id) if found is not None else None
            if target is not None and target.role is not Role.OWNER:
                return LinkResult("refused")
        result = await link_codes.redeem(
            code, platform=identity.platform, platform_user_id=identity.platform_user_id, now=now
        )
        logger.info(
            "Link of a %s identity: %s (user %s)",
            identity.platform,
            result.outcome,
            result.user_id or "-",
        )
        return result

    def _require_link_codes(self) -> LinkCodeRepository:
        if self._link_codes is None:
            raise RuntimeError("These Conversations were built without link codes")
        return self._link_codes


def approval_seed(approval: Approval, now: datetime) -> AgentState:
    """The starting state of an approval thread, built from the stored request alone.

    The continuation answers as if in a group chat (shared knowledge only): the stored
    request does not say where the chat was, so it fails closed.
    """
    call = ToolCall(f"approval-{approval.id}", approval.tool_name, approval.arguments_json)
    chat_id = approval.thread_id.rsplit(":", 2)[1]
    turn = TurnInput(
        turn_id=f"approval-{approval.id}",
        user_id=approval.requester_user_id,
        role=Role.MEMBER.value,
        platform=approval.platform,
        chat_id=approval.chat_id or chat_id,
        is_group=True,
        text=approval.summary,
        timezone="UTC",
        received_at=now.isoformat(),
    )
    return {
        "turn": turn,
        "resume_from_approval": True,
        "messages": [
            ChatMessage("user", approval.summary),
            ChatMessage("assistant", "", (call,)),
        ],
        "pending_calls": [call],
        "approval_id": approval.id,
        "passages": {},
        "tool_rounds": 1,
        "tools_used": [],
        "usage": TurnUsage(),
        "node_ms": {},
        "refusal": None,
        "error": None,
        "answer": "",
        "finish_reason": "",
    }
