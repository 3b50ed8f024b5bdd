"""Every code point's Unicode category, read once from `unicodedata`, as numpy tables.

The guards ask of each character of a message whether it is invisible, blank or part of
a word. Reading `unicodedata` once for each of the 1.1 million code points (about half a
second, at import) gives tables that answer for a whole text in one numpy lookup, and
the code point lists `invisible` builds its classes from. A new Unicode version in a new
Python brings its new characters along.

- `category_points(*names)`: the code points in those categories ("Zs", "Cf", ...);
  `assigned_points()`: every code point that is a character; `space_points()`: the
  whitespace (`\\s`). `\\d` is the category Nd.
- `WORD`: True where `re` reads `\\w` in a str pattern: letters and numbers (the
  categories L* and N*, which is `str.isalnum`) and "_".
- `points(text)`: the text's code points (lone surrogates included), for such lookups.
"""

from __future__ import annotations

import sys
import unicodedata
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["WORD", "assigned_points", "category_points", "points", "space_points"]


def _categories() -> tuple[tuple[str, ...], npt.NDArray[np.uint8]]:
    names: dict[str, int] = {}
    codes = bytearray(sys.maxunicode + 1)
    for point in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(point))
        codes[point] = names.setdefault(category, len(names))
    return tuple(names), np.frombuffer(bytes(codes), dtype=np.uint8)


_NAMES, _CATEGORY = _categories()


def category_points(*names: str) -> npt.NDArray[np.intp]:
    """The code points whose category is one of `names`, in order."""
    wanted = [_NAMES.index(name) for name in names if name in _NAMES]
    return np.flatnonzero(np.isin(_CATEGORY, wanted))


def assigned_points() -> npt.NDArray[np.intp]:
    """Every code point that is a character: not unassigned, private use or a surrogate."""
    unassigned = [_NAMES.index(name) for name in ("Cn", "Co", "Cs") if name in _NAMES]
    return np.flatnonzero(~np.isin(_CATEGORY, unassigned))


def space_points() -> npt.NDArray[np.intp]:
    """The code points `str.isspace` (and so `re`'s `\\s`) accepts: every separator (Zs,
    Zl, Zp) and the few control characters that are whitespace (tab to carriage return,
    U+001C-U+001F, U+0085)."""
    controls = [point for point in category_points("Cc").tolist() if chr(point).isspace()]
    return np.union1d(category_points("Zs", "Zl", "Zp"), controls)


def points(text: str) -> npt.NDArray[np.uint32]:
    """The code points of `text`, lone surrogates included."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _word_table() -> npt.NDArray[np.bool_]:
    word = np.zeros(sys.maxunicode + 1, dtype=bool)
    word[category_points(*(name for name in _NAMES if name[0] in "LN"))] = True
    word[ord("_")] = True
    return word


WORD: Final = _word_table()
