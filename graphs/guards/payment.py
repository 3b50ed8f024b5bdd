"""Find payment card numbers (and, through `ibans`, IBANs) in text, so a message carrying one
can be refused or masked.

Cards: a run of digit groups separated by spaces, dashes, dots, slashes or underscores
(Unicode dashes, dots and slashes, full-width ones, and a space on either side of the
mark count too) is a card when some window of consecutive groups holds 13-19 digits,
uses one kind of separator throughout, starts with a known issuer prefix (IIN) for
which that length is issued, and passes the Luhn check. Groups may have any size from
three digits up (4-4-4-4, 4-6-5, 4-3-3-3-3; the last group may be shorter), or be
single digits ("4 1 1 1 ..."); runs of two-digit groups are byte dumps and dates, not
cards. Digits may be any Unicode decimal digits
(full-width, Arabic-Indic...), and invisible characters (zero-width space, soft
hyphen, word joiner) inside a number are ignored. Digits glued to letters
("ID4111...") are not considered. Card candidates inside an IBAN-shaped string (a
country code, two check digits and about that country's IBAN length of letters and
digits, whether or not the checksum holds) are skipped: an IBAN, valid or near-miss,
is never taken for a card.

IBANs are found by `graphs.guards.ibans`.

Matches never carry the number itself: only the brand or country and the last four
characters, which is all a log line may show. `mask_payment_cards` replaces every
digit of each card but the last four with "•" (for text that is stored rather than
refused). Limits: a random Luhn-valid number with a card prefix is taken for a card
(about one in ten such numbers); a card glued to letters or split by other characters
(commas, words) is missed.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from graphs.guards.ibans import byte_classes, iban_shaped_spans
from graphs.guards.match_starts import finditer_at
from graphs.guards.unicode_table import category_points, points, space_points

__all__ = [
    "CardMatch",
    "MaskedText",
    "card_brand",
    "find_payment_cards",
    "luhn_is_valid",
    "mask_payment_cards",
]

_MASK = "\u2022"
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff"
# Separator marks by kind; a card uses one kind throughout (spaces alone are a kind too).
_SEPARATOR_KINDS: Final[dict[str, str]] = {
    **dict.fromkeys("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "dash"),
    **dict.fromkeys(".\u00b7\u2024\u2027\u30fb\uff0e\uff65", "dot"),
    **dict.fromkeys("/\u2044\u2215\uff0f", "slash"),
    **dict.fromkeys("_\uff3f", "underscore"),
}
_MARKS = re.escape("".join(_SEPARATOR_KINDS))
_GROUP = rf"\d(?:[{_INVISIBLE}]*\d)*"
# The marked form first: " - " is one separator, not a space and then "- ".
_SEPARATOR = rf"[{_INVISIBLE}]*(?:[^\S\n]?[{_MARKS}][^\S\n]?|[^\S\n]{{1,2}})[{_INVISIBLE}]*"
_DIGIT_RUN = re.compile(rf"(?<!\w){_GROUP}(?:{_SEPARATOR}{_GROUP})*(?!\w)")
_GROUP_OR_SEPARATOR = re.compile(rf"({_GROUP})|({_SEPARATOR})")
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

_DECIMAL = re.compile(r"\d")

# Cheap necessary conditions, read off a byte translation of the text's UTF-8 (a
# character outside ASCII is bytes of 0x80 and up, all "."). A card's run of digit
# groups, once its separators are deleted, is 13 digits or more in a row ("9" here;
# ASCII text only, as other digits and separators are not ASCII). An IBAN starts with
# two ASCII letters ("A") right before two digits.
_SEPARATOR_BYTES: Final = bytes(
    point for point in range(128)
    if chr(point) in _SEPARATOR_KINDS or re.fullmatch(r"[^\S\n]", chr(point))
)  # fmt: skip
_CARD_DIGITS: Final = b"9" * _MIN_CARD
_DIGIT, _LEFT_OUT = 1, 2


@dataclass(frozen=True, slots=True)
class CardMatch:
    """A card number found at `start:end` of the scanned text (the number is not kept)."""

    brand: str
    last4: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class MaskedText:
    """Text with every card number masked, and how many were."""

    text: str
    cards: int


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
    """Every Luhn-valid card number with a known issuer prefix in `text`, left to right.

    Numbers inside IBAN-shaped strings are not cards (see the module docstring).
    """
    if _DECIMAL.search(text) is None:  # `\d`: category Nd, as `str.isdecimal`
        return []
    if not _may_hold_card(text):
        return []
    ibans = iban_shaped_spans(text)
    found: list[CardMatch] = []
    # Every run starts with a digit: try the pattern only there (its lookbehind would
    # have the engine try every position), which finds the same runs in the same order.
    digits = [digit.start() for digit in _DECIMAL.finditer(text)]
    for run in finditer_at(_DIGIT_RUN, text, digits, 0, len(text)):
        cards = _cards_in_run(run.group(), run.start())
        found += [c for c in cards if not any(s < c.end and c.start < e for s, e in ibans)]
    return found


def mask_payment_cards(text: str) -> MaskedText:
    """`text` with each card number's digits but the last four replaced by a bullet."""
    cards = find_payment_cards(text)
    if not cards:
        return MaskedText(text, 0)
    parts: list[str] = []
    position = 0
    for card in cards:
        parts.append(text[position : card.start])
        parts.append(_mask_digits(text[card.start : card.end]))
        position = card.end
    parts.append(text[position:])
    return MaskedText("".join(parts), len(cards))


