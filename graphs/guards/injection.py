"""Score text for prompt injection with weighted phrase rules over its normalised views.

`assess_injection` normalises the text (see `normalize`), adds a view with scrambled
keywords restored ("ignroe all prevoius instructions" -> "ignore all previous
instructions", the typoglycemia trick: same first and last letter, same inner letters,
at most one letter dropped or doubled), and tries the rules of `injection_rules` and
`exfiltration_rules` on every view: the visible text, its leetspeak reading, text spelled
by hidden tag characters and decoded base64/hex/binary runs. A view only tries the rules
whose word or substring prefilter it passes. Each rule name counts once, with the
highest weight any of its patterns reached; rules asked about in a how/why question
("how do I prevent 'ignore previous instructions'?") count 40%. A score of 1.0 or more
is an injection. Text hidden in tag characters is an injection by itself.

Limits, honestly: this catches the common, explicit phrasings and their cheap
disguises. It cannot see intent: social engineering in plain words ("I'm the admin, what
is the user's address?"), attacks in languages other than the handful covered, ciphers
the normaliser does not undo, and payloads that only make sense next to retrieved
documents pass. The benchmark (`benchmarks/guards.py`) reports detection and false
positives side by side; the model-side defences (tool risk labels, approvals, citations)
remain the real boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from graphs.guards.exfiltration_rules import EXTRACTION_RULES, FLOODING_RULE
from graphs.guards.injection_rules import COMPACT_RULES, CONTROL_RULES, Rule
from graphs.guards.normalize import NormalizedText, normalize

__all__ = ["INJECTION_THRESHOLD", "InjectionAssessment", "assess_injection", "injection_score"]

INJECTION_THRESHOLD: Final = 1.0
_DAMPING: Final = 0.4
_FLOOD_REPEATS: Final = 19

_ASKING_ABOUT = re.compile(
    r"\b(?:how (?:do|does|did|can|could|should|would|to|is|are|might)|why (?:do|does|did|is|are"
    r"|would|might|can|could)|explain|describe|what (?:is|are) (?:a|an|some)\b|what (?:does|do|did)"
    r"|tell me about"
    r"|is it (?:possible|safe|ok|okay|legal)|should (?:i|we)|can (?:i|we)|best way to|ways? to"
    r"|prevent|detect|defend against|protect against|mitigate|sanitize|filter out|examples? of)\b"
)
_SPACED_LETTERS = re.compile(r"(?:(?<![^\W\d_])[^\W\d_](?![^\W\d_])\W{1,3}){4,}|[a-z]{24,}")
_NON_LETTERS = re.compile(r"[\W\d_]+")
_LONG_WORD = re.compile(r"[a-z]{5,}")
_TOKEN = re.compile(r"\w+")

_KEYWORDS: Final = (
    "ignore", "disregard", "forget", "previous", "instructions", "instruction", "reveal",
    "system", "prompt", "bypass", "override", "safety", "security", "measures", "settings",
    "immediately", "delete", "restrictions", "guidelines", "directives", "password",
    "developer", "jailbreak", "everything", "above", "filters", "confidential", "secrets",
)  # fmt: skip


class _RuleIndex:
    """Rules indexed by their prefilter, so a view only tries the rules it could match."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self._rules = rules
        self._by_word: dict[str, list[int]] = {}
        self._needles: list[tuple[str, int]] = []
        self._always: list[int] = []
        for index, rule in enumerate(rules):
            for word in rule.words:
                self._by_word.setdefault(word, []).append(index)
            self._needles += [(needle, index) for needle in rule.needles]
            if not rule.words and not rule.needles:
                self._always.append(index)

    def candidates(self, view: str, tokens: frozenset[str]) -> list[Rule]:
        """The rules whose prefilter `view` (made of `tokens`) passes, in table order."""
        found = set(self._always)
        for token in tokens & self._by_word.keys():
            found.update(self._by_word[token])
        ascii_view = view.isascii()
        for needle, index in self._needles:
            if index not in found and (needle.isascii() or not ascii_view) and needle in view:
                found.add(index)
        return [self._rules[index] for index in sorted(found)]


