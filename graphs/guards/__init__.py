"""Input guards: cards, IBANs, prompt injection (phrase rules and a small learned scorer) and
off-topic requests.

Pure and synchronous (numpy only, weights shipped with the package); `check_input` is the
one call the agent graph needs, `check_door_text` the one for text that enters by
other doors (forwarded messages, /note, captions), `injection_risks` the one for ingested
chunks. The detectors are exported for tests and benchmarks.
"""

from graphs.guards.doors import Door, check_door_text
from graphs.guards.ibans import IbanMatch, find_ibans, iban_is_valid
from graphs.guards.injection import (
    FLAG_THRESHOLD,
    INJECTION_THRESHOLD,
    InjectionAssessment,
    assess_injection,
    injection_risks,
    injection_score,
)
from graphs.guards.input_guard import MESSAGES, check_input, check_sensitive, prepare_guards
from graphs.guards.normalize import NormalizedText, normalize
from graphs.guards.payment import CardMatch, find_payment_cards, luhn_is_valid
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
    "FLAG_THRESHOLD",
    "GUARD_IBAN",
    "GUARD_OFF_TOPIC",
    "GUARD_PAYMENT_CARD",
    "GUARD_PROMPT_INJECTION",
    "INJECTION_THRESHOLD",
    "MESSAGES",
    "CardMatch",
    "Door",
    "GuardVerdict",
    "IbanMatch",
    "InjectionAssessment",
    "NormalizedText",
    "assess_injection",
    "check_door_text",
    "check_input",
    "check_sensitive",
    "find_ibans",
    "find_payment_cards",
    "iban_is_valid",
    "injection_risks",
    "injection_score",
    "luhn_is_valid",
    "normalize",
    "off_topic_kind",
    "prepare_guards",
]
