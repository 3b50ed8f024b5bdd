"""Approvals: owners are asked when a turn wants a high-risk tool; the first owner's tap
decides; the paused request resumes in whatever process runs now, and the requester hears
the outcome where they asked. Requests past their deadline are rejected by the clock.

The words owners and requesters read (the card, the tap's answer, the decided card) are
written here once for every edge.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from bot.events import ApprovalPending, ChatRef, Identity, TurnEvent
from bot.notifications import Notifiers
from bot.people import People
from bot.replies import ApprovalCard, ApprovalCards, Rich, bold, code, italic, rich
from bot.thread_locks import ThreadLocks
from graphs.agent.context import AgentContext
from graphs.agent.graph import AgentGraph, is_waiting, resume_turn, start_approval_wait
from graphs.agent.threads import approval_seed, approval_thread_id
from storage.approvals import Approval, ApprovalRepository
from storage.ids import ApprovalId
from storage.users import Role, User

__all__ = ["ApprovalDecision", "Approvals", "DecisionOutcome", "approval_card"]

logger = logging.getLogger(__name__)


class DecisionOutcome(StrEnum):
    """What an owner's tap did."""

    DECIDED = "decided"
    ALREADY_DECIDED = "already_decided"
    EXPIRED = "expired"
    UNKNOWN = "unknown"
    NOT_OWNER = "not_owner"


TAP_ANSWERS: Mapping[DecisionOutcome, str] = {
    DecisionOutcome.ALREADY_DECIDED: "This request was already decided.",
    DecisionOutcome.EXPIRED: "This request has expired.",
    DecisionOutcome.UNKNOWN: "There is no such request.",
    DecisionOutcome.NOT_OWNER: "Only an owner can decide this.",
}


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    """The result of a tap: its outcome, the short answer for the person who tapped, and for
    a decision the card that replaces the request ("✅ Approved by … at …")."""

    outcome: DecisionOutcome
    answer: str
    card: Rich | None = None

    @property
    def decided(self) -> bool:
        """Whether this tap decided the request."""
        return self.outcome is DecisionOutcome.DECIDED


def approval_card(request: ApprovalPending) -> Rich:
    """How an owner is asked: the summary, the tool and the deadline."""
    return rich(
        "🔔 ",
        bold("Approval needed"),
        f"\n{request.summary}\n\nTool: ",
        code(request.tool),
        f"\nExpires: {request.expires_at}",
    )


def _decided_card(approval: Approval, approve: bool, decider: str) -> Rich:
    when = (approval.decided_at or datetime.now(UTC)).astimezone(UTC)
    verdict = "✅ Approved" if approve else "❌ Rejected"
    return rich(
        f"{approval.summary}\n\n", bold(verdict), f" by {decider} at {when:%Y-%m-%d %H:%M} UTC"
    )


def _chat_of(approval: Approval) -> ChatRef:
    return ChatRef(approval.platform, approval.chat_id, approval.is_group, approval.chat_thread)


