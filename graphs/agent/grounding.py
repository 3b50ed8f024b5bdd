"""Cite or refuse, claim by claim: which sentences of a model's answer this turn's sources support.

No second model judges the answer. A sentence that states something (`graphs.agent.claims`)
is **supported** by a set of sources when all of these hold:

1. every number it writes occurs in them ("1.5", "8", "2026-12-07"; "eight" as "eight" or
   "8");
2. every name it uses occurs in them: code spans, identifiers (`DATA_DIR`, `lore-backup.py`),
   words in capitals (`API`), capitalised words inside the sentence (`Paris`);
3. more than half of its content words (stems) occur in them, after the words that only
   frame an answer ("according to", "the source says") are set aside;
4. it says no or not where the source sentence it matches best does, and the other way
   round ("requires an API key" is not supported by "runs without any API key");
5. a code block: each of its lines occurs in them (spaces aside); markup and JSON only
   when they are quoted from them.

Which sources count: a sentence that cites `[n]` is checked against the passages it cites,
and only those (a real source cited for a claim it does not hold does not make the claim
true); a sentence without a citation against every source of the turn, and gets the
citation of the passage that supports it (`add_cite`). Besides the numbered passages, some
texts support a sentence without a number: the person's own question, what an approved
action reported, and what Lore says about itself (`ABOUT_LORE`), so "I can search your
notes" or "your message was delivered" need no source.

A sentence that is a question back, a greeting, thanks or a "could not find" is chat: it
needs no source. `Grounding` keeps chat and supported claims, drops the rest, and says
whether what is left is an answer (`answers`): at least one supported claim, and at least
as many supported claims as dropped ones. The limits, said plainly: a paraphrase in other
words, or in another language than the source, is not recognised and is dropped (the
turn then falls back to quoting the sources); a claim that takes its words and numbers
from a source but combines them wrongly can pass. Words are stemmed in the question's
language (Snowball, or character bigrams for Chinese and Japanese), in the answer and the
sources alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from graphs.agent.claim_words import spelled_in
from graphs.agent.claims import (
    PINNED_REF,
    Claim,
    ClaimKind,
    Segment,
    has_negation,
    read_claim,
    segments,
)
from graphs.llm.offline_quotes import split_sentences
from graphs.llm.offline_stems import content_stems

__all__ = [
    "ABOUT_LORE",
    "ClaimChecker",
    "Evidence",
    "Grounding",
    "Verdict",
    "ground",
]

#: What Lore may say about itself without a source.
ABOUT_LORE: Final = (
    "I'm Lore, the knowledge-base assistant of this team. I answer questions from the shared "
    "knowledge base and, in a private chat, from your private notes, and I cite the sources "
    "I used with numbered references (citations). When the sources do not answer a "
    "question, I say so instead of guessing. You can send me links, files, notes and "
    "forwarded messages to remember; I can look back at our past conversations, pass a "
    "message to the owner, and share one of your notes with everyone once the owner "
    "approves. Type /help for commands."
)
_NUMBER: Final = re.compile(r"\d+(?:[.,:/-]\d+)*")
#: Where a source sentence is cut into clauses for the polarity check ("Lore runs without a
#: key: its answerer quotes ..." says no only in its first clause).
_CLAUSE: Final = re.compile(r"[:;]\s+|,?\s+\b(?:but|however|whereas|while)\b\s+", re.IGNORECASE)
_SPACES: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Evidence:
    """A text of this turn that can support a sentence; `ref` None: without a citation."""

    ref: int | None
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class _Unit:
    stems: frozenset[str]
    negated: bool


@dataclass(frozen=True)
class _Source:
    """One piece of evidence, read once: its words, numbers and sentences."""

    evidence: Evidence
    language: str = "en"

    @cached_property
    def flat(self) -> str:
        return _SPACES.sub(" ", f"{self.evidence.title}\n{self.evidence.text}").casefold()

    @cached_property
    def stems(self) -> frozenset[str]:
        return frozenset(content_stems(self.flat, self.language))

    @cached_property
    def numbers(self) -> frozenset[str]:
        return frozenset(_NUMBER.findall(self.flat))

    @cached_property
    def units(self) -> tuple[_Unit, ...]:
        clauses = [
            clause
            for sentence in split_sentences(self.evidence.text)
            for clause in _CLAUSE.split(sentence.text)
        ]
        units = [
            _Unit(frozenset(content_stems(c, self.language)), has_negation(c)) for c in clauses
        ]
        title = self.evidence.title
        units.append(_Unit(frozenset(content_stems(title, self.language)), False))
        return tuple(units)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One segment of the answer and what became of it."""

    segment: Segment
    claim: Claim
    supported: bool
    reason: str = ""
    add_cite: int | None = None

    @property
    def kept(self) -> bool:
        """Whether the segment stays in the answer."""
        return self.claim.kind is ClaimKind.CHAT or self.supported

    def text(self) -> str:
        """The segment as it stays, with the citation it was given."""
        text = self.segment.text
        if self.add_cite is None:
            return text
        marker = "[pinned]" if self.add_cite == PINNED_REF else f"[{self.add_cite}]"
        return re.sub(r"([.!?:;]*)$", rf" {marker}\1", text, count=1)


