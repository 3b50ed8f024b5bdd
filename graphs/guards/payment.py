"""Find payment card numbers and IBANs in text, so a message carrying one can be refused.

Cards: a run of digits, whole or in groups separated by single spaces or dashes, is a
card when some window of its groups holds 13-19 digits, starts with a known issuer
prefix (IIN) for which that length is issued, and passes the Luhn check. Multi-group
windows must look like a card is written (one separator throughout, groups of 4-6
digits, the last of 3-6), so phone numbers, dates and lists of small numbers do not
combine into a card. Digits glued to letters or decimals ("ID4111...", "3.1415...")
are not considered.

IBANs: two letters naming a country that issues IBANs, two check digits, and exactly
that country's length of letters and digits (single spaces or dashes allowed between
them, nothing alphanumeric straight after), in one case throughout, with ISO 13616
mod-97 equal to 1. The length table covers the SWIFT IBAN registry plus the countries
that issue IBANs outside it (several African countries, Iran); the BBAN's inner
structure is not checked.

Matches never carry the number itself: only the brand or country and the last four
characters, which is all a log line may show. Limits: a valid card or IBAN with an
unusual layout (groups of 1-2 digits, dots as separators) is missed; a random
Luhn-valid order number with a card prefix is refused (about one in ten such numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "IBAN_LENGTHS",
    "CardMatch",
    "IbanMatch",
    "card_brand",
    "find_ibans",
    "find_payment_cards",
    "iban_is_valid",
    "luhn_is_valid",
]

_DIGIT_RUN = re.compile(r"(?<!\w)(?<!\d[.,])\d+(?:[ -]\d+)*(?!\w)(?![.,]\d)")
_GROUP_SEPARATOR = re.compile(r"([ -])")
_MIN_CARD, _MAX_CARD = 13, 19

# (brand, lowest prefix, highest prefix, issued lengths); the first matching row wins.
_ISSUERS: Final[tuple[tuple[str, str, str, frozenset[int]], ...]] = (
    ("amex", "34", "34", frozenset({15})),
    ("amex", "37", "37", frozenset({15})),
    ("diners", "300", "305", frozenset(range(14, 20))),
    ("diners", "3095", "3095", frozenset(range(14, 20))),
    ("diners", "36", "36", frozenset(range(14, 20))),
    ("diners", "38", "39", frozenset(range(14, 20))),
    ("jcb", "3528", "3589", frozenset(range(16, 20))),
    ("mir", "2200", "2204", frozenset(range(16, 20))),
    ("mastercard", "2221", "2720", frozenset({16})),
    ("mastercard", "51", "55", frozenset({16})),
    ("visa", "4", "4", frozenset({13, 16, 19})),
    ("discover", "6011", "6011", frozenset(range(16, 20))),
    ("discover", "644", "649", frozenset(range(16, 20))),
    ("discover", "65", "65", frozenset(range(16, 20))),
    ("unionpay", "62", "62", frozenset(range(16, 20))),
    ("unionpay", "81", "81", frozenset(range(16, 20))),
    ("rupay", "82", "82", frozenset({16})),
    ("maestro", "50", "50", frozenset(range(12, 20))),
    ("maestro", "56", "69", frozenset(range(12, 20))),
    ("troy", "9792", "9792", frozenset({16})),
    ("uatp", "1", "1", frozenset({15})),
)

# IBAN length per country: the SWIFT IBAN registry, then countries issuing IBANs outside it.
IBAN_LENGTHS: Final[dict[str, int]] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
    "BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
    "DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
    "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
    "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
    # Not in the registry, but issued and accepted by banks:
    "AO": 25, "BF": 28, "BJ": 28, "CF": 27, "CG": 27, "CI": 28, "CM": 27, "CV": 25,
    "DZ": 26, "GA": 27, "GQ": 27, "GW": 25, "IR": 26, "KM": 27, "MA": 28, "MG": 27,
    "ML": 28, "MZ": 25, "NE": 28, "SN": 28, "TD": 27, "TG": 28,
}  # fmt: skip
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z]{2}[0-9]{2})")


@dataclass(frozen=True, slots=True)
class CardMatch:
    """A card number found at `start:end` of the scanned text (the number is not kept)."""

    brand: str
    last4: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class IbanMatch:
    """An IBAN found at `start:end` of the scanned text (only its country and last 4 kept)."""

    country: str
    last4: str
    start: int
    end: int


def luhn_is_valid(digits: str) -> bool:
    """Whether the ASCII digit string `digits` passes the Luhn check."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def card_brand(digits: str) -> str | None:
    """The issuer whose prefix and lengths fit `digits`, or None."""
    for brand, low, high, lengths in _ISSUERS:
        if len(digits) in lengths and low <= digits[: len(low)] <= high:
            return brand
    return None


