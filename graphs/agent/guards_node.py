"""The checks `guard_input` makes before any model token: size, budget, rate, thread length,
and the content guards. The first one that fires refuses the turn; a message the injection
guard finds suspicious but not clearly an attack is flagged instead, and the turn runs
hardened (no high-risk tools, no private or memory search, a stricter system prompt).
A refusal is in the member's language (`graphs.agent.guard_words`)."""

from __future__ import annotations

from dataclasses import dataclass

from graphs.agent.context import AgentContext
from graphs.agent.guard_words import GuardWords, guard_words
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
    return _content(ctx, turn)


def _words(ctx: AgentContext, turn: TurnInput) -> GuardWords:
    return guard_words(ctx.reply_language(turn))


async def _too_long(
    ctx: AgentContext, turn: TurnInput, _thread_turns: int, _day: str
) -> GuardRefusal | None:
    limit = ctx.limits.max_message_chars
    if len(turn.text) <= limit:
        return None
    return GuardRefusal(
        "message_too_long",
        f"{len(turn.text)} characters",
        _words(ctx, turn).too_long.format(length=len(turn.text), limit=limit),
    )


async def _budget(
    ctx: AgentContext, turn: TurnInput, _thread_turns: int, day: str
) -> GuardRefusal | None:
    try:
        remaining = await ctx.meter.budget.remaining(day, ctx.meter.cap)
    except BudgetUnavailableError:
        return GuardRefusal(
            "budget_unavailable", "ledger unreadable", _words(ctx, turn).budget_unavailable
        )
    if remaining.micros > 0:
        return None
    return GuardRefusal("budget_spent", f"day {day}", _words(ctx, turn).budget_spent)


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
        _words(ctx, turn).rate_limited.format(minutes=minutes),
    )


async def _thread(
    ctx: AgentContext, turn: TurnInput, thread_turns: int, _day: str
) -> GuardRefusal | None:
    user_turns = thread_turns
    if user_turns < ctx.limits.max_thread_turns:
        return None
    return GuardRefusal("thread_too_long", f"{user_turns} turns", _words(ctx, turn).thread_too_long)


def _content(ctx: AgentContext, turn: TurnInput) -> GuardRefusal | GuardFlag | None:
    if turn.withheld_guard is not None:
        return GuardRefusal(
            turn.withheld_guard,
            turn.withheld_reason,
            _guard_message(
                ctx,
                turn,
                turn.withheld_guard,
                MESSAGES.get(turn.withheld_guard, "I can't take that message."),
            ),
        )
    verdict = check_input(turn.text)
    if verdict.allowed and verdict.hardened:
        return GuardFlag(f"{verdict.guard}_hardened", verdict.reason or "")
    if verdict.allowed:
        return None
    guard = verdict.guard or "guard"
    return GuardRefusal(
        guard,
        verdict.reason or "",
        _guard_message(ctx, turn, guard, verdict.user_message or "I can't help with that message."),
    )


def _guard_message(ctx: AgentContext, turn: TurnInput, guard: str, english: str) -> str:
    """A content guard's message in the member's language (`english` where it has none)."""
    return _words(ctx, turn).guards.get(guard) or english
