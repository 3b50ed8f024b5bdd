"""Digest summaries: the configured chat model retells a plain digest, booked against the budget.

The worst case (every prompt token uncached, the full `max_tokens` of output) is reserved on
the budget day before the call and settled to the reported cost after it, the same way the
agent books a model call. Whenever the summary cannot be had — the reservation is refused,
the ledger is unavailable, the model fails or returns nothing usable — the plain digest is
kept and the reason logged: a summary never stops a digest from being sent.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

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
    Usage,
)
from storage.budget import BudgetLedger, BudgetUnavailableError, Reservation

__all__ = ["SUMMARY_MAX_TOKENS", "DigestSummariser", "summary_prompt"]

logger = logging.getLogger(__name__)

SUMMARY_MAX_TOKENS = 300
_PURPOSE = "digest summary"


def summary_prompt(name: str) -> str:
    """The system prompt asking for a short, faithful retelling of `name`'s digest."""
    return (
        f"Summarise this morning digest for {name} in a few friendly sentences; "
        "keep every document title; do not invent anything."
    )


class DigestSummariser:
    """Turns a plain digest into a few friendly sentences, or leaves it as it is."""

    def __init__(
        self,
        *,
        model: ChatModel,
        price: ModelPrice,
        budget: BudgetLedger,
        daily_budget_micros: int,
        budget_day: Callable[[], str],
        max_tokens: int = SUMMARY_MAX_TOKENS,
    ) -> None:
        self._model = model
        self._price = price
        self._budget = budget
        self._cap_micros = daily_budget_micros
        self._budget_day = budget_day
        self._max_tokens = max_tokens

    async def summarise(self, name: str, digest: str) -> str:
        """The model's summary of `digest` for `name`, or `digest` itself when there is none."""
        messages = [ChatMessage("system", summary_prompt(name)), ChatMessage("user", digest)]
        estimate = estimate_prompt_tokens(messages)
        reservation = await self._reserve(estimate)
        if reservation is None:
            return digest
        completion = await self._call(messages, reservation)
        if completion is None:
            return digest
        usage = completion.usage
        if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
            usage = Usage(estimate, estimate_tokens(completion.text), 0)
        await self._settle(reservation, math.ceil(call_cost(self._price, usage) * 1_000_000))
        text = completion.text.strip()
        if not text or completion.finish_reason == "length":
            # A cut-off summary may have dropped titles; the plain list has them all.
            logger.info(
                "Digest summary unusable (finish: %s); plain list sent", completion.finish_reason
            )
            return digest
        return text

    async def _reserve(self, estimate: int) -> Reservation | None:
        worst = worst_case_cost(self._price, estimate, self._max_tokens)
        try:
            reservation = await self._budget.reserve(
                self._budget_day(),
                math.ceil(worst * 1_000_000),
                self._cap_micros,
                purpose=_PURPOSE,
            )
        except BudgetUnavailableError as exc:
            logger.warning("Digest summary skipped, budget ledger unavailable: %s", exc)
            return None
        if reservation is None:
            logger.info("Digest summary skipped: the daily budget is spent; plain list sent")
        return reservation

    async def _call(
        self, messages: list[ChatMessage], reservation: Reservation
    ) -> Completion | None:
        completion: Completion | None = None
        try:
            async for event in self._model.stream(messages, max_tokens=self._max_tokens):
                if isinstance(event, Completion):
                    completion = event
        except ProviderStreamError as exc:
            # Text was produced, so it may be billed: keep the worst case (fail closed).
            await self._settle(reservation, reservation.amount_micros)
            logger.warning("Digest summary broke off, plain list sent: %s", exc)
            return None
        except ProviderError as exc:
            await self._release(reservation)
            logger.warning("Digest summary failed, plain list sent: %s", exc)
            return None
        if completion is None:
            await self._release(reservation)
            logger.warning("Digest summary: the model ended without a completion")
        return completion

    async def _settle(self, reservation: Reservation, micros: int) -> None:
        try:
            await self._budget.settle(reservation, micros)
        except BudgetUnavailableError as exc:  # the reservation keeps counting: fail closed
            logger.warning("Could not settle a digest summary's cost: %s", exc)

    async def _release(self, reservation: Reservation) -> None:
        try:
            await self._budget.release(reservation)
        except BudgetUnavailableError as exc:  # the reservation keeps counting: fail closed
            logger.warning("Could not release a digest summary's reservation: %s", exc)
