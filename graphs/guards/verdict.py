"""Define what an input guard answers: a frozen `GuardVerdict` and the stable guard codes.

A verdict crosses into `bot/` (it is stored with incidents), so it carries only plain,
log-safe values: the guard's short code, a short reason naming what fired (never the
matched secret), and a polite message for the person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALLOWED",
    "GUARD_IBAN",
    "GUARD_OFF_TOPIC",
    "GUARD_PAYMENT_CARD",
    "GUARD_PROMPT_INJECTION",
    "GuardVerdict",
    "refusal",
]

GUARD_PROMPT_INJECTION: Final = "prompt_injection"
GUARD_PAYMENT_CARD: Final = "payment_card"
GUARD_IBAN: Final = "iban"
GUARD_OFF_TOPIC: Final = "off_topic"


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """The outcome of the input guards for one message.

    `allowed` is True when no guard fired; then the other fields are None. Otherwise
    `guard` is a stable code (`GUARD_*`), `reason` a short log-safe explanation and
    `user_message` the polite text to send back.
    """

    allowed: bool
    guard: str | None
    reason: str | None
    user_message: str | None


ALLOWED: Final = GuardVerdict(allowed=True, guard=None, reason=None, user_message=None)


def refusal(guard: str, reason: str, user_message: str) -> GuardVerdict:
    """A verdict that refuses the message because `guard` fired."""
    return GuardVerdict(allowed=False, guard=guard, reason=reason, user_message=user_message)
