"""Find payment card numbers and IBANs in text, so a message carrying one can be refused or masked.

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

IBANs: two letters naming a country that issues IBANs, two check digits, and exactly
that country's length of letters and digits (single spaces or dashes allowed between
them, nothing alphanumeric straight after), in one case throughout, with ISO 13616
mod-97 equal to 1. The length table covers the SWIFT IBAN registry plus the countries
that issue IBANs outside it (several African countries, Iran); the BBAN's inner
structure is not checked.

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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from graphs.guards.match_starts import finditer_at
from graphs.guards.unicode_table import category_points, points, space_points

__all__ = [
    "IBAN_LENGTHS",
    "CardMatch",
    "IbanMatch",
    "MaskedText",
    "card_brand",
    "find_ibans",
    "find_payment_cards",
    "iban_is_valid",
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
_IBAN_SLACK = 2  # an IBAN-shaped string may be this many characters off its country's length

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
_DECIMAL = re.compile(r"\d")
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z]{2}[0-9]{2})")
_IBAN_GROUPS = re.compile(r"[A-Za-z0-9]+(?:[ -][A-Za-z0-9]+)*")
_ALNUM_GROUP = re.compile(r"[A-Za-z0-9]+")
_IBAN_WINDOW = 80  # characters: the longest IBAN (34) with a separator between every pair

# Cheap necessary conditions, read off a byte translation of the text's UTF-8 (a
# character outside ASCII is bytes of 0x80 and up, all "."). A card's run of digit
# groups, once its separators are deleted, is 13 digits or more in a row ("9" here;
# ASCII text only, as other digits and separators are not ASCII). An IBAN starts with
# two ASCII letters ("A") right before two digits.
_SEPARATOR_BYTES: Final = bytes(
    point for point in range(128)
    if chr(point) in _SEPARATOR_KINDS or re.fullmatch(r"[^\S\n]", chr(point))
)  # fmt: skip
_CLASS_BYTES: Final = bytes(
    ord("9") if chr(point).isdigit() and point < 128
    else ord("A") if chr(point).isalpha() and point < 128
    else ord(".")
    for point in range(256)
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
    """Every Luhn-valid card number with a known issuer prefix in `text`, left to right.

    Numbers inside IBAN-shaped strings are not cards (see the module docstring).
    """
    if _DECIMAL.search(text) is None:  # `\d`: category Nd, as `str.isdecimal`
        return []
    if not _may_hold_card(text):
        return []
    ibans = _iban_shaped_spans(text)
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
    for start in _iban_starts(text):
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


def _may_hold_card(text: str) -> bool:
    """Whether 13 decimal digits follow one another once separators and invisible
    characters are left out, as they do in every card's run of digit groups."""
    if text.isascii():
        return _CARD_DIGITS in _classes(text, _SEPARATOR_BYTES)
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


def _iban_starts(text: str) -> Iterator[int]:
    """Where `_IBAN_START` matches, in order. It needs two ASCII letters right before two
    ASCII digits ("AA99" in the byte classes), so most text ends there; in ASCII text the
    starts are read off the classes (each "AA99" not right after a letter or digit)."""
    classes = _classes(text)
    at = classes.find(b"AA99")
    if at >= 0 and not text.isascii():
        yield from (match.start() for match in _IBAN_START.finditer(text))
        return
    while at >= 0:
        if at == 0 or classes[at - 1] == ord("."):
            yield at
        at = classes.find(b"AA99", at + 1)


def _classes(text: str, deleted: bytes = b"") -> bytes:
    """`text` as bytes: "9" an ASCII digit, "A" an ASCII letter, "." any other ASCII
    character or byte of a character outside ASCII; the ASCII characters in `deleted`
    left out."""
    return text.encode("utf-8", "surrogatepass").translate(_CLASS_BYTES, deleted)


def _is_alnum_at(text: str, index: int) -> bool:
    return index < len(text) and text[index].isascii() and text[index].isalnum()


def _iban_shaped_spans(text: str) -> list[tuple[int, int]]:
    """Spans of strings shaped like an IBAN of a known country, whatever their checksum."""
    spans: list[tuple[int, int]] = []
    for start in _iban_starts(text):
        length = IBAN_LENGTHS.get(text[start : start + 2].upper())
        shape = _IBAN_GROUPS.match(text[start : start + _IBAN_WINDOW]) if length else None
        if length is None or shape is None:
            continue
        taken, end = 0, start
        for group in _ALNUM_GROUP.finditer(shape.group()):
            if taken + len(group.group()) > length + _IBAN_SLACK:
                break
            taken += len(group.group())
            end = start + group.end()
        if taken >= length - _IBAN_SLACK:
            spans.append((start, end))
    return spans


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