class Approvals:
    """Asking owners, waiting, deciding, expiring."""

    def __init__(
        self,
        *,
        graph: AgentGraph,
        context: AgentContext,
        people: People,
        approvals: ApprovalRepository,
        notifiers: Notifiers,
        locks: ThreadLocks,
        clock: Callable[[], datetime],
    ) -> None:
        self._graph = graph
        self._context = context
        self._people = people
        self._approvals = approvals
        self._notifiers = notifiers
        self._locks = locks
        self._clock = clock

    async def ask_owners(self, request: ApprovalPending, requester: User) -> None:
        """Show every owner whose edge runs the request, with Approve / Reject."""
        for platform, owner_id in self._people.owner_identities:
            notifier = self._notifiers.for_platform(platform)
            if notifier is not None:
                await notifier.ask_owner(owner_id, request)
        logger.info("Approval %s requested by user %s", request.approval_id, requester.id)

    async def start_wait(self, approval_id: str) -> None:
        """Open the approval thread, which pauses (checkpointed) until an owner decides."""
        approval = await self._approvals.get(ApprovalId(approval_id))
        if approval is None or await is_waiting(self._graph, approval_id):
            return
        seed = approval_seed(approval, self._clock())
        async for _ in start_approval_wait(self._graph, seed, approval_id, self._context):
            pass  # the thread stops at its interrupt before it emits anything

    async def recover(self) -> int:
        """At start: give every pending request whose wait never began (a crash) its thread."""
        started = 0
        for approval in await self._approvals.pending(now=self._clock()):
            if not await is_waiting(self._graph, approval.id):
                await self.start_wait(approval.id)
                started += 1
        return started

    async def decide(self, identity: Identity, approval_id: str, approve: bool) -> ApprovalDecision:
        """An owner's tap. Only owners decide; the first decision wins; the paused turn resumes
        here and its outcome goes to the requester's chat."""
        decider = await self._people.find(identity)
        if decider is None or decider.role is not Role.OWNER:
            return self._answer(DecisionOutcome.NOT_OWNER)
        decision = await self._approvals.decide(
            ApprovalId(approval_id), decider.id, approve, self._clock()
        )
        if decision.outcome == "expired" and decision.changed and decision.record is not None:
            # This tap found the request overdue and expired it: the requester hears so now.
            await self._resume(decision.record, {"approved": False, "expired": True})
        if decision.outcome != "decided" or decision.record is None:
            return self._answer(DecisionOutcome(decision.outcome))
        await self._resume(decision.record, {"approved": approve, "decided_by": decider.id})
        return ApprovalDecision(
            DecisionOutcome.DECIDED,
            "Approved." if approve else "Rejected.",
            _decided_card(decision.record, approve, decider.display_name),
        )

    @staticmethod
    def _answer(outcome: DecisionOutcome) -> ApprovalDecision:
        return ApprovalDecision(outcome, TAP_ANSWERS[outcome])

    async def expire(self, now: datetime) -> list[Approval]:
        """Auto-reject requests past their deadline at `now`; tell both sides: the requester
        gets the outcome in their chat, the owners a notice."""
        expired = await self._approvals.expire_due(now)
        for approval in expired:
            await self._resume(approval, {"approved": False, "expired": True})
            await self._tell_owners(
                f"⌛ Expired without a decision, so rejected: {approval.summary}"
            )
        return expired

    async def cards(self, identity: Identity, what: str) -> ApprovalCards:
        """The requests still waiting, as cards with buttons (owners only)."""
        await self._people.owner(identity, what)
        pending = await self._approvals.pending(now=self._clock())
        return ApprovalCards(
            tuple(
                ApprovalCard(
                    approval.id,
                    rich(
                        f"🔔 {approval.summary}\n",
                        italic(f"until {approval.expires_at:%Y-%m-%d %H:%M} UTC"),
                    ),
                )
                for approval in pending
            ),
            rich("No requests are waiting."),
        )

    async def _tell_owners(self, text: str) -> None:
        """A notice into each owner's private chat (their user id names it on every edge)."""
        for platform, owner_id in self._people.owner_identities:
            notifier = self._notifiers.for_platform(platform)
            if notifier is not None:
                await notifier.send_text(ChatRef(platform, owner_id), text)

    async def _resume(self, approval: Approval, decision: Mapping[str, Any]) -> None:
        if not await is_waiting(self._graph, approval.id):
            await self.start_wait(approval.id)
        async with self._locks(approval_thread_id(approval.id)):
            events = [
                event
                async for event in resume_turn(self._graph, approval.id, decision, self._context)
            ]
        notifier = self._notifiers.for_platform(approval.platform)
        if notifier is not None:
            await notifier.deliver(_chat_of(approval), events)
        await self._follow_up_requests(approval, events)

    async def _follow_up_requests(self, approval: Approval, events: list[TurnEvent]) -> None:
        """A follow-up that asked for another high-risk tool: ask the owners about it too."""
        requester = await self._people.by_id(approval.requester_user_id)
        for event in events:
            if isinstance(event, ApprovalPending) and requester is not None:
                await self.ask_owners(event, requester)
                await self.start_wait(event.approval_id)
