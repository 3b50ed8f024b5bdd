"""Derive, from a regex, the strings every match starts with, and find matches only there.

A rule such as `\\b(?:ignore|disregard|forget)\\s+...` can only match where the text holds
"ign", "dis" or "for"; `re` itself tries the pattern at every position (a leading `\\b` or
lookbehind keeps it from skipping ahead), which is most of what a long message costs.
`match_starts(pattern)` reads the parsed pattern (`re._parser`) and returns those
prefixes (up to `_LENGTH` characters each), and whether a match may also start at the
very beginning of the text without one (a `^` branch). `finditer_at` then yields exactly
the matches `pattern.finditer(text, pos, endpos)` yields, by trying `pattern.match` at
the places where a prefix occurs: leftmost first, never overlapping, the same matches in
the same order.

Zero-width items (`\\b`, lookarounds, `$`) are stepped over, which can only add
prefixes; anything the reader cannot enumerate (`\\w`, `.`, large classes) ends a prefix
where it stands. A pattern with a branch that may start with anything, or with flags
that change what a literal matches (IGNORECASE, MULTILINE), yields None: callers then
search as before.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Final

__all__ = ["MatchStarts", "finditer_at", "finditer_from", "match_starts", "start_positions"]

_LENGTH: Final = 4
_LIMIT: Final = 256  # prefixes per pattern; more and a shorter length is tried
_STEPS: Final = 20_000  # walk steps per pattern before giving up
_CLASS_LIMIT: Final = 32
_ZERO_WIDTH_AT: Final = frozenset(
    {sre.AT_BOUNDARY, sre.AT_NON_BOUNDARY, sre.AT_END, sre.AT_END_STRING}
)
_AT_START: Final = frozenset({sre.AT_BEGINNING, sre.AT_BEGINNING_STRING})
_REPEATS: Final = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})
_UNSUPPORTED_FLAGS: Final = re.IGNORECASE | re.MULTILINE
_ONE_CHAR: Final = frozenset({sre.ANY, sre.NOT_LITERAL})
_MAX_SKIP: Final = 2


@dataclass(frozen=True, slots=True)
class MatchStarts:
    """Every match of the pattern starts with one of `prefixes`, or (`at_text_start`) at
    position 0. A prefix may come after one or two characters the reader could not name
    (`(?:^|\\s)assistant` starts with "assi" one character in)."""

    prefixes: tuple[tuple[int, str], ...]  # (characters before it, the prefix)
    at_text_start: bool


class _UnboundedError(Exception):
    """A match may start with anything, or the walk grew too large."""


class _Walker:
    def __init__(self, length: int) -> None:
        self.length = length
        self.found: set[tuple[int, str]] = set()
        self.at_text_start = False
        self.steps = 0

    def walk(self, items: tuple[Any, ...], prefix: str, skip: int = 0) -> None:
        """Add the prefixes of `items` (matched after `skip` unknown characters and then
        `prefix`) to `found`."""
        self.steps += 1
        if self.steps > _STEPS or len(self.found) > _LIMIT:
            raise _UnboundedError
        if len(prefix) >= self.length or not items:
            self._end(prefix, skip)
            return
        (op, argument), rest = items[0], items[1:]
        if op is sre.LITERAL:
            self.walk(rest, prefix + chr(argument), skip)
        elif op is sre.IN:
            self._class(argument, rest, prefix, skip)
        elif op is sre.AT:
            self._at(argument, rest, prefix, skip)
        elif op in _REPEATS:
            self._repeat(op, argument, rest, prefix, skip)
        elif op in _ONE_CHAR:
            self._unknown(rest, prefix, skip)
        else:
            self._group(op, argument, rest, prefix, skip)

    def _group(self, op: Any, argument: Any, rest: tuple[Any, ...], prefix: str, skip: int) -> None:
        if op is sre.ASSERT or op is sre.ASSERT_NOT:
            self.walk(rest, prefix, skip)  # zero-width: only ever rules matches out
        elif op is sre.SUBPATTERN:
            if argument[1] & _UNSUPPORTED_FLAGS:
                raise _UnboundedError
            self.walk((*argument[-1], *rest), prefix, skip)
        elif op is sre.ATOMIC_GROUP:
            self.walk((*argument, *rest), prefix, skip)
        elif op is sre.BRANCH:
            for branch in argument[1]:
                self.walk((*branch, *rest), prefix, skip)
        else:  # a group reference and the like: the prefix ends here
            self._end(prefix, skip)

    def _class(self, members: Any, rest: tuple[Any, ...], prefix: str, skip: int) -> None:
        chars = _class_chars(members)
        if chars is None:
            self._unknown(rest, prefix, skip)
            return
        for char in sorted(chars):
            self.walk(rest, prefix + char, skip)

    def _unknown(self, rest: tuple[Any, ...], prefix: str, skip: int) -> None:
        """One character the reader cannot name: it ends a prefix, or before one it is
        skipped over (twice at most)."""
        if prefix or skip >= _MAX_SKIP:
            self._end(prefix, skip)
        else:
            self.walk(rest, prefix, skip + 1)

    def _at(self, where: Any, rest: tuple[Any, ...], prefix: str, skip: int) -> None:
        if where in _AT_START:
            if not prefix and not skip:
                self.at_text_start = True  # only position 0 can start this way
            return  # after a character, `^` never matches (no MULTILINE)
        if where in _ZERO_WIDTH_AT:
            self.walk(rest, prefix, skip)
            return
        raise _UnboundedError

    def _repeat(
        self, op: Any, argument: Any, rest: tuple[Any, ...], prefix: str, skip: int
    ) -> None:
        low, high, inner = argument
        if low == 0:
            self.walk(rest, prefix, skip)
        if high == 0:
            return
        less = high if high == sre.MAXREPEAT else high - 1
        again = (op, (max(0, low - 1), less, inner))
        self.walk((*inner, again, *rest), prefix, skip)

    def _end(self, prefix: str, skip: int) -> None:
        if not prefix:
            raise _UnboundedError
        self.found.add((skip, prefix))


def match_starts(pattern: re.Pattern[str]) -> MatchStarts | None:
    """The prefixes every match of `pattern` starts with, or None when there are none."""
    if pattern.flags & _UNSUPPORTED_FLAGS:
        return None
    parsed = tuple(sre_parser.parse(pattern.pattern, pattern.flags))
    for length in range(_LENGTH, 0, -1):
        walker = _Walker(length)
        try:
            walker.walk(parsed, "")
        except (_UnboundedError, RecursionError):
            continue
        # A prefix that starts with a shorter one at the same offset adds no position.
        minimal: list[tuple[int, str]] = []
        for skip, prefix in sorted(walker.found, key=lambda found: len(found[1])):
            if not any(s == skip and prefix.startswith(p) for s, p in minimal):
                minimal.append((skip, prefix))
        return MatchStarts(tuple(sorted(minimal)), walker.at_text_start)
    return None


def _class_chars(members: Any) -> set[str] | None:
    chars: set[str] = set()
    for op, value in members:
        if op is sre.LITERAL:
            chars.add(chr(value))
        elif op is sre.RANGE and value[1] - value[0] < _CLASS_LIMIT:
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        else:
            return None
        if len(chars) > _CLASS_LIMIT:
            return None
    return chars


def finditer_at(
    pattern: re.Pattern[str], text: str, positions: list[int], pos: int, endpos: int
) -> Iterator[re.Match[str]]:
    """The matches of `pattern.finditer(text, pos, endpos)`, trying only `positions` (which
    hold every place a match can start, see `start_positions`)."""
    index = bisect_left(positions, pos)
    while index < len(positions):
        start = positions[index]
        index += 1
        if start > endpos:
            return
        if start < pos:
            continue
        match = pattern.match(text, start, endpos)
        if match is None:
            continue
        if match.end() == start:
            # An empty match: the engine's own rules for what may follow one decide.
            yield from pattern.finditer(text, start, endpos)
            return
        yield match
        pos = match.end()


def start_positions(starts: MatchStarts, text: str, pos: int, endpos: int) -> list[int]:
    """Every position in `pos`..`endpos` of `text` where a match that ends by `endpos` can
    start, ascending."""
    positions = [0] if starts.at_text_start and pos == 0 else []
    for skip, prefix in starts.prefixes:
        found = text.find(prefix, pos + skip, endpos)
        while found >= 0:
            positions.append(found - skip)
            found = text.find(prefix, found + 1, endpos)
    positions.sort()
    return positions


def finditer_from(
    pattern: re.Pattern[str], starts: MatchStarts | None, text: str, pos: int, endpos: int
) -> Iterator[re.Match[str]]:
    """The matches of `pattern.finditer(text, pos, endpos)`: tried only where a match can
    start when `starts` (from `match_starts`) names those places, else found as `re` does."""
    if starts is None:
        return pattern.finditer(text, pos, endpos)
    return finditer_at(pattern, text, start_positions(starts, text, pos, endpos), pos, endpos)
