"""Run every content guard over one incoming message and return the first refusal.

`check_input` is what the agent graph's `guard_input` node calls before any model token
is spent. A message the injection guard finds suspicious but not clearly an attack is
let through with a hardened verdict (`GuardVerdict.hardened`), so the turn runs with fewer
powers instead of being refused. It normalises the text once and runs the guards cheapest
first: IBANs, payment cards, prompt injection, clearly off-topic requests. IBAN and card
numbers come first because such a message must not be stored whatever else it says; IBANs
before cards so that a valid IBAN is reported as an IBAN (the card detector also skips
IBAN-shaped strings, so a near-miss IBAN is not refused as a card). The verdict's `reason`
names what fired (card brand and last four digits, IBAN country and last four, injection
rule names and score, off-topic kind) and never the matched text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from graphs.guards.ibans import find_ibans
from graphs.guards.injection import assess_injection, prepare_rules
from graphs.guards.lookalikes import prepare_lookalikes
from graphs.guards.normal_forms import prepare_normal_forms
from graphs.guards.normalize import NormalizedText, normalize
from graphs.guards.payment import find_payment_cards
from graphs.guards.topic import off_topic_kind, prepare_topics
from graphs.guards.verdict import (
    ALLOWED,
    GUARD_IBAN,
    GUARD_OFF_TOPIC,
    GUARD_PAYMENT_CARD,
    GUARD_PROMPT_INJECTION,
    GuardVerdict,
    flagged,
    refusal,
)

__all__ = ["MESSAGES", "check_input", "check_sensitive"]

MESSAGES: Final[dict[str, str]] = {
    GUARD_PAYMENT_CARD: (
        "I can't take card numbers \u2014 please remove it and ask again. Nothing was stored."
    ),
    GUARD_IBAN: (
        "I can't take bank account numbers (IBANs) \u2014 please remove it and ask again. "
        "Nothing was stored."
    ),
    GUARD_PROMPT_INJECTION: (
        "That message looks like it is trying to change my instructions, so I didn't act on "
        "it. Please ask your question directly."
    ),
    GUARD_OFF_TOPIC: (
        "I'm a knowledge-base assistant: I answer questions from the saved documents and "
        "notes, so I can't help with that. Ask me about something in the knowledge base."
    ),
}


def prepare_guards(cache_dir: Path | None = None) -> None:
    """Build the guards' Hyperscan prescreens now (about 5 s), or read them from
    `cache_dir` where an earlier build saved them, and read the Unicode composition and
    look-alike tables (half a second); without this the first message does it. Startup
    runs it in a thread, off the event loop."""
    prepare_rules(cache_dir)
    prepare_topics(cache_dir)
    prepare_normal_forms()
    prepare_lookalikes()


def check_input(text: str) -> GuardVerdict:
    """Run the content guards on `text`: the first refusal; else a hardened verdict when
    the injection guard found the message suspicious; else `ALLOWED`."""
    normalized = normalize(text)
    suspicious: GuardVerdict | None = None
    for guard in (_iban_guard, _card_guard, _injection_guard, _topic_guard):
        verdict = guard(normalized)
        if verdict is not None and not verdict.allowed:
            return verdict
        suspicious = suspicious or verdict
    return suspicious or ALLOWED


def check_sensitive(text: str) -> GuardVerdict:
    """Only the payment-data guards (cards, IBANs): a message they refuse must not be stored
    anywhere, not even in a conversation checkpoint, so callers check it before anything."""
    normalized = normalize(text)
    return _iban_guard(normalized) or _card_guard(normalized) or ALLOWED


def _card_guard(normalized: NormalizedText) -> GuardVerdict | None:
    for view in normalized.plain_texts():
        cards = find_payment_cards(view)
        if cards:
            first = cards[0]
            reason = f"{len(cards)} card number(s), first {first.brand} ending {first.last4}"
            return refusal(GUARD_PAYMENT_CARD, reason, MESSAGES[GUARD_PAYMENT_CARD])
    return None


def _iban_guard(normalized: NormalizedText) -> GuardVerdict | None:
    for view in normalized.plain_texts():
        ibans = find_ibans(view)
        if ibans:
            first = ibans[0]
            reason = f"{len(ibans)} IBAN(s), first {first.country} ending {first.last4}"
            return refusal(GUARD_IBAN, reason, MESSAGES[GUARD_IBAN])
    return None


def _injection_guard(normalized: NormalizedText) -> GuardVerdict | None:
    assessment = assess_injection(normalized)
    if assessment.is_injection:
        return refusal(
            GUARD_PROMPT_INJECTION, assessment.describe(), MESSAGES[GUARD_PROMPT_INJECTION]
        )
    if assessment.is_suspicious:
        return flagged(GUARD_PROMPT_INJECTION, assessment.describe())
    return None


def _topic_guard(normalized: NormalizedText) -> GuardVerdict | None:
    kind = off_topic_kind(normalized)
    if kind is None:
        return None
    return refusal(GUARD_OFF_TOPIC, f"clearly off-topic request: {kind}", MESSAGES[GUARD_OFF_TOPIC])
