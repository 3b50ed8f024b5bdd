"""Find the characters a reader cannot see, from Unicode's own categories, not a hand list.

`INVISIBLE` matches every format character (category Cf: zero-width space and joiners,
bidi controls, U+061C, soft hyphen, BOM, invisible operators...), every control
character except tab, line feed and carriage return (Cc), private-use and surrogate
code points (Co, Cs), and the few default-ignorable characters Unicode files under
other categories: variation selectors and the combining grapheme joiner (Mn with
combining class 0 and "VARIATION SELECTOR" / "GRAPHEME JOINER" in their name), Hangul
fillers (Lo "FILLER"). `BLANK` matches what renders as empty space without being a
space: every separator (Zs, Zl, Zp) and the braille blank (U+2800). The classes are
built once, at import, from the categories `unicode_table` read, so a new Unicode
version in a new Python brings its new characters along. `holds_hidden(text)` tells,
in one table lookup per character, whether either class would change a text.

Tag characters (U+E0000-U+E007F) are format characters too; `normalize` reads the text
they spell before this class removes them.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable
from typing import Final

import numpy as np
import numpy.typing as npt

from graphs.guards.unicode_table import category_points, points

__all__ = ["BLANK", "INVISIBLE", "holds_hidden"]

_REMOVED_CATEGORIES: Final = frozenset({"Cf", "Cc", "Co", "Cs"})
_KEPT_CONTROLS: Final = frozenset({"\t", "\n", "\r"})
_IGNORABLE_NAMES: Final = ("VARIATION SELECTOR", "GRAPHEME JOINER", "FILLER")


def _is_invisible(char: str, category: str) -> bool:
    if category in _REMOVED_CATEGORIES:
        return char not in _KEPT_CONTROLS
    if (category == "Mn" and unicodedata.combining(char) == 0) or category == "Lo":
        name = unicodedata.name(char, "")
        return any(part in name for part in _IGNORABLE_NAMES)
    return False


def _character_class(code_points: Iterable[int]) -> re.Pattern[str]:
    """A regex class for the code points, written as ranges."""
    points = sorted(code_points)
    ranges: list[str] = []
    start = previous = points[0]
    for point in [*points[1:], -2]:
        if point == previous + 1:
            previous = point
            continue
        ranges.append(
            re.escape(chr(start)) + ("-" + re.escape(chr(previous)) if previous > start else "")
        )
        start = previous = point
    return re.compile("[" + "".join(ranges) + "]+")


def _classes() -> tuple[re.Pattern[str], re.Pattern[str], npt.NDArray[np.bool_]]:
    removed = category_points(*_REMOVED_CATEGORIES)
    invisible = [point for point in removed.tolist() if chr(point) not in _KEPT_CONTROLS]
    invisible += [
        point
        for point in category_points("Mn", "Lo").tolist()
        if _is_invisible(chr(point), unicodedata.category(chr(point)))
    ]
    blank = [0x2800, *category_points("Zs", "Zl", "Zp").tolist()]
    hidden = np.zeros(sys.maxunicode + 1, dtype=bool)
    hidden[invisible] = True
    hidden[blank] = True
    hidden[ord(" ")] = False
    return _character_class(invisible), _character_class(blank), hidden


INVISIBLE, BLANK, _HIDDEN = _classes()


def holds_hidden(text: str) -> bool:
    """Whether `text` holds an invisible character (tag characters among them) or a blank
    one other than the plain space: without one (and without a run of spaces, which
    `BLANK` makes one), neither class changes the text. One table lookup per character,
    in numpy: far cheaper than searching with either class."""
    return bool(_HIDDEN[points(text)].any())
