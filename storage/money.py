"""Money as whole micro-dollars: the one place that knows 1 USD = 1,000,000 micros.

Sums of integer micros never drift, and the conversions round the way a cap needs:
a cost or a reservation rounds up (`Money.cost`), so the ledger never books less
than a call may have cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Self

__all__ = ["MICROS_PER_USD", "Money"]

MICROS_PER_USD = 1_000_000


@dataclass(frozen=True, slots=True, order=True)
class Money:
    """An amount in micro-dollars (never negative where the ledger stores it)."""

    micros: int

    @classmethod
    def usd(cls, amount: float) -> Self:
        """A configured amount (a cap, a price total), rounded to the nearest micro."""
        return cls(round(amount * MICROS_PER_USD))

    @classmethod
    def cost(cls, amount: float) -> Self:
        """A cost or a worst case, rounded up: bookings never undercount."""
        return cls(math.ceil(amount * MICROS_PER_USD))

    @classmethod
    def zero(cls) -> Self:
        """Nothing."""
        return cls(0)

    @property
    def dollars(self) -> float:
        """The amount in dollars (for display and reports)."""
        return self.micros / MICROS_PER_USD

    def __add__(self, other: Money) -> Money:
        return Money(self.micros + other.micros)

    def __sub__(self, other: Money) -> Money:
        return Money(self.micros - other.micros)

    def format(self, places: int = 4) -> str:
        """`$0.0123`."""
        return f"${self.dollars:.{places}f}"
