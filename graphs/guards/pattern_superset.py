"""Translate a Python regex into a Hyperscan pattern whose matches include every match of the
original (a superset, never a miss), for the prescreen (`graphs.guards.prescreen`):

- literals and classes of literals and ranges are kept exactly (as `\\x{...}` code points),
  and so are `\\s`, `\\S`, `\\d` and `\\D`, written out as the code points Python gives
  them (it reads categories in Unicode, Hyperscan without UCP in ASCII);
- `\\w` and letter classes (`[^\\W\\d_]`) become "not a space", a bound that keeps a
  word from reaching across spaces; `\\W` and `.` become "any character". (Read as "any
  character", `\\s` made most rules possible in any long text, "system" ... ":", and
  `\\w` made the scan three times slower);
- anchors, `\\b`, lookarounds are dropped (a condition removed only adds matches);
- a back-reference becomes "anything", a conditional group either branch, an atomic
  group or possessive repeat a plain one;
- repeats keep small bounds; a bound above `_MAX_BOUND` becomes unbounded, which keeps
  the automaton small (`.{0,80}` would otherwise build 80 states per pattern).

A pattern this cannot translate gives None: the prescreen then always lets its rule look.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from graphs.guards.unicode_table import category_points, space_points

__all__ = ["superset_pattern"]

_MAX_BOUND: Final = 4
_ANY: Final = "."


class _UntranslatableError(Exception):
    """The pattern uses something the translator does not read."""


def superset_pattern(pattern: re.Pattern[str]) -> str | None:
    """A Hyperscan pattern whose matches include every match of `pattern`; None when it
    cannot be translated (a flag other than UNICODE and DOTALL, an item not read here)."""
    if pattern.flags & ~(re.UNICODE | re.DOTALL):
        return None
    try:
        parsed = sre_parser.parse(pattern.pattern, pattern.flags)
        return _sequence(list(parsed))
    except (_UntranslatableError, re.error, RecursionError):
        return None


def _sequence(items: Sequence[Any]) -> str:
    return "".join(_item(op, argument) for op, argument in items)


def _item(op: Any, argument: Any) -> str:
    writer = _WRITERS.get(op)
    if writer is None:
        raise _UntranslatableError(str(op))
    return writer(argument)


def _conditional(argument: Any) -> str:
    _group, yes, no = argument
    no_text = _sequence(list(no)) if no is not None else ""
    return f"(?:{_sequence(list(yes))}|{no_text})"


def _branch(argument: Any) -> str:
    return "(?:" + "|".join(_sequence(list(branch)) for branch in argument[1]) + ")"


def _char(point: int) -> str:
    return f"\\x{{{point:x}}}"


@dataclass
class _ClassParts:
    """A class's members, sorted by how exactly they can be written: exact sets (literals,
    ranges, `\\s`, `\\d`), complements of exact sets (`\\S`, `\\D`) and the word
    categories, of which only a bound is kept (`\\w` lies inside "not a space", `\\W` is
    near everything)."""

    negate: bool = False
    exact: list[tuple[int, int]] = field(default_factory=list)
    complements: list[list[tuple[int, int]]] = field(default_factory=list)
    word: bool = False
    not_word: bool = False
    other: bool = False  # a category read as nothing narrower than "any character"

    def add(self, op: Any, value: Any) -> None:
        if op is sre.NEGATE:
            self.negate = True
        elif op is sre.LITERAL:
            self.exact.append((value, value))
        elif op is sre.RANGE:
            self.exact.append((value[0], value[1]))
        elif op is not sre.CATEGORY:
            raise _UntranslatableError(str(op))
        elif value in _EXACT_CATEGORIES:
            self.exact += _EXACT_CATEGORIES[value]()
        elif value in _COMPLEMENT_CATEGORIES:
            self.complements.append(list(_COMPLEMENT_CATEGORIES[value]()))
        elif value is sre.CATEGORY_WORD:
            self.word = True
        elif value is sre.CATEGORY_NOT_WORD:
            self.not_word = True
        else:
            self.other = True


def _class(members: Sequence[Any]) -> str:
    """A class, exactly where its members allow, else a looser one (see `_ClassParts`)."""
    parts = _ClassParts()
    for op, value in members:
        parts.add(op, value)
    if parts.negate:
        return _negated_class(parts)
    if parts.other or parts.not_word:
        return _ANY
    complements = parts.complements
    if parts.word:
        complements = [*complements, list(_space_ranges())]
    if complements:  # everything but (their common part less the exact members)
        return _negated(_without(_common(complements), parts.exact))
    return _positive(parts.exact)


def _negated_class(parts: _ClassParts) -> str:
    if parts.other:
        return _ANY
    if parts.not_word:  # inside \\w, so never a space
        return _negated(_space_ranges())
    if parts.word:
        return _ANY
    if parts.complements:  # their common part less the exact members
        return _positive(_without(_common(parts.complements), parts.exact))
    return _negated(parts.exact)


def _positive(ranges: Sequence[tuple[int, int]]) -> str:
    if not ranges:
        raise _UntranslatableError("a class that matches nothing")
    return f"[{_ranges_text(ranges)}]"


def _negated(ranges: Sequence[tuple[int, int]]) -> str:
    return f"[^{_ranges_text(ranges)}]" if ranges else _ANY


def _ranges_text(ranges: Sequence[tuple[int, int]]) -> str:
    return "".join(
        _char(low) if low == high else f"{_char(low)}-{_char(high)}"
        for low, high in _merged(ranges)
    )


def _common(sets: Sequence[Sequence[tuple[int, int]]]) -> list[tuple[int, int]]:
    """The code points in every one of `sets` (each a list of ranges)."""
    common = _merged(sets[0])
    for other in sets[1:]:
        merged = _merged(other)
        common = [
            (max(low, other_low), min(high, other_high))
            for low, high in common
            for other_low, other_high in merged
            if max(low, other_low) <= min(high, other_high)
        ]
    return common


def _without(
    ranges: Sequence[tuple[int, int]], removed: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """`ranges` less every code point in `removed`."""
    kept = _merged(ranges)
    for cut_low, cut_high in _merged(removed):
        pieces: list[tuple[int, int]] = []
        for low, high in kept:
            if cut_high < low or cut_low > high:
                pieces.append((low, high))
                continue
            if low < cut_low:
                pieces.append((low, cut_low - 1))
            if cut_high < high:
                pieces.append((cut_high + 1, high))
        kept = pieces
    return kept


@cache
def _space_ranges() -> tuple[tuple[int, int], ...]:
    """The code points of `\\s` (see `unicode_table.space_points`), as ranges."""
    return _point_ranges(space_points())


@cache
def _digit_ranges() -> tuple[tuple[int, int], ...]:
    """The code points of `\\d` (the category Nd, which is `str.isdecimal`), as ranges."""
    return _point_ranges(category_points("Nd"))


def _point_ranges(found: npt.NDArray[np.intp]) -> tuple[tuple[int, int], ...]:
    """Sorted code points as (first, last) ranges of consecutive ones."""
    breaks = np.flatnonzero(np.diff(found) != 1) + 1
    return tuple((int(run[0]), int(run[-1])) for run in np.split(found, breaks) if run.size)


# Categories written out exactly, and those whose complement is (`\\S` is "not a space").
_EXACT_CATEGORIES: Final[dict[Any, Callable[[], tuple[tuple[int, int], ...]]]] = {
    sre.CATEGORY_SPACE: _space_ranges,
    sre.CATEGORY_DIGIT: _digit_ranges,
}
_COMPLEMENT_CATEGORIES: Final[dict[Any, Callable[[], tuple[tuple[int, int], ...]]]] = {
    sre.CATEGORY_NOT_SPACE: _space_ranges,
    sre.CATEGORY_NOT_DIGIT: _digit_ranges,
}


def _merged(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """`ranges` sorted, with overlapping and touching ones joined."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


