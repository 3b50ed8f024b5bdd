"""Find IBANs in text (and IBAN-shaped strings, which the card detector skips).

IBANs: two letters naming a country that issues IBANs, two check digits, and exactly
that country's length of letters and digits (single spaces or dashes allowed between
them, nothing alphanumeric straight after), in one case throughout, with ISO 13616
mod-97 equal to 1. The length table covers the SWIFT IBAN registry plus the countries
that issue IBANs outside it (several African countries, Iran); the BBAN's inner
structure is not checked.

Matches never carry the IBAN itself: only the country and the last four characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

__all__ = [
    "IBAN_LENGTHS",
    "IbanMatch",
    "byte_classes",
    "find_ibans",
    "iban_is_valid",
    "iban_shaped_spans",
]

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
_IBAN_GROUPS = re.compile(r"[A-Za-z0-9]+(?:[ -][A-Za-z0-9]+)*")
_ALNUM_GROUP = re.compile(r"[A-Za-z0-9]+")
_IBAN_WINDOW = 80  # characters: the longest IBAN (34) with a separator between every pair
_IBAN_SLACK = 2  # an IBAN-shaped string may be this many characters off its country's length

# A byte translation of a text's UTF-8 (a character outside ASCII is bytes of 0x80 and
# up, all "."): "9" an ASCII digit, "A" an ASCII letter. An IBAN starts with two ASCII
# letters right before two digits; a card's digits run in "9"s (`payment`).
_CLASS_BYTES: Final = bytes(
    ord("9") if chr(point).isdigit() and point < 128
    else ord("A") if chr(point).isalpha() and point < 128
    else ord(".")
    for point in range(256)
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class IbanMatch:
    """An IBAN found at `start:end` of the scanned text (only its country and last 4 kept)."""

    country: str
    last4: str
    start: int
    end: int


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


def _iban_starts(text: str) -> Iterator[int]:
    """Where `_IBAN_START` matches, in order. It needs two ASCII letters right before two
    ASCII digits ("AA99" in the byte classes), so most text ends there; in ASCII text the
    starts are read off the classes (each "AA99" not right after a letter or digit)."""
    classes = byte_classes(text)
    at = classes.find(b"AA99")
    if at >= 0 and not text.isascii():
        yield from (match.start() for match in _IBAN_START.finditer(text))
        return
    while at >= 0:
        if at == 0 or classes[at - 1] == ord("."):
            yield at
        at = classes.find(b"AA99", at + 1)


def byte_classes(text: str, deleted: bytes = b"") -> bytes:
    """`text` as bytes: "9" an ASCII digit, "A" an ASCII letter, "." any other ASCII
    character or byte of a character outside ASCII; the ASCII characters in `deleted`
    left out."""
    return text.encode("utf-8", "surrogatepass").translate(_CLASS_BYTES, deleted)


def _is_alnum_at(text: str, index: int) -> bool:
    return index < len(text) and text[index].isascii() and text[index].isalnum()


def iban_shaped_spans(text: str) -> list[tuple[int, int]]:
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
