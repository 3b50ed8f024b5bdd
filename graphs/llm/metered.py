"""One metered model call: reserve the worst case on today's budget, stream, then settle the
real cost or release the reservation. Every model call that costs money goes through here.

The rules, written once:
- reserve `worst_case_cost` (every prompt token uncached, counted as an upper bound no
  text can undercut, and `max_tokens` of output) before the call; a refused or unreadable
  ledger means no call (`BudgetRefusedError`);
- a call that fails before anything streamed is released; one that broke off mid-stream
  is settled at the reserved worst case (text was produced, so it may be billed);
- a finished call is settled at `call_cost` of the provider's usage, estimated from the
  texts when the provider reports none;
- a ledger that cannot be settled or released keeps counting the reservation (fail closed).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from graphs.llm.pricing import (
    ModelPrice,
    call_cost,
    estimate_prompt_tokens,
    estimate_tokens,
    worst_case_cost,
)
from graphs.llm.types import (
    ChatMessage,
    ChatModel,
    Completion,
    ProviderError,
    ProviderStreamError,
    ToolChoice,
    ToolSpec,
    Usage,
)
from storage.budget import BudgetLedger, BudgetUnavailableError, Reservation
from storage.money import Money

__all__ = ["BudgetRefusedError", "Meter", "MeteredCompletion", "metered_call"]

logger = logging.getLogger(__name__)


class BudgetRefusedError(Exception):
    """No call was made: the day's budget is spent, or the ledger cannot be read."""

    def __init__(self, reason: Literal["budget_spent", "budget_unavailable"]) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Meter:
    """Where and against what a call is booked: the ledger, the model's price, the daily
    cap, and today's budget day (a function, so the day rolls over by itself)."""

    budget: BudgetLedger
    price: ModelPrice
    cap: Money
    day: Callable[[], str]


@dataclass(frozen=True, slots=True)
class MeteredCompletion:
    """A finished call, its usage (reported, or estimated when the provider gave none) and
    what it was booked at."""

    completion: Completion
    usage: Usage
    cost: Money


async def _reserve(meter: Meter, amount: Money, purpose: str) -> Reservation:
    try:
        reservation = await meter.budget.reserve(meter.day(), amount, meter.cap, purpose=purpose)
    except BudgetUnavailableError as exc:
        logger.warning("No %s: the budget ledger is unavailable: %s", purpose, exc)
        raise BudgetRefusedError("budget_unavailable") from exc
    if reservation is None:
        raise BudgetRefusedError("budget_spent")
    return reservation


async def _close(meter: Meter, reservation: Reservation, cost: Money | None) -> None:
    """Settle at `cost`, or release when `cost` is None; a failing ledger keeps counting."""
    try:
        if cost is None:
            await meter.budget.release(reservation)
        else:
            await meter.budget.settle(reservation, cost)
    except BudgetUnavailableError as exc:
        logger.warning("Reservation %d left open (still counted): %s", reservation.id, exc)


async def _stream(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    *,
    tools: Sequence[ToolSpec],
    tool_choice: ToolChoice,
    max_tokens: int,
    on_text: Callable[[str], None] | None,
) -> Completion:
    completion: Completion | None = None
    events = model.stream(messages, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens)
    try:
        async for event in events:
            if isinstance(event, Completion):
                completion = event
            elif event.text and on_text is not None:
                on_text(event.text)  # may raise to stop the call (a looping model)
    finally:
        # Leaving early closes the stream, and with it the HTTP response, at once.
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    if completion is None:
        raise ProviderStreamError("The model stream ended without a completion")
    return completion


async def metered_call(
    meter: Meter,
    model: ChatModel,
    messages: Sequence[ChatMessage],
    *,
    purpose: str,
    max_tokens: int,
    tools: Sequence[ToolSpec] = (),
    tool_choice: ToolChoice = "auto",
    on_text: Callable[[str], None] | None = None,
) -> MeteredCompletion:
    """Call `model` once within the budget; `on_text` sees each streamed piece of text.

    Raises `BudgetRefusedError` before any call, or the provider's `ProviderError` after
    the reservation was released (nothing streamed) or settled at the worst case.
    """
    estimate = estimate_prompt_tokens(messages, tools)
    reservation = await _reserve(meter, worst_case_cost(meter.price, estimate, max_tokens), purpose)
    try:
        completion = await _stream(
            model,
            messages,
            tools=tools,
            tool_choice=tool_choice,
            max_tokens=max_tokens,
            on_text=on_text,
        )
    except ProviderStreamError:
        await _close(meter, reservation, reservation.amount)
        raise
    except ProviderError:
        await _close(meter, reservation, None)
        raise
    usage = completion.usage
    if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
        usage = Usage(estimate, estimate_tokens(completion.text), 0)
    cost = call_cost(meter.price, usage)
    await _close(meter, reservation, cost)
    return MeteredCompletion(completion, usage, cost)