@dataclass(frozen=True, slots=True)
class Grounding:
    """A checked answer: every segment's verdict, what is left, whether it answers."""

    verdicts: tuple[Verdict, ...] = field(default_factory=tuple)

    @property
    def claims(self) -> tuple[Verdict, ...]:
        """The segments that state something (markup counts: it is not chat)."""
        return tuple(v for v in self.verdicts if v.claim.kind is not ClaimKind.CHAT)

    @property
    def supported(self) -> tuple[Verdict, ...]:
        """The claims a source supports."""
        return tuple(v for v in self.claims if v.supported)

    @property
    def dropped(self) -> tuple[Verdict, ...]:
        """The claims no source supports, and the markup."""
        return tuple(v for v in self.claims if not v.supported)

    @property
    def answers(self) -> bool:
        """At least one supported claim, and no fewer than were dropped."""
        return bool(self.supported) and len(self.supported) >= len(self.dropped)

    @property
    def chat_only(self) -> bool:
        """Nothing but chat (a greeting, a question back, a "could not find")."""
        return bool(self.verdicts) and not self.claims

    def text(self) -> str:
        """The answer with only chat and supported claims, laid out as it was."""
        parts: list[str] = []
        for verdict in self.verdicts:
            if verdict.kept:
                before = verdict.segment.before if parts else verdict.segment.before.lstrip()
                parts.append(before + verdict.text())
        return re.sub(r"\n{3,}", "\n\n", "".join(parts)).strip()


def _code_supported(block: str, sources: Sequence[_Source]) -> bool:
    lines = [_SPACES.sub(" ", line).strip().casefold() for line in block.splitlines()]
    wanted = [line for line in lines if line and not line.startswith("```")]
    return bool(wanted) and all(any(line in s.flat for s in sources) for line in wanted)


def _quoted(claim: Claim, sources: Sequence[_Source]) -> str:
    quoted = _SPACES.sub(" ", claim.text).casefold()
    return "" if any(quoted in s.flat for s in sources) else "markup"


def _numbers_missing(claim: Claim, sources: Sequence[_Source]) -> str:
    numbers = frozenset().union(*(s.numbers for s in sources))
    flat = "\n".join(s.flat for s in sources)
    missing = [n for n in claim.numbers if n not in numbers and n not in flat]
    missing += [
        word
        for word, digits in claim.number_words
        if digits not in numbers and not spelled_in(word, flat)
    ]
    return "a number not in the sources" if missing else ""


def _names_missing(claim: Claim, sources: Sequence[_Source]) -> str:
    flat = "\n".join(s.flat for s in sources)
    missing = sorted(name for name in claim.names if name not in flat)
    return "a name not in the sources" if missing else ""


def _too_few_words(claim: Claim, sources: Sequence[_Source]) -> str:
    held = len(claim.stems & frozenset().union(*(s.stems for s in sources)))
    needed = len(claim.stems) // 2 + 1  # a strict majority
    return "too few of its words in the sources" if claim.stems and held < needed else ""


def _opposite(claim: Claim, sources: Sequence[_Source]) -> str:
    """The claim says no where every clause matching it best says yes, or the other way."""
    units = [unit for source in sources for unit in source.units]
    overlap = max((len(unit.stems & claim.stems) for unit in units), default=0)
    if overlap == 0:
        return ""
    best = [unit for unit in units if len(unit.stems & claim.stems) == overlap]
    if any(unit.negated == claim.negated for unit in best):
        return ""
    return "the source says the opposite"


_CHECKS: Final = (_numbers_missing, _names_missing, _too_few_words, _opposite)


def _why_not(claim: Claim, sources: Sequence[_Source]) -> str:
    """Why `sources` do not support `claim` ("" when they do)."""
    if not sources:
        return "no source"
    if claim.kind is ClaimKind.MARKUP:
        return _quoted(claim, sources)
    if claim.text.startswith("```"):
        return "" if _code_supported(claim.text, sources) else "code not in the sources"
    return next((reason for check in _CHECKS if (reason := check(claim, sources))), "")


class ClaimChecker:
    """Checks an answer's segments against one turn's evidence, read once; words are
    stemmed in `language` (the question's), alike in the answer and the sources."""

    def __init__(self, evidence: Iterable[Evidence], language: str = "en") -> None:
        self._language = language
        self._sources = [_Source(item, language) for item in evidence]

    def judge(self, segment: Segment) -> Verdict:
        """The verdict on one segment (see the module docstring)."""
        claim = read_claim(segment.text, self._language)
        if claim.kind is ClaimKind.CHAT:
            return Verdict(segment, claim, supported=True)
        numbered = {s.evidence.ref: s for s in self._sources if s.evidence.ref is not None}
        cited = [numbered[ref] for ref in claim.cites if ref in numbered]
        if claim.cites and cited:
            reason = _why_not(claim, cited)
            return Verdict(segment, claim, supported=not reason, reason=reason)
        # No citation (or only numbers no source has): any source of the turn may hold it;
        # the best single numbered one that does is cited, else one that needs no number.
        for source in sorted(numbered.values(), key=lambda s: -len(claim.stems & s.stems)):
            if not _why_not(claim, [source]):
                return Verdict(segment, claim, supported=True, add_cite=source.evidence.ref)
        free = [s for s in self._sources if s.evidence.ref is None]
        reason = _why_not(claim, free) if free else "no citation"
        if reason and len(numbered) > 1 and not _why_not(claim, list(numbered.values())):
            reason = "no single source holds it"
        return Verdict(segment, claim, supported=not reason, reason=reason)

    def ground(self, answer: str) -> Grounding:
        """Every segment of `answer` judged."""
        return Grounding(tuple(self.judge(segment) for segment in segments(answer)))


def ground(answer: str, evidence: Iterable[Evidence], language: str = "en") -> Grounding:
    """Check every segment of `answer` against `evidence` (see the module docstring)."""
    return ClaimChecker(evidence, language).ground(answer)
