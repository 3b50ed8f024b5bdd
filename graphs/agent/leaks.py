"""Spot answers that leak the system prompt, its canary or the tool definitions.

`LeakCheck(canary, exempt).assess(text)` reads the text the way a person could after
undoing cheap disguises (the guards' normalisation: look-alikes, invisible characters,
letter-spacing, leetspeak, markup, entities and percent-escapes, base64/hex runs; plus the
text reversed and in ROT13), then compares it with `graphs.agent.leak_corpus`:

- **canary**: the random marker of the system prompt (see `AgentContext.canary`), its hex
  part, the first `CANARY_HEX_CHARS` of it, or its fixed prefix `lore-canary` with
  anything after it, anywhere in a compact view (re-spaced, re-cased, reversed, ROT13,
  decoded): a cut and re-cased copy ("Lore-canary-b860…") is still the canary;
- **instructions or tool definitions repeated**: a run of `LONG_RUN` compact characters
  shared with them, or `TOTAL_RUN` characters in runs of at least `COUNTED_RUN`;
- **instructions paraphrased**: `RULES_FOR_LEAK` different instructions each echoed by one
  sentence (half of the rule's content words, at least three, at most six);
- **tool definitions described**: three tool names, or a tool name with two of its
  parameter names or with JSON schema words. One tool named in passing is fine.

Text in `exempt` (what this turn's tools returned) does not count: an answer may quote a
passage that happens to describe Lore. The canary is never exempt. `suspicious` says the
text is half-way to a leak, so a stream should hold it back until the answer is complete.
Verify turns a leaking answer into a refusal and records an incident.

Limits: a true paraphrase in other words, another language, or a cipher other than ROT13
and reversal is not recognised; the model is told not to reveal any of this either.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from graphs.agent.context import CANARY_PREFIX
from graphs.agent.leak_corpus import (
    RULES,
    SHINGLE,
    SHINGLE_SOURCES,
    TOOL_VOCABULARY,
    compact,
    shingles,
    stems,
)
from graphs.guards.markup import unmarked
from graphs.guards.normalize import fold, normalize

__all__ = [
    "LONG_RUN",
    "AnswerViews",
    "LeakAssessment",
    "LeakCheck",
    "answer_views",
]

LONG_RUN: Final = 40
#: A leaked piece of the canary's random part this long counts as the canary.
CANARY_HEX_CHARS: Final = 8
_CANARY_WORD: Final = compact(CANARY_PREFIX)
TOTAL_RUN: Final = 80
COUNTED_RUN: Final = 20
RULES_FOR_LEAK: Final = 3
TOOL_NAMES_FOR_LEAK: Final = 3
_WINDOW_WORDS: Final = 40
_SENTENCE: Final = re.compile(r"[.!?;:\n]+")
_SCHEMA_WORDS: Final = re.compile(
    r"additional\s*properties|\"?parameters\"?\s*[:=]|\"?required\"?\s*[:=]\s*\["
    r"|\"?type\"?\s*[:=]\s*\"?object|\"?properties\"?\s*[:=]\s*\{"
)


@dataclass(frozen=True, slots=True)
class LeakAssessment:
    """Whether a text leaks (`reason`), or is close enough to hold back (`suspicious`)."""

    reason: str | None
    suspicious: bool


NO_LEAK: Final = LeakAssessment(None, suspicious=False)


@dataclass(frozen=True, slots=True)
class AnswerViews:
    """Readings of one text: casefolded with disguises undone (`words`, each with its compact
    form), and every compact reading, including the text reversed and in ROT13."""

    words: tuple[tuple[str, str], ...]
    compacts: tuple[str, ...]


def answer_views(text: str) -> AnswerViews:
    """The readings of `text` that the leak checks compare."""
    normalized = normalize(text)
    texts = [normalized.folded, normalized.leet]
    marked = unmarked(normalized.visible)
    if marked is not None:
        texts.append(fold(marked))
    texts += [fold(decoded) for decoded in normalized.decoded]
    if normalized.hidden_tag_text:
        texts.append(fold(normalized.hidden_tag_text))
    words = tuple((view, compact(view)) for view in dict.fromkeys(texts))
    base = words[0][1]
    compacts = [packed for _, packed in words] + [base[::-1], codecs.encode(base, "rot13")]
    return AnswerViews(words, tuple(dict.fromkeys(view for view in compacts if view)))


@dataclass(slots=True)
class _Runs:
    """The runs one compact text shares with one secret text: the longest, and the total of
    those of at least `COUNTED_RUN` characters."""

    longest: int = 0
    total: int = 0
    start: int = -1
    end: int = -1

    def add(self, position: int) -> None:
        if position > self.end:
            self.close()
            self.start = position
        self.end = position + SHINGLE

    def close(self) -> None:
        length = self.end - self.start
        self.longest = max(self.longest, length)
        self.total += length if length >= COUNTED_RUN else 0
        self.start = self.end = -1


def _runs(view: str, exempt: frozenset[str]) -> tuple[_Runs, _Runs]:
    """The runs `view` shares with the instructions, and with the tool definitions."""
    instructions, tools = _Runs(), _Runs()
    for i in range(len(view) - SHINGLE + 1):
        piece = view[i : i + SHINGLE]
        sources = SHINGLE_SOURCES.get(piece)
        if sources is None or piece in exempt:
            continue
        if sources[0]:
            instructions.add(i)
        if sources[1]:
            tools.add(i)
    instructions.close()
    tools.close()
    return instructions, tools


def _repeat_finding(runs: list[_Runs], what: str) -> LeakAssessment:
    longest = max((r.longest for r in runs), default=0)
    total = max((r.total for r in runs), default=0)
    if longest >= LONG_RUN or total >= TOTAL_RUN:
        return LeakAssessment(f"answer repeats {what} ({max(longest, total)} characters)", True)
    return LeakAssessment(None, total >= TOTAL_RUN * 3 // 4)


def _windows(view: str) -> list[frozenset[str]]:
    """The content stems of each sentence (long sentences cut into 40-word windows)."""
    found: list[frozenset[str]] = []
    for sentence in _SENTENCE.split(view):
        words = sentence.split()
        for start in range(0, len(words), _WINDOW_WORDS):
            window = stems(" ".join(words[start : start + _WINDOW_WORDS]))
            if window:
                found.append(window)
    return found


def _needed(signature: frozenset[str]) -> int:
    """How many of a rule's stems one sentence must share to echo it."""
    return min(6, max(3, math.ceil(len(signature) / 2)))


