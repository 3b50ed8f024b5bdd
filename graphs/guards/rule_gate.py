"""Derive, from a rule's regex, the whole words any match must contain: a cheap gate.

A phrase rule such as `\\b(?:what|which) (?:rules|guidelines) (?:do|did) you (?:follow|obey)`
cannot match a text that lacks one of "what"/"which", one of "rules"/"guidelines", "you"
and one of "follow"/"obey" as whole `\\w+` tokens. `word_gate(pattern)` reads the parsed
pattern (`re._parser`) and returns those requirements: a tuple of alternatives (one per
top-level `|` branch), each a tuple of word sets that must all meet the text's tokens. A
set intersection per requirement costs far less than running the regex over a long
message, where common prefilter words ("what", "system", "show") are nearly always
present but the full combination almost never is.

Only words the pattern fixes between two separators (a `\\b`, a space or `\\s+`, a
punctuation literal, the start of the text) count; anything the reader is unsure of
(`\\w+`, large repeats, classes of unknown size) simply yields no requirement, so the gate
is a necessary condition and never hides a match. An alternative with no requirement
means "always run", and so does an unreadable pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Final

from graphs.guards.unicode_table import WORD, points

__all__ = ["WordGate", "gate_passes", "gate_words", "search_near", "view_tokens", "word_gate"]

# Alternatives, each a tuple of word sets that must all meet the tokens; () = no gate.
WordGate = tuple[tuple[frozenset[str], ...], ...]

_LIMIT: Final = 256
_TOKEN: Final = re.compile(r"\w+")
# ASCII word characters (`\w`) kept, every other ASCII character a space.
_WORD_BYTES: Final = bytes(
    point if _TOKEN.fullmatch(chr(point)) else ord(" ") for point in range(128)
) + bytes(range(128, 256))
_SEPARATOR_AT: Final = frozenset(
    {sre.AT_BOUNDARY, sre.AT_BEGINNING, sre.AT_BEGINNING_STRING, sre.AT_END, sre.AT_END_STRING}
)
_NON_WORD_CATEGORIES: Final = frozenset({sre.CATEGORY_SPACE, sre.CATEGORY_NOT_WORD})
_REPEATS: Final = frozenset({sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT})


def word_gate(pattern: re.Pattern[str]) -> WordGate:
    """The word requirements of `pattern`; () when some branch has none (always run)."""
    try:
        parsed = sre_parser.parse(pattern.pattern, pattern.flags)
    except re.error:  # pragma: no cover - compiled patterns always parse
        return ()
    if pattern.flags & re.IGNORECASE:
        return ()
    alternatives: list[tuple[frozenset[str], ...]] = []
    for branch in _top_branches(list(parsed)):
        required = _requirements(branch)
        if not required:
            return ()
        alternatives.append(required)
    return tuple(alternatives)


@lru_cache(maxsize=32)
def view_tokens(view: str) -> tuple[list[str], frozenset[str]]:
    """The `\\w+` tokens of `view`, in order and as a set (cached: every guard asks)."""
    if view.isascii():
        # The same tokens, faster: every non-word character made a space, then split.
        tokens = view.encode("ascii").translate(_WORD_BYTES).decode("ascii").split()
    else:
        # The same again, the word characters looked up in a table (see `unicode_table`).
        code = points(view).copy()
        code[~WORD[code]] = ord(" ")
        tokens = code.tobytes().decode("utf-32-le", "surrogatepass").split()
    return tokens, frozenset(tokens)


def gate_passes(gate: WordGate, tokens: frozenset[str]) -> bool:
    """Whether a text made of `tokens` could match (always True for an empty gate)."""
    if not gate:
        return True
    for need in gate:
        for words in need:
            if words.isdisjoint(tokens):
                break
        else:
            return True
    return False


def gate_words(gate: WordGate) -> frozenset[str]:
    """Words of which every match holds at least one: per alternative the word set least
    likely in ordinary text (longest shortest word, then fewest words), together (empty
    for an empty gate)."""
    return frozenset(word for need in gate for word in max(need, key=_rarity))


def _rarity(words: frozenset[str]) -> tuple[int, int]:
    return min(map(len, words)), -len(words)


def search_near(
    pattern: re.Pattern[str], text: str, words: Iterable[str], reach: int
) -> re.Match[str] | None:
    """The first match of `pattern` in `text` within `reach` characters of an occurrence
    (as a substring) of one of `words`, each of which every match holds; for a long text
    this reads only those stretches. A match the cut end of a stretch made possible (a
    `$`) is checked against the whole text."""
    points: list[int] = []
    for word in words:
        found = text.find(word)
        while found >= 0:
            points.append(found)
            found = text.find(word, found + len(word))
    spans: list[tuple[int, int]] = []
    for point in sorted(points):
        start, end = max(0, point - reach), min(len(text), point + reach)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    for start, end in spans:
        for match in pattern.finditer(text, start, end):
            if end == len(text) or pattern.match(text, match.start()) is not None:
                return match
    return None


def _top_branches(items: list[Any]) -> list[list[Any]]:
    """The top-level `|` alternatives (the parser may keep a common prefix outside)."""
    if len(items) == 1 and items[0][0] is sre.BRANCH:
        return [list(branch) for branch in items[0][1][1]]
    if items and items[-1][0] is sre.BRANCH:
        # The parser factors a prefix shared by every branch out ("\\bfoo|\\bbar" becomes
        # "\\b" + "foo|bar"): put it back in front of each branch.
        prefix = items[:-1]
        return [prefix + list(branch) for branch in items[-1][1][1]]
    return [items]


def _requirements(items: list[Any], bounded: bool = False) -> tuple[frozenset[str], ...]:
    """Word sets a match of the item sequence must contain, in order found; `bounded`
    says whether the sequence starts at a word edge (a search may start inside a word)."""
    found: list[frozenset[str]] = []
    fragments: set[str] | None = {""} if bounded else None
    for position, (op, argument) in enumerate(items):
        if _is_separator(op, argument):
            if fragments is not None and bounded and "" not in fragments:
                found.append(frozenset(fragments))
            fragments, bounded = {""}, True
            continue
        if (
            _is_optional_separator(op, argument)
            and position + 1 < len(items)
            and _is_separator(*items[position + 1])
        ):
            continue  # nothing or separators, then a separator: the word ends either way
        strings = _strings([(op, argument)])
        if strings is None:
            fresh = bounded and fragments == {""}
            found += _nested(op, argument, fresh)
            bounded = _boundary_after([(op, argument)], fresh)
            fragments = {""} if bounded else None
            continue
        words = {s for s in strings if _is_word(s)}
        broken = strings - words
        if fragments is not None and bounded and broken:
            heads = {f + _head(s) for f in fragments for s in broken}
            if not words and "" not in heads and len(heads) <= _LIMIT:
                found.append(frozenset(heads))
        if fragments is None:
            fragments, bounded = ({_tail(s) for s in broken}, True) if not words else (None, False)
            continue
        after = {f + s for f in fragments for s in words} | {_tail(s) for s in broken}
        fragments = after if len(after) <= _LIMIT else None
        bounded = bounded and fragments is not None
    return tuple(found)


def _nested(op: Any, argument: Any, fresh: bool) -> list[frozenset[str]]:
    """Requirements inside a group or a repeat taken at least once whose strings are not
    enumerable; for alternatives, one set: the union of each branch's first requirement."""
    if op is sre.SUBPATTERN:
        return list(_requirements(list(argument[-1]), fresh))
    if op in _REPEATS and argument[0] >= 1:
        return list(_requirements(list(argument[2]), fresh))
    if op is sre.BRANCH:
        firsts: set[str] = set()
        for branch in argument[1]:
            inner = _requirements(list(branch), fresh)
            if not inner:
                return []
            firsts |= inner[0]
        return [frozenset(firsts)]
    return []


