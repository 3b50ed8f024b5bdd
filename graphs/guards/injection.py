"""Score text for prompt injection with weighted phrase rules over its normalised views.

`assess_injection` normalises the text (see `normalize`), adds a view with scrambled
keywords restored ("ignroe all prevoius instructions" -> "ignore all previous
instructions", the typoglycemia trick: same first and last letter, same inner letters,
at most one letter dropped or doubled), and tries the rules of `injection_rules` and
`exfiltration_rules` on every view: the visible text, its leetspeak reading, text spelled
by hidden tag characters and decoded base64/hex/binary runs. A view only tries the rules
that one Hyperscan pass over it says could match (see `prescreen`) and whose word or
substring prefilter it passes. Each rule name counts once, with the
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

import bisect
import codecs
import itertools
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Final, Literal

import numpy as np

from graphs.guards.classifier import WINDOW, load_model
from graphs.guards.exfiltration_rules import (
    EXTRACTION_RULES,
    FLOODING_RULE,
    NUMBER_FLOODING_RULE,
)
from graphs.guards.injection_rules import COMPACT_RULES, CONTROL_RULES, MAX_REACH, Rule
from graphs.guards.intent_rules import INTENT_RULES
from graphs.guards.languages import LANGUAGE_RULES
from graphs.guards.match_starts import MatchStarts, finditer_from, match_starts
from graphs.guards.normalize import NormalizedText, normalize
from graphs.guards.prescreen import Prescreen
from graphs.guards.rule_gate import gate_passes, view_tokens, word_gate
from graphs.guards.unicode_table import WORD

__all__ = [
    "FLAG_THRESHOLD",
    "INJECTION_THRESHOLD",
    "InjectionAssessment",
    "Level",
    "assess_injection",
    "injection_risks",
    "injection_score",
    "prepare_rules",
]

INJECTION_THRESHOLD: Final = 1.0
FLAG_THRESHOLD: Final = 0.7
_MAX_MODEL_VIEWS: Final = 4
# Views longer than this are matched only near each rule's prefilter words, as far either
# side as the rule's longest match (`Rule.reach`) plus `_MARGIN`, so a 4,000-character
# message costs about what its hits cost.
_LONG_VIEW: Final = 600
_MARGIN: Final = 24
_MIN_PREFIX: Final = 3
_FEW_PREFIXES: Final = 12
Level = Literal["pass", "harden", "refuse"]
# One sentence that asks about something ("how do I stop prompt injection?", "Welche
# Regeln gelten?"), perhaps after a short lead-in and a colon ("Ignore the noise: what is
# the sampling rate?"): like the damped rules, the model alone hardens such a message only
# when it is nearly certain.
_QUESTION: Final = re.compile(
    # English, German, French, Spanish, Italian, Portuguese and Russian question words
    # (folded: accents dropped), then one sentence ending in a question mark; Chinese and
    # Japanese: a sentence with a question particle or word that ends in a question mark.
    r"(?:[^.!?;:\n]{1,80}:\s*)?¿?(?:how|why|what|which|when|where|who|is|are|can|could|should|does|do|did|explain"
    r"|describe|tell me about"
    r"|wie|was|warum|wieso|weshalb|welche[rsnm]?|wer|wo|wann|woher|gibt es|kann|konnen|ist|sind"
    r"|comment|pourquoi|quel(?:le)?s?|qui|ou|quand|que|qu'est-ce|est-ce|combien|y a-t-il"
    r"|como|por ?que|cual(?:es)?|quien(?:es)?|donde|cuando|cuant[oa]s?|hay|puedo|se puede"
    r"|come|perche|che|quale|quali|chi|dove|cosa|ci sono|posso|o que|qual|quais|quem|onde"
    r"|existe|как\w*|почему|зачем|что|каки?\w*|кто|где|когда|сколько|можно|есть ли)\b"
    r"[^.!?;:\n]{0,200}\?"
    r"|[^.!?;:\n。]{0,100}(?:吗|呢|什么|怎么|怎样|哪|谁|多少|为什么|ですか|ますか|何|誰|どこ|いつ"
    r"|どう|なぜ)[^.!?;:\n。]{0,40}\?"
)
_QUESTION_FLAG_PROBABILITY: Final = 0.9
# A message longer than one scoring window: the learned scorer alone hardens it only when
# it is fairly sure (several ordinary sentences full of words like "system", "rules" and
# "instructions" in one window reach 0.6-0.8; chosen on injection_dev and our own long
# messages, see benchmarks/guards.py).
LONG_FLAG_PROBABILITY: Final = 0.85
_DAMPING: Final = 0.4
_FLOOD_REPEATS: Final = 19
# Twenty token lengths in a row alike (bytes, one per token: see `_token_lengths`).
_SAME_LENGTH_RUN: Final = re.compile(rb"(.)\1{%d}" % _FLOOD_REPEATS, re.DOTALL)

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
# Letter-by-letter spacing ("i.g.n.o.r.e") or a run of letters with the spaces removed;
# `_TWO_SPACED` is a cheap necessary condition of the first (its 2nd to 4th letters).
_SPACED_LETTERS = re.compile(r"(?:(?<![^\W\d_])[^\W\d_](?![^\W\d_])\W{1,3}){4,}")
_TWO_SPACED = re.compile(r"(?:\W|^)[^\W\d_]\W{1,3}[^\W\d_]\W")
_LETTER_RUN = re.compile(r"[a-z]{24,}")
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
    """Rules indexed by their prefilter, so a view only tries the rules it could match;
    with `prescreen`, only those Hyperscan finds a loose form of in the view (see
    `prescreen`), else every rule whose prefilter words or needles the view holds."""

    def __init__(
        self, rules: tuple[Rule, ...], *, prescreen: bool = True, name: str = "rules"
    ) -> None:
        self._rules = rules
        self._gates = tuple(word_gate(rule.pattern) for rule in rules)
        self._by_word: dict[str, list[int]] = {}
        self._ascii_needles: list[tuple[str, int]] = []
        self._other_needles: list[tuple[str, int]] = []
        self._always: list[int] = []
        for index, rule in enumerate(rules):
            for word in rule.words:
                self._by_word.setdefault(word, []).append(index)
            for needle in rule.needles:
                kind = self._ascii_needles if needle.isascii() else self._other_needles
                kind.append((needle, index))
            if not rule.words and not rule.needles:
                self._always.append(index)
        patterns = [rule.pattern for rule in rules]
        self._prescreen = Prescreen(patterns, name=name) if prescreen else None

    def candidates(self, view: str, tokens: frozenset[str]) -> list[Rule]:
        """The rules whose prefilter and word gate `view` (made of `tokens`) passes and
        that the prescreen says could match, in table order. `view` may be an excerpt of
        the text the rules will read: its stretches where a match can lie, joined."""
        return [rule for rule, _ends in self.candidates_and_ends(view, tokens)]

    def candidates_and_ends(
        self, view: str, tokens: frozenset[str]
    ) -> list[tuple[Rule, list[int] | None]]:
        """`candidates`, each with where in `view` its loose matches end, as the prescreen
        saw them (every match of the rule ends at one of these); None when unknown."""
        ends = None if self._prescreen is None else self._prescreen.match_ends(view)
        if ends is not None:
            return [
                (self._rules[index], ends[index])
                for index in sorted(ends)
                if self._prefilter_passes(index, view, tokens)
                and gate_passes(self._gates[index], tokens)
            ]
        found = set(self._always)
        for token in tokens & self._by_word.keys():
            found.update(self._by_word[token])
        for needle, index in self._ascii_needles:
            if index not in found and needle in view:
                found.add(index)
        if not view.isascii():
            # A needle can only occur where its first character does: one set of the
            # view's characters spares most of the other scripts' needles a search.
            chars = set(view)
            for needle, index in self._other_needles:
                if index not in found and needle[0] in chars and needle in view:
                    found.add(index)
        return [
            (self._rules[index], None)
            for index in sorted(found)
            if gate_passes(self._gates[index], tokens)
        ]

    def prepare(self, cache_dir: Path | None) -> None:
        """Build the prescreen now rather than at the first view (about 5 s), or read it
        from `cache_dir`."""
        if self._prescreen is not None:
            self._prescreen.build(cache_dir)

    def _prefilter_passes(self, index: int, view: str, tokens: frozenset[str]) -> bool:
        """The plain path's prefilter for one rule: kept after the prescreen so that both
        paths try exactly the same rules (a rule's prefilter words are written by hand)."""
        rule = self._rules[index]
        if not rule.words and not rule.needles:
            return True
        return not rule.words.isdisjoint(tokens) or any(n in view for n in rule.needles)


_INDEX: Final = _RuleIndex((*CONTROL_RULES, *EXTRACTION_RULES, *INTENT_RULES, *LANGUAGE_RULES))
_COMPACT_INDEX: Final = _RuleIndex(COMPACT_RULES, name="compact-rules")


def prepare_rules(cache_dir: Path | None = None) -> None:
    """Build the rule prescreens now, or read them from `cache_dir` where an earlier build
    saved them (startup calls this in a thread, so that the first message does not wait
    about 5 s on the event loop)."""
    _INDEX.prepare(cache_dir)
    _COMPACT_INDEX.prepare(cache_dir)


def _signatures(word: str) -> set[tuple[str, str, frozenset[str]]]:
    inner = word[1:-1]
    variants = {frozenset(inner)} | {frozenset(inner.replace(c, "", 1)) for c in set(inner)}
    return {(word[0], word[-1], variant) for variant in variants}


_KEYWORD_SET: Final = frozenset(_KEYWORDS)
_CIPHER_WORDS: Final = frozenset(
    (*_KEYWORDS, "dan", "pwned", "jailbroken", "unrestricted", "unfiltered", "uncensored", "mode",
     "rules", "guidelines", "directives", "admin", "tools", "secret", "secrets", "api", "key")
)  # fmt: skip

# The cipher words as they appear in the leet view when a ROT13 or reversed reading of it
# spells them.
_ROT13_WORDS: Final = frozenset(codecs.encode(word, "rot13") for word in _CIPHER_WORDS)
_REVERSED_WORDS: Final = frozenset(word[::-1] for word in _CIPHER_WORDS)

_TYPO_INDEX: Final[dict[tuple[str, str, frozenset[str]], str]] = {
    signature: keyword for keyword in _KEYWORDS for signature in _signatures(keyword)
}


@dataclass(frozen=True, slots=True)
class InjectionAssessment:
    """The rule score of a text, the rules that contributed, the learned model's
    probability, and the resulting level: pass, harden or refuse."""

    score: float
    rules: tuple[str, ...]
    probability: float = 0.0
    level: Level = "pass"

    @property
    def is_injection(self) -> bool:
        """Whether the message is refused."""
        return self.level == "refuse"

    @property
    def is_suspicious(self) -> bool:
        """Whether the message is let through, but only into a hardened turn."""
        return self.level == "harden"

    @property
    def risk(self) -> float:
        """One number for storage (a chunk's injection score): 1.0 refuse, 0.5 harden,
        below 0.5 the larger of the rule score and the probability, each scaled to its
        flag threshold."""
        if self.level == "refuse":
            return 1.0
        if self.level == "harden":
            return 0.5
        scaled = max(self.score / FLAG_THRESHOLD, self.probability / load_model().flag_probability)
        return round(min(0.49, 0.5 * scaled), 2)

    def describe(self) -> str:
        """A log-safe reason: the score, the model's probability, the rules that fired."""
        rules = ", ".join(self.rules) if self.rules else "no rule"
        return f"score {self.score:.2f}, model {self.probability:.2f}: {rules}"


def injection_risks(texts: Sequence[str]) -> list[float]:
    """`InjectionAssessment.risk` of each text (stored per chunk at ingest; synchronous and
    CPU-bound, so callers on the event loop run it in a thread)."""
    return [assess_injection(text).risk for text in texts]


def injection_score(text: str) -> float:
    """The rule score of `text` (>= `INJECTION_THRESHOLD` refuses on its own)."""
    return assess_injection(text).score


def assess_injection(text: str | NormalizedText) -> InjectionAssessment:
    """Score `text` (raw, or already normalised) with every rule and the learned model.

    Refuse when the rules reach `INJECTION_THRESHOLD`, or when the model is confident
    (its refuse threshold) and the rules reach `FLAG_THRESHOLD`. Harden when either the
    rules reach `FLAG_THRESHOLD` or the model its flag threshold (0.9 at least for a
    message that is one question asking about something). Otherwise pass.
    """
    normalized = normalize(text) if isinstance(text, str) else text
    return _assess(normalized, _leet_excerpt(normalized))


def _assess(normalized: NormalizedText, excerpt: _LeetExcerpt | None) -> InjectionAssessment:
    """`assess_injection`, the long leet view read through `excerpt` when there is one
    (the same assessment as reading it whole, which tests compare)."""
    weights = _rule_weights(normalized, excerpt)
    fired = tuple(sorted(name for name, weight in weights.items() if weight > 0))
    score = round(sum(weights.values()), 2)
    model = load_model()
    model_views = (normalized.leet, normalized.unmarked, normalized.hidden_tag_text,
                   *normalized.decoded)  # fmt: skip
    probability = max(model.probability(view) for view in model_views[:_MAX_MODEL_VIEWS] if view)
    flag_at = model.flag_probability
    if _QUESTION.fullmatch(normalized.leet) is not None:
        flag_at = max(flag_at, _QUESTION_FLAG_PROBABILITY)
    elif len(normalized.leet) > WINDOW:
        flag_at = max(flag_at, LONG_FLAG_PROBABILITY)
    if score >= INJECTION_THRESHOLD or (
        probability >= model.refuse_probability and score >= FLAG_THRESHOLD
    ):
        level: Level = "refuse"
    elif score >= FLAG_THRESHOLD or probability >= flag_at:
        level = "harden"
    else:
        level = "pass"
    return InjectionAssessment(score, fired, round(probability, 3), level)


def _rule_weights(normalized: NormalizedText, excerpt: _LeetExcerpt | None) -> dict[str, float]:
    """Each rule that fired on some view, with the highest weight it reached."""
    weights: dict[str, float] = {}
    if any(c.isalnum() for c in normalized.hidden_tag_text):
        weights["tag_smuggling"] = 1.0
    for view in _views(normalized, excerpt):
        if excerpt is not None and view is normalized.leet:
            _score_view(view, _INDEX, weights, excerpt.focus, excerpt)
            spaced = _letter_spaced(normalized.folded) or _letter_spaced(excerpt.text)
        else:
            _score_view(view, _INDEX, weights, _focus(normalized, view))
            spaced = True
        if spaced and _letter_spaced(view):
            _score_view(_NON_LETTERS.sub("", view), _COMPACT_INDEX, weights)
    # Ordinary text read in ROT13 or backwards is gibberish: only a reading that spells
    # one of the attack keywords is worth the rules. Both ciphers map the `\w+` tokens of
    # the leet view one to one (ROT13 turns ASCII letters into letters; reversing reverses
    # each token), so the leet view's tokens answer that without tokenising either reading
    # (with an excerpt, a superset of them first: the folded view's and the excerpt's).
    leet_tokens = _leet_tokens(normalized, excerpt)
    ciphers = ((normalized.rot13, _ROT13_WORDS), (normalized.reversed, _REVERSED_WORDS))
    for view, keywords in ciphers:
        if not view or keywords.isdisjoint(leet_tokens):
            continue
        if excerpt is None or not keywords.isdisjoint(view_tokens(normalized.leet)[1]):
            _score_view(view, _INDEX, weights)
    return weights


def _views(normalized: NormalizedText, excerpt: _LeetExcerpt | None = None) -> list[str]:
    views = list(normalized.match_texts())
    typos = [
        _typo_fold(view, _leet_tokens(normalized, excerpt) if view is normalized.leet else None)
        for view in views
    ]
    views += [typo for typo in typos if typo not in views]
    return views


@dataclass(frozen=True, slots=True)
class _LeetExcerpt:
    """A long leet view that differs from the folded view only here and there, as far as
    its rules need reading: `focus` (the stretches that differ, see `_focus`) and `text`,
    the stretches around them that a match near them can reach (`MAX_REACH` + `_MARGIN`
    either side, out to whole words), joined by newlines, with its `\\w+` tokens.

    The folded view was scored whole, so the rules only need the leet view near what
    changed: the prescreen scans `text`, and the word gates read its tokens, which hold
    every token a match near the changes can hold. The view's other uses of tokens (the
    scrambled-keyword and cipher tests) take the folded view's and these together: a
    superset of the leet view's, rechecked on the whole view when it finds something."""

    focus: list[tuple[int, int]]
    text: str
    tokens: list[str]
    unique: frozenset[str]


def _leet_excerpt(normalized: NormalizedText) -> _LeetExcerpt | None:
    """The excerpt of a long leet view (see `_LeetExcerpt`), or None when the leet view
    is read whole (short, or not a same-length reading of the folded view)."""
    view = normalized.leet
    focus = _focus(normalized, view)
    if not focus:
        return None
    pieces: list[str] = []
    for first, last in _around(focus, MAX_REACH + _MARGIN, len(view)):
        start, end = first, last
        while start > 0 and WORD[ord(view[start - 1])]:
            start -= 1
        while end < len(view) and WORD[ord(view[end])]:
            end += 1
        pieces.append(view[start:end])
    text = "\n".join(pieces)
    tokens, unique = view_tokens(text)
    return _LeetExcerpt(focus, text, tokens, unique)


def _leet_tokens(normalized: NormalizedText, excerpt: _LeetExcerpt | None) -> frozenset[str]:
    """The leet view's distinct tokens; with an excerpt, a superset of them (see
    `_LeetExcerpt`)."""
    if excerpt is None:
        return view_tokens(normalized.leet)[1]
    return view_tokens(normalized.folded)[1] | excerpt.unique


def _score_view(
    view: str,
    index: _RuleIndex,
    weights: dict[str, float],
    focus: list[tuple[int, int]] | None = None,
    excerpt: _LeetExcerpt | None = None,
) -> None:
    """Raise `weights` to what the rules of `index` reach in `view`; with `focus`, only
    matches near those stretches are new (the rest of the view was already scored), and
    with `excerpt`, its text and tokens stand for the view's in choosing the rules."""
    rules: list[tuple[Rule, list[int] | None]]
    if excerpt is None:
        unique = view_tokens(view)[1]
        rules = index.candidates_and_ends(view, unique)
    else:  # the excerpt's match ends are not the view's: none are used
        unique = excerpt.unique
        rules = [(rule, None) for rule in index.candidates(excerpt.text, unique)]
    if _may_flood(view if excerpt is None else excerpt.text):
        rules += [(FLOODING_RULE, None), (NUMBER_FLOODING_RULE, None)]
    long_view = len(view) > _LONG_VIEW
    sites: dict[str, list[int]] = {}
    # Rules with the same prefilter words and reach read the same stretches.
    stretches: dict[object, list[tuple[int, int]] | None] = {}
    for rule, ends in rules:
        if weights.get(rule.name, 0.0) >= rule.weight:
            continue  # nothing this rule finds could raise its weight
        spans: list[tuple[int, int]] | None = None
        if focus is not None:
            if rule.reach not in stretches:
                stretches[rule.reach] = _around(focus, rule.reach + _MARGIN, len(view))
            spans = stretches[rule.reach]
        elif long_view:
            key = (bool(rule.words), rule.words & unique, rule.needles, rule.reach)
            if key not in stretches:
                stretches[key] = _spans(rule, view, unique, sites)
            spans = stretches[key]
            if spans is not None and ends is not None:
                spans = _holding_ends(spans, ends)
        _record(rule, view, spans, weights)


def _holding_ends(spans: list[tuple[int, int]], ends: list[int]) -> list[tuple[int, int]]:
    """The spans in which one of `ends` (sorted) falls: every match of the rule ends where
    one of its loose matches does, so a span holding no such end holds no match (the
    long message's other mentions of the rule's words are not read)."""
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        first = bisect.bisect_left(ends, start)
        if first < len(ends) and ends[first] <= end:
            kept.append((start, end))
    return kept


def _focus(normalized: NormalizedText, view: str) -> list[tuple[int, int]] | None:
    """For a long leetspeak view, the stretches where it differs from the folded view (the
    leet reading only changes characters in place); None means score the whole view."""
    folded = normalized.folded
    if view is folded or view is not normalized.leet or len(view) != len(folded):
        return None
    if len(view) <= _LONG_VIEW:
        return None
    changed = np.flatnonzero(
        np.frombuffer(view.encode("utf-32-le"), dtype=np.uint32)
        != np.frombuffer(folded.encode("utf-32-le"), dtype=np.uint32)
    )
    stretches: list[tuple[int, int]] = []
    for position in changed.tolist():
        if stretches and position <= stretches[-1][1] + 2 * MAX_REACH:
            stretches[-1] = (stretches[-1][0], position + 1)
        else:
            stretches.append((position, position + 1))
    return stretches


def _around(stretches: list[tuple[int, int]], reach: int, length: int) -> list[tuple[int, int]]:
    """`stretches` widened by `reach` either side (clipped to the view), merged."""
    spans: list[tuple[int, int]] = []
    for first, last in stretches:
        start, end = max(0, first - reach), min(length, last + reach)
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


@lru_cache(maxsize=16)
def _letter_spaced(view: str) -> bool:
    """Whether `view` spaces a word letter by letter, or runs 24 letters together.

    Cheap necessary conditions first, read off the lengths of the view's (cached) `\\w+`
    tokens: four spaced letters hold three neighbouring one-letter tokens, and a run of 24
    letters lies inside one token of 24 characters or more."""
    lengths = _token_lengths(view)
    if (
        b"\x01\x01\x01" in lengths
        and _three_single_letters(view_tokens(view)[0])
        and _TWO_SPACED.search(view) is not None
        and _SPACED_LETTERS.search(view) is not None
    ):
        return True
    return max(lengths, default=0) >= 24 and _LETTER_RUN.search(view) is not None


@lru_cache(maxsize=16)
def _token_lengths(view: str) -> bytes:
    """The length of each of the view's `\\w+` tokens as one byte (255 for 255 or more),
    counted in C."""
    tokens = view_tokens(view)[0]
    try:
        return bytes(map(len, tokens))
    except ValueError:  # a token of 256 characters or more
        return bytes(min(255, len(token)) for token in tokens)


def _three_single_letters(tokens: list[str]) -> bool:
    """Whether three tokens in a row are each one letter (`[^\\W\\d_]`)."""
    run = 0
    for word in tokens:
        if len(word) == 1 and word != "_" and not word.isdecimal():
            run += 1
            if run == 3:
                return True
        else:
            run = 0
    return False


def _record(
    rule: Rule, view: str, spans: list[tuple[int, int]] | None, weights: dict[str, float]
) -> None:
    """Raise the rule's weight in `weights` to what it reaches in `view` (within `spans`)."""
    if weights.get(rule.name, 0.0) >= rule.weight:
        return
    weight = _rule_weight(rule, view, spans)
    if weight > weights.get(rule.name, 0.0):
        weights[rule.name] = weight


def _may_flood(view: str) -> bool:
    """Whether the same token could run 20 times in a row (the flooding rules' shape):
    20 tokens of one length in a row, and at least `_FLOOD_REPEATS` neighbouring tokens
    equal."""
    if _SAME_LENGTH_RUN.search(_token_lengths(view)) is None:
        return False
    tokens = view_tokens(view)[0]
    repeats: int = sum(map(operator.eq, tokens, itertools.islice(tokens, 1, None)))
    return repeats >= _FLOOD_REPEATS


def _spans(
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
    reach = rule.reach + _MARGIN
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


def _typo_fold(text: str, tokens: frozenset[str] | None = None) -> str:
    # Most texts hold no scrambled keyword: look each distinct word up once, and rewrite
    # the text only when one of them is. Every run of `_LONG_WORD` lies inside one `\w+`
    # token, so the view's (cached) distinct tokens give the same words as a findall.
    # Tokens already seen to hold none are remembered, so ordinary words cost one set
    # difference. `tokens` may be a superset of the text's: a rewrite then changes only
    # what is really scrambled, and gives the text back when nothing is.
    unseen = (view_tokens(text)[1] if tokens is None else tokens) - _PLAIN_TOKENS
    if any(map(_scrambled, unseen)):
        return _LONG_WORD.sub(_restore_keyword, text)
    short = [token for token in unseen if len(token) <= _MAX_REMEMBERED]
    if len(_PLAIN_TOKENS) + len(short) > _MAX_PLAIN_TOKENS:
        _PLAIN_TOKENS.clear()
    _PLAIN_TOKENS.update(short)
    return text


# Tokens known to hold no scrambled keyword (see `_typo_fold`); cleared when full. Only
# word-sized ones are kept, so the set stays a few megabytes whatever is sent.
_PLAIN_TOKENS: Final[set[str]] = set()
_MAX_PLAIN_TOKENS: Final = 1 << 16
_MAX_REMEMBERED: Final = 40


def _scrambled(token: str) -> bool:
    """Whether a `_LONG_WORD` run inside `token` is a scrambled keyword."""
    if len(token) < 5:
        return False
    if token.isascii() and token.isalpha() and token.islower():
        words = {token}
    else:
        words = set(_LONG_WORD.findall(token))
    return any(
        _restored(word) != word for word in words - _KEYWORD_SET if len(word) <= _LONGEST_TYPO
    )


# A scrambled keyword is at most one letter longer than the keyword (see `_restored`), so
# longer words are never looked up (nor remembered).
_LONGEST_TYPO: Final = max(map(len, _KEYWORDS)) + 1


@lru_cache(maxsize=1 << 16)
def _restored(word: str) -> str:
    keyword = _TYPO_INDEX.get((word[0], word[-1], frozenset(word[1:-1])))
    if keyword is None or abs(len(keyword) - len(word)) > 1:
        return word
    return keyword


def _restore_keyword(match: re.Match[str]) -> str:
    word = match.group()
    return _restored(word) if len(word) <= _LONGEST_TYPO else word
