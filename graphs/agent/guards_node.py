"""The checks `guard_input` makes before any model token: size, budget, rate, thread length,
and the content guards. The first one that fires refuses the turn; a message the injection
guard finds suspicious but not clearly an attack is flagged instead, and the turn runs
hardened (no high-risk tools, no private or memory search, a stricter system prompt)."""

from __future__ import annotations

from dataclasses import dataclass

from graphs.agent.context import AgentContext
from graphs.agent.state import TurnInput
from graphs.guards import MESSAGES, check_input
from storage.budget import BudgetUnavailableError

__all__ = ["GuardFlag", "GuardRefusal", "check_turn"]


@dataclass(frozen=True, slots=True)
class GuardRefusal:
    """A refusal: a stable code, a log-safe detail (never the message), a polite message."""

    reason: str
    detail: str
    message: str


@dataclass(frozen=True, slots=True)
class GuardFlag:
    """Not refused but suspicious: run the turn hardened. A stable code and a log-safe
    detail (never the message), for the incident."""

    reason: str
    detail: str


async def check_turn(
    ctx: AgentContext, turn: TurnInput, thread_turns: int, day: str
) -> GuardRefusal | GuardFlag | None:
    """The first check that refuses this turn (cheapest checks first); else a flag when the
    content guards want the turn hardened; else None."""
    for check in (_too_long, _budget, _rate, _thread):
        refusal = await check(ctx, turn, thread_turns, day)
        if refusal is not None:
            return refusal
    return _content(turn)


async def _too_long(
    ctx: AgentContext, turn: TurnInput, _thread_turns: int, _day: str
) -> GuardRefusal | None:
    limit = ctx.limits.max_message_chars
    if len(turn.text) <= limit:
        return None
    return GuardRefusal(
        "message_too_long",
        f"{len(turn.text)} characters",
        f"That message is too long for me ({len(turn.text)} characters; the limit is "
        f"{limit}). Could you shorten it, or send it as a file?",
    )


async def _budget(
    ctx: AgentContext, _turn: TurnInput, _thread_turns: int, day: str
) -> GuardRefusal | None:
    try:
        remaining = await ctx.meter.budget.remaining(day, ctx.meter.cap)
    except BudgetUnavailableError:
        return GuardRefusal(
            "budget_unavailable",
            "ledger unreadable",
            "I can't check today's budget right now, so I won't answer. Sorry!",
        )
    if remaining.micros > 0:
        return None
    return GuardRefusal(
        "budget_spent",
        f"day {day}",
        "Today's budget for answers is used up. Please try again tomorrow.",
    )


async def _rate(
    ctx: AgentContext, turn: TurnInput, _thread_turns: int, _day: str
) -> GuardRefusal | None:
    limits = ctx.limits
    since = ctx.clock() - limits.rate_limit_window
    recent = await ctx.turns.count_since(turn.user_id, since)
    if recent < limits.rate_limit_turns:
        return None
    minutes = int(limits.rate_limit_window.total_seconds() // 60)
    return GuardRefusal(
        "rate_limited",
        f"{recent} turns in {minutes} min",
        f"You've sent a lot of questions in the last {minutes} minutes. "
        "Please wait a little and ask again.",
    )


async def _thread(
    ctx: AgentContext, _turn: TurnInput, thread_turns: int, _day: str
) -> GuardRefusal | None:
    user_turns = thread_turns
    if user_turns < ctx.limits.max_thread_turns:
        return None
    return GuardRefusal(
        "thread_too_long",
        f"{user_turns} turns",
        "This conversation has become very long. Send /new to start a fresh one.",
    )


def _content(turn: TurnInput) -> GuardRefusal | GuardFlag | None:
    if turn.withheld_guard is not None:
        return GuardRefusal(
            turn.withheld_guard,
            turn.withheld_reason,
            MESSAGES.get(turn.withheld_guard, "I can't take that message."),
        )
    verdict = check_input(turn.text)
    if verdict.allowed and verdict.hardened:
        return GuardFlag(f"{verdict.guard}_hardened", verdict.reason or "")
    if verdict.allowed:
        return None
    return GuardRefusal(
        verdict.guard or "guard",
        verdict.reason or "",
        verdict.user_message or "I can't help with that message.",
    )