def _is_optional_separator(op: Any, argument: Any) -> bool:
    if op not in _REPEATS:
        return False
    low, _high, inner = argument
    return low == 0 and len(inner) == 1 and _is_separator(*next(iter(inner)))


def _boundary_after(items: Iterable[Any], bounded: bool) -> bool:
    """Whether every way through `items` ends at a word edge (just after a separator, or
    where it started when that was one and nothing was consumed)."""
    for op, argument in items:
        if _is_separator(op, argument):
            bounded = True
        elif op in _REPEATS:
            low, _high, inner = argument
            body = _boundary_after(list(inner), False)
            bounded = body if low >= 1 else bounded and body
        elif op is sre.SUBPATTERN:
            bounded = _boundary_after(list(argument[-1]), bounded)
        elif op is sre.BRANCH:
            bounded = all(_boundary_after(list(branch), bounded) for branch in argument[1])
        elif op is sre.AT or op is sre.ASSERT or op is sre.ASSERT_NOT:
            continue
        else:
            bounded = False
    return bounded


def _is_word(text: str) -> bool:
    return all(c.isalnum() or c == "_" for c in text)


def _head(text: str) -> str:
    for i, c in enumerate(text):
        if not (c.isalnum() or c == "_"):
            return text[:i]
    return text


def _tail(text: str) -> str:
    for i in range(len(text) - 1, -1, -1):
        if not (text[i].isalnum() or text[i] == "_"):
            return text[i + 1 :]
    return text