def _repeat(low: int, high: int, inner: Any) -> str:
    body = _sequence(list(inner))
    if not body:
        return ""
    group = f"(?:{body})"
    low = min(low, _MAX_BOUND)
    if high == sre.MAXREPEAT or high > _MAX_BOUND:
        return f"{group}{{{low},}}"
    return f"{group}{{{low},{high}}}"


_WRITERS: Final[dict[Any, Callable[[Any], str]]] = {
    sre.LITERAL: _char,
    sre.NOT_LITERAL: lambda point: f"[^{_char(point)}]",
    sre.ANY: lambda _argument: _ANY,
    sre.IN: _class,
    sre.AT: lambda _argument: "",  # anchors and \b: dropped
    sre.ASSERT: lambda _argument: "",  # lookarounds: dropped
    sre.ASSERT_NOT: lambda _argument: "",
    sre.SUBPATTERN: lambda argument: f"(?:{_sequence(list(argument[-1]))})",
    sre.ATOMIC_GROUP: lambda items: f"(?:{_sequence(list(items))})",
    sre.BRANCH: _branch,
    sre.MAX_REPEAT: lambda argument: _repeat(*argument),
    sre.MIN_REPEAT: lambda argument: _repeat(*argument),
    sre.POSSESSIVE_REPEAT: lambda argument: _repeat(*argument),
    sre.GROUPREF: lambda _argument: "(?:.*)",  # a back-reference: anything
    sre.GROUPREF_EXISTS: _conditional,
}