def _mask_digits(number: str) -> str:
    keep = 4
    masked = []
    for char in reversed(number):
        if char.isdecimal():
            masked.append(char if keep > 0 else _MASK)
            keep -= 1
        else:
            masked.append(char)
    return "".join(reversed(masked))


def _may_hold_card(text: str) -> bool:
    """Whether 13 decimal digits follow one another once separators and invisible
    characters are left out, as they do in every card's run of digit groups."""
    if text.isascii():
        return _CARD_DIGITS in byte_classes(text, _SEPARATOR_BYTES)
    kinds = _CARD_KINDS[points(text)]
    kept = kinds[kinds != _LEFT_OUT]
    edges = np.flatnonzero(np.diff(kept == _DIGIT, prepend=False, append=False))
    return bool(edges.size) and int((edges[1::2] - edges[::2]).max()) >= _MIN_CARD


def _card_kinds() -> npt.NDArray[np.uint8]:
    """Per code point: a decimal digit (`\\d`), a character a run of digit groups may
    hold between digits (separators, spaces but the line feed, invisible ones), or
    anything else."""
    kinds = np.zeros(sys.maxunicode + 1, dtype=np.uint8)
    kinds[[ord(char) for char in (*_SEPARATOR_KINDS, *_INVISIBLE)]] = _LEFT_OUT
    kinds[space_points()] = _LEFT_OUT
    kinds[ord("\n")] = 0  # a run of digit groups never crosses a line
    kinds[category_points("Nd")] = _DIGIT
    return kinds


def _cards_in_run(run: str, offset: int) -> list[CardMatch]:
    """Cards in one run of digit groups: greedy, longest valid window first."""
    groups: list[tuple[int, int, str]] = []  # (start, end, ASCII digits) of each group
    kinds: list[str] = []  # the kind of the separator after each group but the last
    for piece in _GROUP_OR_SEPARATOR.finditer(run):
        if piece.group(1) is not None:
            digits = "".join(str(int(c)) for c in piece.group(1) if c.isdecimal())
            groups.append((piece.start(), piece.end(), digits))
        else:
            kinds.append(_separator_kind(piece.group(2)))
    found: list[CardMatch] = []
    first = 0
    while first < len(groups):
        match = _longest_card(groups, kinds, first)
        if match is None:
            first += 1
            continue
        last, brand, digits = match
        start, end = offset + groups[first][0], offset + groups[last][1]
        found.append(CardMatch(brand=brand, last4=digits[-4:], start=start, end=end))
        first = last + 1
    return found


def _card_layout(window: list[tuple[int, int, str]]) -> bool:
    """Groups of 3+ digits (the last may be shorter), or one digit at a time.

    Runs of one- and two-digit groups are byte dumps, dates and lists far more often
    than cards ("57 68 61 74 20 69 73 ...").
    """
    sizes = [len(digits) for _, _, digits in window]
    return all(size >= 3 for size in sizes[:-1]) or all(size == 1 for size in sizes)


def _separator_kind(separator: str) -> str:
    marks = {_SEPARATOR_KINDS[char] for char in separator if char in _SEPARATOR_KINDS}
    return marks.pop() if marks else "space"


def _longest_card(
    groups: list[tuple[int, int, str]], kinds: list[str], first: int
) -> tuple[int, str, str] | None:
    """(last group, brand, digits) of the longest card starting at group `first`."""
    best: tuple[int, str, str] | None = None
    digits = ""
    for last in range(first, len(groups)):
        if last > first and kinds[last - 1] != kinds[first]:
            break  # one kind of separator throughout
        digits += groups[last][2]
        if len(digits) > _MAX_CARD:
            break
        if len(digits) < _MIN_CARD or not _card_layout(groups[first : last + 1]):
            continue
        if not luhn_is_valid(digits):
            continue
        brand = card_brand(digits)
        if brand is not None:
            best = (last, brand, digits)
    return best


_CARD_KINDS: Final = _card_kinds()