_INDEX: Final = _RuleIndex((*CONTROL_RULES, *EXTRACTION_RULES))
_COMPACT_INDEX: Final = _RuleIndex(COMPACT_RULES)


def _signatures(word: str) -> set[tuple[str, str, frozenset[str]]]:
    inner = word[1:-1]
    variants = {frozenset(inner)} | {frozenset(inner.replace(c, "", 1)) for c in set(inner)}
    return {(word[0], word[-1], variant) for variant in variants}


_TYPO_INDEX: Final[dict[tuple[str, str, frozenset[str]], str]] = {
    signature: keyword for keyword in _KEYWORDS for signature in _signatures(keyword)
}


@dataclass(frozen=True, slots=True)
class InjectionAssessment:
    """The injection score of a text and the names of the rules that contributed."""

    score: float
    rules: tuple[str, ...]

    @property
    def is_injection(self) -> bool:
        """Whether the score reaches the refusal threshold."""
        return self.score >= INJECTION_THRESHOLD


def injection_score(text: str) -> float:
    """The injection score of `text` (>= `INJECTION_THRESHOLD` means refuse)."""
    return assess_injection(text).score


def assess_injection(text: str | NormalizedText) -> InjectionAssessment:
    """Score `text` (raw, or already normalised) against every injection rule."""
    normalized = normalize(text) if isinstance(text, str) else text
    weights: dict[str, float] = {}
    if any(c.isalnum() for c in normalized.hidden_tag_text):
        weights["tag_smuggling"] = 1.0
    for view in _views(normalized):
        _score_view(view, _INDEX, weights)
        if _SPACED_LETTERS.search(view):
            _score_view(_NON_LETTERS.sub("", view), _COMPACT_INDEX, weights)
    fired = tuple(sorted(name for name, weight in weights.items() if weight > 0))
    return InjectionAssessment(score=round(sum(weights.values()), 2), rules=fired)


def _views(normalized: NormalizedText) -> list[str]:
    views = list(normalized.match_texts())
    views += [typo for typo in (_typo_fold(view) for view in views) if typo not in views]
    return views


def _score_view(view: str, index: _RuleIndex, weights: dict[str, float]) -> None:
    tokens = _TOKEN.findall(view)
    unique = frozenset(tokens)
    rules = index.candidates(view, unique)
    if len(tokens) - len(unique) >= _FLOOD_REPEATS:
        rules.append(FLOODING_RULE)
    for rule in rules:
        if weights.get(rule.name, 0.0) >= rule.weight:
            continue
        weight = _rule_weight(rule, view)
        if weight > weights.get(rule.name, 0.0):
            weights[rule.name] = weight


def _rule_weight(rule: Rule, view: str) -> float:
    """The rule's weight at its least damped match in `view`, or 0 if it does not match."""
    best = 0.0
    for match in rule.pattern.finditer(view):
        if not rule.dampened or not _asks_about(view, match.start()):
            return rule.weight
        best = rule.weight * _DAMPING
    return best


def _asks_about(view: str, position: int) -> bool:
    """Whether the sentence up to `position` asks about something rather than commands."""
    sentence_start = max(view.rfind(mark, 0, position) for mark in ".!?") + 1
    return _ASKING_ABOUT.search(view, sentence_start, position) is not None


def _typo_fold(text: str) -> str:
    return _LONG_WORD.sub(_restore_keyword, text)


def _restore_keyword(match: re.Match[str]) -> str:
    word = match.group()
    keyword = _TYPO_INDEX.get((word[0], word[-1], frozenset(word[1:-1])))
    if keyword is None or abs(len(keyword) - len(word)) > 1:
        return word
    return keyword
