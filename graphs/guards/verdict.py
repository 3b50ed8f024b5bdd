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
    "flagged",
    "refusal",
]

GUARD_PROMPT_INJECTION: Final = "prompt_injection"
GUARD_PAYMENT_CARD: Final = "payment_card"
GUARD_IBAN: Final = "iban"
GUARD_OFF_TOPIC: Final = "off_topic"


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """The outcome of the input guards for one message.

    `allowed` is True when no guard refused; then `user_message` is None. A refusal has
    `guard` (a stable `GUARD_*` code), `reason` (a short log-safe explanation) and
    `user_message` (the polite text to send back). `hardened` is True when the message
    is allowed but suspicious: `guard` and `reason` then say why, and the turn runs
    hardened (see `graphs.agent.guards_node`). A clean message is `ALLOWED`.
    """

    allowed: bool
    guard: str | None
    reason: str | None
    user_message: str | None
    hardened: bool = False


ALLOWED: Final = GuardVerdict(allowed=True, guard=None, reason=None, user_message=None)


def refusal(guard: str, reason: str, user_message: str) -> GuardVerdict:
    """A verdict that refuses the message because `guard` fired."""
    return GuardVerdict(allowed=False, guard=guard, reason=reason, user_message=user_message)


def flagged(guard: str, reason: str) -> GuardVerdict:
    """A verdict that lets the message through but asks for a hardened turn."""
    return GuardVerdict(allowed=True, guard=guard, reason=reason, user_message=None, hardened=True)
