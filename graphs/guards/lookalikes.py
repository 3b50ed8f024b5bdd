"""Map look-alike letters to the ASCII letters they imitate, from Unicode's confusables data.

The table comes from `confusable_homoglyphs`, which ships Unicode's `confusables.txt`
(UTS #39) as JSON inside its wheel; nothing is downloaded. A character is mapped when
one of its listed homoglyphs is an ASCII letter or digit (lower case preferred, as the
guards match casefolded text): Cyrillic and Greek look-alikes, small capitals
(U+1D00...), Cherokee and Canadian syllabics letters, Latin letters with hooks and
strokes, and so on. Characters that NFKC already maps (fullwidth, mathematical
alphanumerics) are handled there.

`fold_lookalikes` folds only inside words that are meant to be Latin: a word made of ASCII
letters and look-alikes that holds an ASCII letter or no Cyrillic or Greek letter at all.
Plain Russian or Greek words (no ASCII letter in them) stay as they are, so the rules
written for those languages still match them.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from functools import cache
from importlib import resources
from typing import Final

import numpy as np
import numpy.typing as npt

from graphs.guards.unicode_table import WORD, assigned_points, category_points, points

__all__ = ["fold_lookalikes", "lookalike_table", "prepare_lookalikes"]

# A word holding at least one non-ASCII letter (only those can hold a look-alike), tried
# only where a word starts (else every letter of an ASCII word would start a new try).
_WORD: Final = re.compile(r"(?<![^\W\d_])[^\W\d_]*[^\W\d_\x00-\x7f][^\W\d_]*")
# Space-separated pieces already folded (a word never spans a space): ordinary text
# repeats its words, so most pieces are looked up, not matched. Only word-sized pieces
# are kept (a text without spaces is one long piece that does not come back), and the
# table is cleared when full, so it stays a few megabytes whatever is sent.
_FOLDED_PIECES: Final[dict[str, str]] = {}
_MAX_PIECES: Final = 1 << 16
_MAX_PIECE: Final = 40
_ASCII_LETTER: Final = re.compile("[a-zA-Z]")
_NATIVE_LETTER: Final = re.compile("[\u0370-\u03ff\u0400-\u052f\u1c80-\u1c8f\u1f00-\u1fff]")
_LATIN_NAME: Final = re.compile(r"LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL )?([A-Z])\b")


@cache
def lookalike_table() -> dict[str, str]:
    """Non-ASCII character -> the ASCII letter or digit it looks like (lower case)."""
    raw = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    data: dict[str, list[dict[str, str]]] = json.loads(raw)
    graph = {char: [g["c"] for g in glyphs] for char, glyphs in data.items()}
    table: dict[str, str] = {}
    for char in graph:
        if len(char) != 1 or char.isascii():
            continue
        target = _ascii_target(char, graph) or _named_letter(char)
        if target is not None:
            table[char] = target
            folded = char.casefold()
            if len(folded) == 1 and not folded.isascii():
                table.setdefault(folded, target)
    return table


def _ascii_target(char: str, graph: dict[str, list[str]]) -> str | None:
    """The ASCII letter or digit `char` is confusable with, directly, through its other
    case, or through one intermediate look-alike; lower case preferred."""
    seen = {char, char.upper(), char.lower()}
    frontier = [*seen]
    for _depth in range(2):
        glyphs = [g for c in frontier for g in graph.get(c, ()) if len(g) == 1]
        targets = sorted({g.lower() for g in glyphs if g.isascii() and g.isalnum()})
        if targets:
            return targets[0]
        frontier = [g for g in glyphs if g not in seen]
        seen.update(frontier)
    return None


def _named_letter(char: str) -> str | None:
    """The base letter of a Latin letter variant, read from its Unicode name
    ("LATIN LETTER SMALL CAPITAL N" -> "n")."""
    match = _LATIN_NAME.match(unicodedata.name(char, ""))
    return match.group(1).lower() if match else None


def fold_lookalikes(text: str) -> str:
    """`text` with look-alike letters replaced inside words meant to be Latin.

    What `_WORD.sub(_fold_word, text)` gives, piece by space-separated piece: no word
    holds a space, so each distinct non-ASCII piece is folded once (or found folded in
    `_FOLDED_PIECES`) and the text is rebuilt only when one of them changed."""
    if text.isascii() or not _may_fold(text):
        return text
    pieces = text.split(" ")
    changed: dict[str, str] = {}
    for piece in set(pieces):
        if piece.isascii():
            continue
        folded = _FOLDED_PIECES.get(piece)
        if folded is None:
            folded = _WORD.sub(_fold_word, piece)
            if len(_FOLDED_PIECES) >= _MAX_PIECES:
                _FOLDED_PIECES.clear()
            if len(piece) <= _MAX_PIECE:
                _FOLDED_PIECES[piece] = folded
        if folded != piece:
            changed[piece] = folded
    if not changed:
        return text
    return " ".join([changed.get(piece, piece) for piece in pieces])


def _fold_word(match: re.Match[str]) -> str:
    word = match.group()
    if _ASCII_LETTER.search(word) is None and _NATIVE_LETTER.search(word) is not None:
        return word
    return "".join(c if c.isascii() else _fold_char(c) for c in word)


@cache
def _fold_char(char: str) -> str:
    return lookalike_table().get(char) or _named_letter(char) or char


def prepare_lookalikes() -> None:
    """Read the look-alike tables now (about a quarter of a second) rather than at the
    first text outside ASCII."""
    _foldable_tables()


def _may_fold(text: str) -> bool:
    """Whether some word of `text` could change: one holds a look-alike outside the Greek
    and Cyrillic letters (a word without native letters is folded), or an ASCII letter
    stands next to another letter (a word mixing scripts is folded). Read off per code
    point tables (numpy), so plain Russian, Greek or Chinese text is passed at once."""
    foldable, letters = _foldable_tables()
    code = points(text)
    if foldable[code].any():
        return True
    letter = letters[code]
    ascii_letter = letter & (code < 0x80)
    other_letter = letter & (code >= 0x80)
    return bool(
        (ascii_letter[:-1] & other_letter[1:]).any() or (other_letter[:-1] & ascii_letter[1:]).any()
    )


@cache
def _foldable_tables() -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per code point: whether `_fold_char` changes it and it is not a native (Greek or
    Cyrillic) letter, and whether it is a letter as `_WORD` reads one (`[^\\W\\d_]`)."""
    foldable = np.zeros(sys.maxunicode + 1, dtype=bool)
    candidates = {ord(char) for char in lookalike_table()}
    candidates.update(
        point for point in assigned_points().tolist() if _named_letter(chr(point)) is not None
    )
    for point in candidates:
        char = chr(point)
        if point >= 0x80 and _NATIVE_LETTER.match(char) is None and _fold_char(char) != char:
            foldable[point] = True
    letters = WORD.copy()
    letters[category_points("Nd")] = False
    letters[ord("_")] = False
    return foldable, letters
