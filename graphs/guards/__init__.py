"""Deterministic input guards: cards, IBANs, prompt injection and off-topic requests.

Pure, synchronous and model-free; `check_input` is the one call the agent graph needs,
the detectors are exported for tests and benchmarks.
"""

from graphs.guards.injection import (
    INJECTION_THRESHOLD,
    InjectionAssessment,
    assess_injection,
    injection_score,
)
from graphs.guards.input_guard import MESSAGES, check_input, check_sensitive
from graphs.guards.normalize import NormalizedText, normalize
from graphs.guards.payment import (
    CardMatch,
    IbanMatch,
    find_ibans,
    find_payment_cards,
    iban_is_valid,
    luhn_is_valid,
)
from graphs.guards.topic import off_topic_kind
from graphs.guards.verdict import (
    ALLOWED,
    GUARD_IBAN,
    GUARD_OFF_TOPIC,
    GUARD_PAYMENT_CARD,
    GUARD_PROMPT_INJECTION,
    GuardVerdict,
)

__all__ = [
    "ALLOWED",
    "GUARD_IBAN",
    "GUARD_OFF_TOPIC",
    "GUARD_PAYMENT_CARD",
    "GUARD_PROMPT_INJECTION",
    "INJECTION_THRESHOLD",
    "MESSAGES",
    "CardMatch",
    "GuardVerdict",
    "IbanMatch",
    "InjectionAssessment",
    "NormalizedText",
    "assess_injection",
    "check_input",
    "check_sensitive",
    "find_ibans",
    "find_payment_cards",
    "iban_is_valid",
    "injection_score",
    "luhn_is_valid",
    "normalize",
    "off_topic_kind",
]
