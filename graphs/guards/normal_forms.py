"""NFKC and accent folding of a whole text, one character at a time where that is exact.

`unicodedata.normalize` reads a text of 4,000 characters in 0.2-0.5 ms whenever it holds
something to change (full-width punctuation in Chinese and Japanese, kana with voicing
marks, Cyrillic "й"). Normalisation only reaches across characters through combining:
a combining mark is reordered with its neighbours and composed onto the character
before it, and a few letters (Hangul vowels and finals, some Indic vowel signs) compose
with the letter before them. When every character of a text starts its decomposition
with a character that does neither (combining class 0, and not the second of any
composition), the text's normal form is its characters' normal forms, joined. That is
read off the text's distinct characters (each looked up once, then remembered) and put
together with numpy, several times faster; any other text goes to `unicodedata`.

- `nfkc(text)`: `unicodedata.normalize("NFKC", text)`.
- `fold_accents(text)`: NFD, combining accents (U+0300-U+036F) dropped, then NFC.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache
from typing import Final, Literal

import numpy as np

from graphs.guards.unicode_table import assigned_points, points

__all__ = ["fold_accents", "nfkc", "prepare_normal_forms"]

_COMBINING_ACCENT: Final = re.compile("[\u0300-\u036f]")
# Hangul vowels and finals: they compose with the syllable before them by rule, not
# through the decomposition table.
_HANGUL_SECONDS: Final = (range(0x1161, 0x1176), range(0x11A8, 0x11C3))
# Per character, its normal form when it is safe to read alone, else None; cleared when
# full, so a sender of every character there is cannot grow them without bound.
_NFKC: Final[dict[int, str | None]] = {}
_FOLDED: Final[dict[int, str | None]] = {}
_MAX_KNOWN: Final = 1 << 16


def prepare_normal_forms() -> None:
    """Read the composition table now (about half a second) rather than at the first
    text that needs it."""
    _seconds()


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`, by character where that is exact."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    joined = _by_character(text, _NFKC, _nfkc_alone)
    return unicodedata.normalize("NFKC", text) if joined is None else joined


def fold_accents(text: str) -> str:
    """NFD, combining accents dropped, NFC: by character where that is exact."""
    if unicodedata.is_normalized("NFD", text):
        # Nothing decomposes: only accents written apart are dropped.
        return unicodedata.normalize("NFC", _COMBINING_ACCENT.sub("", text))
    joined = _by_character(text, _FOLDED, _folded_alone)
    return _folded_whole(text) if joined is None else joined


def _folded_whole(text: str) -> str:
    return unicodedata.normalize(
        "NFC", _COMBINING_ACCENT.sub("", unicodedata.normalize("NFD", text))
    )


def _nfkc_alone(char: str) -> str | None:
    return unicodedata.normalize("NFKC", char) if _stands_alone("NFKD", char) else None


def _folded_alone(char: str) -> str | None:
    return _folded_whole(char) if _stands_alone("NFD", char) else None


def _stands_alone(form: Literal["NFD", "NFKD"], char: str) -> bool:
    """Whether `char`'s decomposition starts with a character that neither combines with
    what comes before it nor composes onto it (see the module docstring)."""
    first = unicodedata.normalize(form, char)[:1]
    return bool(first) and unicodedata.combining(first) == 0 and ord(first) not in _seconds()


def _by_character(
    text: str, known: dict[int, str | None], alone: Callable[[str], str | None]
) -> str | None:
    """Each character of `text` replaced by `alone(character)` (remembered in `known`),
    or None when some character cannot be read alone. ASCII characters are their own
    normal form and never compose onto another, so only the others are looked up."""
    code = points(text)
    outside = np.flatnonzero(code >= 0x80)
    distinct, where = np.unique(code[outside], return_inverse=True)
    results: list[str] = []
    for point in distinct.tolist():
        if point in known:
            result = known[point]
        else:
            if len(known) >= _MAX_KNOWN:
                known.clear()
            result = known[point] = alone(chr(point))
        if result is None:
            return None
        results.append(result)
    if all(len(result) == 1 for result in results):
        mapped = code.copy()
        mapped[outside] = np.array([ord(result) for result in results], dtype=np.uint32)[where]
        return mapped.tobytes().decode("utf-32-le", "surrogatepass")
    changes = {p: r for p, r in zip(distinct.tolist(), results, strict=True) if r != chr(p)}
    return text.translate(changes)


@cache
def _seconds() -> frozenset[int]:
    """Every character that can be the second of a canonical composition: the second of
    each two-character decomposition that NFC composes back, and the Hangul ones (read
    once, about half a second)."""
    found = {point for block in _HANGUL_SECONDS for point in block}
    for point in assigned_points().tolist():
        char = chr(point)
        decomposition = unicodedata.decomposition(char)
        if not decomposition or decomposition.startswith("<"):
            continue
        parts = decomposition.split()
        if len(parts) == 2 and unicodedata.normalize("NFC", char) == char:
            found.add(int(parts[1], 16))
    return frozenset(found)
