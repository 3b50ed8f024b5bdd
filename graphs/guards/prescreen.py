"""Tell, in one pass over a view, which of many rule patterns could possibly match it.

A 4,000-character message passes the word gates of a dozen or more phrase rules (common
words such as "what", "system" and "show" meet in any long text), and running each of
them costs more than the rest of the guard. Hyperscan, a multi-pattern regex engine,
reads the view once for all of them. Its syntax and semantics are not Python's, so each
pattern is translated into a looser one whose matches include every match of the
original (a superset, never a miss):

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

A pattern this cannot translate is always a candidate. When Hyperscan is not installed or
refuses the set, `possible` returns None and callers run every rule as before.

Every match end is reported, not only the first (`match_ends`): an ordinary long view
has almost none, and a rule whose match must end at one of them need not be read
elsewhere. A view with more than `_MAX_EVENTS` (a hostile flood) lets every rule look.

Compiling the guard's 246 rules takes about 5 s, so `build(cache_dir)` keeps the database
in a folder (Lore gives it its models folder: like the model files, it is derived from
installed packages), under the set's name and a digest of what it was built from
(Hyperscan's version, the machine, the flags and every translated pattern): a changed
rule gets a new file and the set's older files are removed; loading one takes under a
millisecond. A cache that cannot be read or written is not used.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import version
from pathlib import Path
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from graphs.guards.unicode_table import category_points, space_points

try:
    import hyperscan
except ImportError:  # pragma: no cover - a platform with no wheel: the fallback
    hyperscan = None  # type: ignore[assignment]

__all__ = ["Prescreen", "superset_pattern"]

_log = logging.getLogger(__name__)

_MAX_BOUND: Final = 4
# Match events one scan reports at most; an ordinary long message has a few, a hostile
# one could have a million (every pattern ending everywhere): past this, every rule looks.
_MAX_EVENTS: Final = 2_000
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


class Prescreen:
    """A Hyperscan database of the superset patterns of `patterns`; `possible(view)` names
    the indexes of those that could match `view`."""

    def __init__(self, patterns: Sequence[re.Pattern[str]], *, name: str = "patterns") -> None:
        self._patterns = tuple(patterns)
        self._name = name
        self._lock = threading.Lock()
        self._built = False
        self._database: Any = None
        self._always: frozenset[int] = frozenset()
        self._local = threading.local()

    @property
    def available(self) -> bool:
        """Whether the engine is there and the database built (building it if needed)."""
        self.build()
        return self._database is not None

    @property
    def left_out(self) -> frozenset[int]:
        """Indexes of the patterns not in the database (always candidates)."""
        self.build()
        return self._always

    def possible(self, view: str) -> frozenset[int] | None:
        """Indexes of the patterns that could match `view`; None means "any of them" (no
        engine, a view that is not valid UTF-8, or one with too many loose matches)."""
        ends = self.match_ends(view)
        return None if ends is None else frozenset(ends)

    def match_ends(self, view: str) -> dict[int, list[int] | None] | None:
        """For each pattern that could match `view`, where its loose matches end (character
        offsets, ascending; every match of the pattern ends at one of them); None for a
        pattern left out of the database (where it ends is not known). None as for
        `possible`."""
        self.build()
        if self._database is None:
            return None
        try:
            data = view.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: let every rule look
            return None
        found = _Ends(dict.fromkeys(self._always))
        try:
            self._database.scan(data, match_event_handler=_collect, context=found,
                                scratch=self._scratch())  # fmt: skip
        except hyperscan.ScanTerminated:
            return None  # a flood of loose matches (a hostile text): every rule looks
        found.sort_ends()  # Hyperscan does not promise to report them in order
        if len(data) != len(view):
            found.to_characters(data)
        return found

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self._database)
        return scratch

    def build(self, cache_dir: Path | None = None) -> None:
        """Compile the database, or read it from `cache_dir` (where it is saved after a
        compile); once: later calls return at once."""
        if self._built:
            return
        with self._lock:
            if self._built:
                return
            self._database, self._always = _compile(self._patterns, cache_dir, self._name)
            self._built = True


class _Ends(dict[int, list[int] | None]):
    """Match ends by pattern index, as a scan reports them (byte offsets until
    `to_characters`; None for a pattern left out of the database), and how many were
    reported."""

    events = 0

    def sort_ends(self) -> None:
        for index, ends in self.items():
            if ends is not None:
                self[index] = sorted(set(ends))

    def to_characters(self, data: bytes) -> None:
        """Turn the byte offsets into character offsets of the text `data` encodes."""
        starts = np.frombuffer(data, dtype=np.uint8) & 0xC0 != 0x80  # not a continuation byte
        before = np.concatenate(([0], np.cumsum(starts)))
        for index, ends in self.items():
            if ends:
                self[index] = before[ends].tolist()


def _collect(identifier: int, _start: int, end: int, _flags: int, found: _Ends) -> bool:
    """Record one match end; stop the scan after `_MAX_EVENTS` of them."""
    found.events += 1
    ends = found.get(identifier)
    if ends is None:
        found[identifier] = [end]
    else:
        ends.append(end)
    return found.events > _MAX_EVENTS


def _compile(
    patterns: Sequence[re.Pattern[str]], cache_dir: Path | None, name: str
) -> tuple[Any, frozenset[int]]:
    """The database and the indexes left out of it (always candidates); no database
    when Hyperscan is missing or refuses the set."""
    if hyperscan is None:  # pragma: no cover - see the module docstring
        return None, frozenset()
    flags = hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_DOTALL | hyperscan.HS_FLAG_ALLOWEMPTY
    translated = [superset_pattern(pattern) for pattern in patterns]
    cache = None if cache_dir is None else _cache_path(cache_dir, name, translated, flags)
    database = _load(cache)
    if database is None:
        database = _database(translated, flags)
        if database is not None:
            _save(cache, database)
    always = frozenset(index for index, text in enumerate(translated) if text is None)
    return database, always


def _cache_path(cache_dir: Path, name: str, translated: Sequence[str | None], flags: int) -> Path:
    """Where the database of `translated` is kept in `cache_dir`: named after the set and a
    digest of everything it was built from."""
    digest = hashlib.sha256()
    for part in (version("hyperscan"), platform.machine(), str(flags), *map(str, translated)):
        digest.update(part.encode("utf-8") + b"\0")
    return cache_dir / f"prescreen-{name}-{digest.hexdigest()[:32]}.hsdb"


def _remove_stale(path: Path) -> None:
    """Delete the set's databases built from other rules or another Hyperscan (they are
    never read again: about 2 MB each), and those of the naming before sets had names."""
    name = path.name.rsplit("-", 1)[0]
    stale = [
        *path.parent.glob(f"{name}-*.hsdb"),
        *path.parent.glob("prescreen-" + "?" * 32 + ".hsdb"),
    ]
    for old in stale:
        if old != path:
            with contextlib.suppress(OSError):
                old.unlink()


def _load(path: Path | None) -> Any:
    """The database saved at `path`, or None (absent, unreadable, or built elsewhere)."""
    if path is None:
        return None
    try:
        return hyperscan.loadb(path.read_bytes(), hyperscan.HS_MODE_BLOCK)
    except (OSError, hyperscan.error) as missing:
        _log.debug("prescreen: no usable cache (%s)", type(missing).__name__)
        return None


def _save(path: Path | None, database: Any) -> None:
    """Write the database to `path` atomically; a failure only costs the next start."""
    if path is None:
        return
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(hyperscan.dumpb(database))
        partial.replace(path)
        _remove_stale(path)
    except OSError as failed:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        _log.debug("prescreen: cache not written (%s)", type(failed).__name__)


def _database(translated: Sequence[str | None], flags: int) -> Any:
    """The database of the translated patterns (None entries left out), or None when
    Hyperscan refuses them or none is left."""
    kept = [(index, text) for index, text in enumerate(translated) if text is not None]
    if not kept:
        return None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(
            expressions=[text.encode("ascii") for _, text in kept],
            ids=[index for index, _ in kept],
            elements=len(kept),
            flags=flags,
        )
    except hyperscan.error as refused:
        # Every rule is tested to compile (tests/test_guard_prescreen.py): this is a rule
        # written since. Without the prescreen every rule is tried, as before, only slower.
        _log.warning("input guard prescreen not built: %s", refused)
        return None
    return database
