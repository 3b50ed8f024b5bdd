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
import sys
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


def prepare_normal_forms() -> None:
    """Read the composition table now (about half a second) rather than at the first
    text that needs it."""
    _seconds()


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`, by character where that is exact."""
    if unicodedata.is_normalized("NFKC", text):
        return text
    joined = _NFKC.apply(text)
    return unicodedata.normalize("NFKC", text) if joined is None else joined


def fold_accents(text: str) -> str:
    """NFD, combining accents dropped, NFC: by character where that is exact."""
    if unicodedata.is_normalized("NFD", text):
        # Nothing decomposes: only accents written apart are dropped.
        return unicodedata.normalize("NFC", _COMBINING_ACCENT.sub("", text))
    joined = _FOLDED.apply(text)
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


class _CharacterForms:
    """One normal form, character by character: a table over every code point holds each
    character's form once it has been worked out (its code point when that is one
    character; `_UNKNOWN` before, `_UNSAFE` when it cannot be read alone, `_SEVERAL`
    when its form is several characters, kept in `several`). A fixed 4 MB, whatever is
    sent, and one numpy lookup per text."""

    def __init__(self, alone: Callable[[str], str | None]) -> None:
        self._alone = alone
        self._table = np.zeros(sys.maxunicode + 1, dtype=np.uint32)
        self._several: dict[int, str] = {}

    def apply(self, text: str) -> str | None:
        """Each character of `text` replaced by its form, or None when some character
        cannot be read alone. ASCII characters are their own form and never compose onto
        another, so only the others are looked up."""
        code = points(text)
        outside = np.flatnonzero(code >= 0x80)
        forms = self._table[code[outside]]
        if (forms == _UNKNOWN).any():
            for point in np.unique(code[outside][forms == _UNKNOWN]).tolist():
                self._learn(point)
            forms = self._table[code[outside]]
        if (forms == _UNSAFE).any():
            return None
        if (forms == _SEVERAL).any():
            changed = np.unique(code[outside][forms != code[outside]]).tolist()
            return text.translate({point: self._form(point) for point in changed})
        mapped = code.copy()
        mapped[outside] = forms
        return mapped.tobytes().decode("utf-32-le", "surrogatepass")

    def _learn(self, point: int) -> None:
        form = self._alone(chr(point))
        if form is None:
            self._table[point] = _UNSAFE
        elif len(form) == 1:
            self._table[point] = ord(form)
        else:
            self._several[point] = form
            self._table[point] = _SEVERAL

    def _form(self, point: int) -> str:
        value = int(self._table[point])
        return self._several[point] if value == _SEVERAL else chr(value)


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


_UNKNOWN, _SEVERAL, _UNSAFE = 0, 0xFFFFFFFE, 0xFFFFFFFF
_NFKC: Final = _CharacterForms(_nfkc_alone)
_FOLDED: Final = _CharacterForms(_folded_alone)
