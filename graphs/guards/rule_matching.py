"""Where a rule matches in a view of a message and what it weighs there: in a long view only
near its prefilter words (as far as its longest match reaches) or near what changed, tried
only where one of its prefixes occurs, and damped (40%) where the sentence asks about the
phrase rather than uses it, or quotes it in a question."""

from __future__ import annotations

import bisect
import re
from functools import cache
from typing import Final

from graphs.guards.match_starts import MatchStarts, finditer_from, match_starts
from graphs.guards.rule import Rule

__all__ = ["MARGIN", "around", "holding_ends", "record", "spans_near_words"]

#: How far beyond a rule's longest match a stretch reaches (room for look-arounds).
MARGIN: Final = 24
_MIN_PREFIX: Final = 3
_FEW_PREFIXES: Final = 12
_DAMPING: Final = 0.4

_ASKING_ABOUT = re.compile(
    r"\b(?:how (?:do|does|did|can|could|should|would|to|is|are|might)|why (?:do|does|did|is|are"
    r"|would|might|can|could)|explain|describe|what (?:is|are) (?:a|an|some)\b|what (?:does|do|did)"
    r"|tell me about"
    r"|is it (?:possible|safe|ok|okay|legal)|should (?:i|we)|can (?:i|we)|best way to|ways? to"
    r"|prevent|detect|defend against|protect against|mitigate|sanitize|filter out|examples? of"
    # Reporting an attempt rather than making one ("the report on the attempt to ignore the
    # system instructions"), in the languages the rules cover (folded: accents dropped).
    r"|attempt(?:s|ed|ing)?|tried|trying|intentos? de|tentativas? de|tentatives? de"
    r"|tentativi di|tentativo di|versuch\w*|попытк\w*"
    # Asking what something says, or what happens when someone else asks ("Que dit la
    # formation quand on demande au chatbot d'ignorer ses règles ?"), in those languages.
    r"|que dit|que disent|(?:quand|si) (?:on|quelqu'un) demande|que dicen?"
    r"|(?:cuando|si) alguien (?:le )?pide|cosa dic(?:e|ono)|(?:quando|se) qualcuno chiede"
    r"|o que dizem?|(?:quando|se) alguem pede|was sag(?:t|en)|wenn jemand"
    r"|что говор(?:ит|ят)|(?:если|когда) кто-то)\b"
    # Chinese and Japanese words have no word boundaries around them.
    r"|试图|企图|しようとした|如果有人|当有人|有人让|有人要求"
)
# Quotation marks around a phrase mention it rather than use it.
_OPENING_QUOTES: Final = frozenset("\"'\u201c\u2018\u00ab\u201e\u201a\u300c\u300e")
_CLOSING_QUOTES: Final = "\"'\u201d\u2019\u00bb\u201c\u2018\u300d\u300f"


def holding_ends(spans: list[tuple[int, int]], ends: list[int]) -> list[tuple[int, int]]:
    """The spans in which one of `ends` (sorted) falls: every match of the rule ends where
    one of its loose matches does, so a span holding no such end holds no match (the
    long message's other mentions of the rule's words are not read)."""
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        first = bisect.bisect_left(ends, start)
        if first < len(ends) and ends[first] <= end:
            kept.append((start, end))
    return kept


def around(stretches: list[tuple[int, int]], reach: int, length: int) -> list[tuple[int, int]]:
    """`stretches` widened by `reach` either side (clipped to the view), merged."""
    spans: list[tuple[int, int]] = []
    for first, last in stretches:
        start, end = max(0, first - reach), min(length, last + reach)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def record(
    rule: Rule, view: str, spans: list[tuple[int, int]] | None, weights: dict[str, float]
) -> None:
    """Raise the rule's weight in `weights` to what it reaches in `view` (within `spans`)."""
    if weights.get(rule.name, 0.0) >= rule.weight:
        return
    weight = _rule_weight(rule, view, spans)
    if weight > weights.get(rule.name, 0.0):
        weights[rule.name] = weight


def spans_near_words(
    rule: Rule, view: str, tokens: frozenset[str], sites: dict[str, list[int]]
) -> list[tuple[int, int]] | None:
    """In a long view, the stretches within the rule's reach (its longest match, plus a
    margin for look-arounds) of its prefilter words and needles (found as substrings, a
    superset of the whole-word hits), merged; None means scan the whole view. `sites`
    keeps each word's positions for the view's other rules."""
    if not rule.words and not rule.needles:
        return None
    points: list[int] = []
    for needle in [*(rule.words & tokens), *rule.needles]:
        found = sites.get(needle)
        if found is None:
            found = sites[needle] = _occurrences(view, needle)
        points += found
    reach = rule.reach + MARGIN
    spans: list[tuple[int, int]] = []
    for point in sorted(points):
        start, end = max(0, point - reach), min(len(view), point + reach)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def _occurrences(view: str, needle: str) -> list[int]:
    """Where `needle` starts in `view`, occurrences not overlapping one another."""
    points: list[int] = []
    found = view.find(needle)
    while found >= 0:
        points.append(found)
        found = view.find(needle, found + len(needle))
    return points


def _rule_weight(rule: Rule, view: str, spans: list[tuple[int, int]] | None = None) -> float:
    """The rule's weight at its least damped match in `view` (only inside `spans` when
    given), or 0 if it does not match. The matches are those of `finditer`, found by
    trying the pattern only where one of its prefixes occurs when it has such prefixes
    (see `match_starts`)."""
    best = 0.0
    starts = _match_starts(rule.pattern)
    for start, end in spans if spans is not None else [(0, len(view))]:
        for match in finditer_from(rule.pattern, starts, view, start, end):
            if end < len(view) and rule.pattern.match(view, match.start()) is None:
                continue  # matched only because the span cut the text short ("$")
            if not rule.dampened or not (
                _asks_about(view, match.start()) or _quoted_in_question(view, match)
            ):
                return rule.weight
            best = rule.weight * _DAMPING
    return best


@cache
def _match_starts(pattern: re.Pattern[str]) -> MatchStarts | None:
    """The prefixes of `pattern` when they occur far less often than the pattern's first
    character could: each `_MIN_PREFIX` characters long, or few of them (punctuation that
    starts a sentence); else None (search as `re` does).

    (Chosen on the benchmark's long messages: 40 one-character prefixes cost more
    `str.find` calls than the regex costs.)"""
    starts = match_starts(pattern)
    if starts is None:
        return None
    shortest = min((len(prefix) for _, prefix in starts.prefixes), default=_MIN_PREFIX)
    if shortest < _MIN_PREFIX and len(starts.prefixes) > _FEW_PREFIXES:
        return None
    return starts


def _quoted_in_question(view: str, match: re.Match[str]) -> bool:
    """Whether the match sits inside quotation marks (one opens at or just before it and
    one closes soon after it) in a message that asks something (holds a "?")."""
    start = match.start()
    opening = (
        view[start] if view[start] in _OPENING_QUOTES else view[max(0, start - 2) : start].strip()
    )
    if not opening or opening[-1] not in _OPENING_QUOTES or "?" not in view:
        return False
    after = view[match.end() : match.end() + 80]
    return any(quote in after for quote in _CLOSING_QUOTES)


def _asks_about(view: str, position: int) -> bool:
    """Whether the sentence up to `position` asks about something rather than commands."""
    sentence_start = max(view.rfind(mark, 0, position) for mark in ".!?") + 1
    return _ASKING_ABOUT.search(view, sentence_start, position) is not None