def _is_separator(op: Any, argument: Any) -> bool:
    """Whether the item always consumes a non-word character or asserts a word edge."""
    if op is sre.AT:
        return argument in _SEPARATOR_AT
    if op is sre.LITERAL:
        return not _is_word(chr(argument))
    if op is sre.IN:
        return _class_is_non_word(argument)
    if op in _REPEATS:
        low, _high, inner = argument
        return low >= 1 and len(inner) == 1 and _is_separator(*next(iter(inner)))
    return False


def _class_is_non_word(members: Iterable[Any]) -> bool:
    members = list(members)
    if not members:
        return False
    for op, argument in members:
        if op is sre.LITERAL:
            if _is_word(chr(argument)):
                return False
        elif op is sre.CATEGORY:
            if argument not in _NON_WORD_CATEGORIES:
                return False
        else:
            return False
    return True


def _strings(items: list[Any]) -> set[str] | None:
    """Every string the item sequence can match, or None if unbounded or too many."""
    results: set[str] = {""}
    for op, argument in items:
        options = _item_strings(op, argument)
        if options is None:
            return None
        results = {r + o for r in results for o in options}
        if len(results) > _LIMIT:
            return None
    return results


def _item_strings(op: Any, argument: Any) -> set[str] | None:
    if op is sre.LITERAL:
        return {chr(argument)}
    reader = _READERS.get(op)
    return None if reader is None else reader(argument)


def _class_strings(members: Any) -> set[str] | None:
    chars: set[str] = set()
    for member, value in members:
        if member is sre.LITERAL:
            chars.add(chr(value))
        elif member is sre.RANGE and value[1] - value[0] < 16:
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        else:
            return None
    return chars


def _repeat_strings(argument: Any) -> set[str] | None:
    low, high, inner = argument
    body = None if high == sre.MAXREPEAT or high > 3 else _strings(list(inner))
    if body is None:
        return None
    out: set[str] = set()
    current: set[str] = {""}
    for count in range(high + 1):
        if count >= low:
            out |= current
        current = {c + b for c in current for b in body}
        if len(out) + len(current) > _LIMIT:
            return None
    return out


def _branch_strings(argument: Any) -> set[str] | None:
    out: set[str] = set()
    for branch in argument[1]:
        strings = _strings(list(branch))
        if strings is None:
            return None
        out |= strings
    return out if len(out) <= _LIMIT else None


def _nothing(_argument: Any) -> set[str]:
    return {""}


_READERS: Final[dict[Any, Callable[[Any], set[str] | None]]] = {
    sre.IN: _class_strings,
    sre.MAX_REPEAT: _repeat_strings,
    sre.MIN_REPEAT: _repeat_strings,
    sre.POSSESSIVE_REPEAT: _repeat_strings,
    sre.SUBPATTERN: lambda argument: _strings(list(argument[-1])),
    sre.BRANCH: _branch_strings,
    sre.AT: _nothing,
    sre.ASSERT: _nothing,
    sre.ASSERT_NOT: _nothing,
}
