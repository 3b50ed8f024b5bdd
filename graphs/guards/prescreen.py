"""Tell, in one pass over a view, which of many rule patterns could possibly match it.

A 4,000-character message passes the word gates of a dozen or more phrase rules (common
words such as "what", "system" and "show" meet in any long text), and running each of
them costs more than the rest of the guard. Hyperscan, a multi-pattern regex engine,
reads the view once for all of them. Its syntax and semantics are not Python's, so each
pattern is first translated into a looser one whose matches include every match of the
original (`graphs.guards.pattern_superset`).

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
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final

import numpy as np

from graphs.guards.pattern_superset import superset_pattern

try:
    import hyperscan
except ImportError:  # pragma: no cover - a platform with no wheel: the fallback
    hyperscan = None  # type: ignore[assignment]

__all__ = ["Prescreen"]

_log = logging.getLogger(__name__)

# Match events one scan reports at most; an ordinary long message has a few, a hostile
# one could have a million (every pattern ending everywhere): past this, every rule looks.
_MAX_EVENTS: Final = 2_000


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