_RULES_NEEDED: Final = tuple((signature, _needed(signature)) for signature in RULES)


class LeakCheck:
    """The leak check for one turn: its canary, and the texts its tools returned."""

    def __init__(self, canary: str, exempt: Iterable[str] = ()) -> None:
        self._canary = canary
        hexpart = canary.removeprefix(CANARY_PREFIX)
        forms = {compact(canary), compact(hexpart), compact(hexpart[:CANARY_HEX_CHARS])}
        self._canary_forms = frozenset(form for form in forms if canary and len(form) >= 8)
        exempt_words: list[tuple[str, str]] = []
        exempt_shingles: set[str] = set()
        for text in exempt:
            views = answer_views(text)
            exempt_words += views.words
            for view in views.compacts:
                exempt_shingles |= shingles(view)
        self._exempt_shingles = frozenset(exempt_shingles)
        # Only a source that itself names the prefix ("lore-canary-") may be quoted with it.
        self._prefix_leaks = bool(canary) and not any(
            _CANARY_WORD in view for view, _ in exempt_words
        )
        self._exempt_stems = frozenset[str]().union(*(stems(view) for view, _ in exempt_words))
        self._exempt_tools = frozenset(
            tool.name
            for tool in TOOL_VOCABULARY
            if any(tool.named_in(view, packed) for view, packed in exempt_words)
        )
        self._exempt_parameters = frozenset(
            name
            for tool in TOOL_VOCABULARY
            for view, _ in exempt_words
            for name in tool.parameters_in(view)
        )

    @property
    def canary_forms(self) -> frozenset[str]:
        """The compact forms of the canary that count as leaking it."""
        return self._canary_forms

    def reason(self, text: str) -> str | None:
        """Why `text` leaks the system prompt or the tool definitions, or None."""
        return self.assess(text).reason

    def assess(self, text: str) -> LeakAssessment:
        """Whether `text` leaks, or is half-way to leaking."""
        if self._canary and self._canary in text:
            return LeakAssessment("answer contains the prompt canary", suspicious=True)
        if not text.strip():
            return NO_LEAK
        views = answer_views(text)
        forms = self._canary_forms | ({_CANARY_WORD} if self._prefix_leaks else set())
        if any(form in view for form in forms for view in views.compacts):
            return LeakAssessment("answer contains the prompt canary", suspicious=True)
        runs = [_runs(view, self._exempt_shingles) for view in views.compacts]
        findings = (
            _repeat_finding([found[0] for found in runs], "the system instructions"),
            _repeat_finding([found[1] for found in runs], "the tool definitions"),
            self._paraphrased(tuple(view for view, _ in views.words)),
            self._tools(views.words),
        )
        for finding in findings:
            if finding.reason is not None:
                return finding
        return LeakAssessment(None, suspicious=any(f.suspicious for f in findings))

    def _paraphrased(self, words: tuple[str, ...]) -> LeakAssessment:
        windows = {window - self._exempt_stems for view in words for window in _windows(view)}
        touched = 0
        for signature, needed in _RULES_NEEDED:
            if any(len(window & signature) >= needed for window in windows):
                touched += 1
        if touched >= RULES_FOR_LEAK:
            return LeakAssessment(f"answer paraphrases {touched} of the system instructions", True)
        return LeakAssessment(None, touched >= RULES_FOR_LEAK - 1)

    def _tools(self, words: tuple[tuple[str, str], ...]) -> LeakAssessment:
        named = [
            tool
            for tool in TOOL_VOCABULARY
            if tool.name not in self._exempt_tools
            and any(tool.named_in(view, packed) for view, packed in words)
        ]
        if len(named) >= TOOL_NAMES_FOR_LEAK:
            return LeakAssessment(
                f"answer describes the tool definitions ({len(named)} tools)", True
            )
        schema = any(_SCHEMA_WORDS.search(view) for view, _ in words)
        for tool in named:
            parameters = set[str]().union(
                *(tool.parameters_in(view, self._exempt_parameters) for view, _ in words)
            )
            if len(parameters) >= 2 or schema:
                return LeakAssessment(
                    f"answer describes the tool definitions ({tool.name} and its parameters)",
                    True,
                )
        return LeakAssessment(None, len(named) >= TOOL_NAMES_FOR_LEAK - 1)