def find_payment_cards(text: str) -> list[CardMatch]:
    """Every Luhn-valid card number with a known issuer prefix in `text`, left to right."""
    found: list[CardMatch] = []
    for run in _DIGIT_RUN.finditer(text):
        found += _cards_in_run(run.group(), run.start())
    return found


def iban_is_valid(candidate: str) -> bool:
    """Whether `candidate` (spaces allowed) is a well-formed IBAN with a correct checksum."""
    compact = candidate.replace(" ", "").replace("-", "")
    if not compact.isascii() or not compact.isalnum():
        return False
    if compact != compact.upper() and compact != compact.lower():
        return False
    compact = compact.upper()
    if IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact[2:4].isdigit():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def find_ibans(text: str) -> list[IbanMatch]:
    """Every valid IBAN in `text`, left to right."""
    found: list[IbanMatch] = []
    position = 0
    for start_match in _IBAN_START.finditer(text):
        start = start_match.start()
        if start < position:
            continue
        end = _iban_end(text, start)
        if end is not None and iban_is_valid(text[start:end]):
            compact = text[start:end].replace(" ", "").replace("-", "").upper()
            found.append(IbanMatch(country=compact[:2], last4=compact[-4:], start=start, end=end))
            position = end
    return found


def _iban_end(text: str, start: int) -> int | None:
    """Where an IBAN of its country's length starting at `start` ends, if it can."""
    length = IBAN_LENGTHS.get(text[start : start + 2].upper())
    if length is None:
        return None
    taken, index = 0, start
    while taken < length and index < len(text):
        char = text[index]
        if char.isascii() and char.isalnum():
            taken += 1
            index += 1
        elif char in " -" and taken >= 4 and _is_alnum_at(text, index + 1):
            index += 1
        else:
            break
    if taken < length or _is_alnum_at(text, index):
        return None
    return index


def _is_alnum_at(text: str, index: int) -> bool:
    return index < len(text) and text[index].isascii() and text[index].isalnum()


def _cards_in_run(run: str, offset: int) -> list[CardMatch]:
    """Cards in one run of digit groups: greedy, longest valid window first."""
    parts = _GROUP_SEPARATOR.split(run)
    groups, separators = parts[::2], parts[1::2]
    starts = [0]
    for group, separator in zip(groups, separators, strict=False):
        starts.append(starts[-1] + len(group) + len(separator))
    found: list[CardMatch] = []
    first = 0
    while first < len(groups):
        match = _longest_card(groups, separators, first)
        if match is None:
            first += 1
            continue
        last, brand, digits = match
        start = offset + starts[first]
        end = offset + starts[last] + len(groups[last])
        found.append(CardMatch(brand=brand, last4=digits[-4:], start=start, end=end))
        first = last + 1
    return found


def _longest_card(
    groups: list[str], separators: list[str], first: int
) -> tuple[int, str, str] | None:
    """(last group, brand, digits) of the longest card starting at group `first`."""
    best: tuple[int, str, str] | None = None
    for last in range(first, len(groups)):
        window = groups[first : last + 1]
        total = sum(len(g) for g in window)
        if total > _MAX_CARD:
            break
        if total < _MIN_CARD or not _looks_like_card_layout(window, separators[first:last]):
            continue
        joined = "".join(window)
        digits = joined if joined.isascii() else "".join(str(int(c)) for c in joined)
        if not luhn_is_valid(digits):
            continue
        brand = card_brand(digits)
        if brand is not None:
            best = (last, brand, digits)
    return best


def _looks_like_card_layout(window: list[str], separators: list[str]) -> bool:
    if len(window) == 1:
        return True
    if len(set(separators)) != 1:
        return False
    return all(4 <= len(g) <= 6 for g in window[:-1]) and 3 <= len(window[-1]) <= 6
