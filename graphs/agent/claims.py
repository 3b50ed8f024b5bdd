"""A model's answer cut into sentences, and what each one claims: the words, numbers and names
that a source must hold for the sentence to be supported (`graphs.agent.grounding`).

`segments(answer)` cuts the answer into pieces that can be dropped one by one and joined
again without breaking the rest: sentences of running text, list items, headings and whole
fenced code blocks. Each keeps the text before it (spaces, a line break, a bullet), and a
citation written after the full stop ("It opens at 8. [1]") stays with its sentence.

`read_claim(text)` reads one piece:

- `cites`: the source numbers it cites (`[2]`, `[1][3]`; `[pinned]` is 0);
- `stems`: its content words as stems, without those that only frame an answer
  ("according", "source", "found", "hello", "help" ...: `FRAMING`);
- `numbers`: every number written in digits ("1.5", "8", "2026-12-07", "08:30"), and
  `number_words` those written as words ("eight" as ("eight", "8"));
- `names`: code spans, identifiers (`DATA_DIR`, `lore-backup.py`, `docs/faq.md`), words in
  capitals (`API`) and capitalised words inside the sentence (`Paris`, `Telegram`);
- `negated`: whether it says no, not, never, without ...;
- `kind`: `chat` (a question back, a greeting, thanks, "here is what I found", a "could not
  find" refusal: nothing a source must hold), `markup` (tool-call or template markup, JSON),
  or `claim` (everything else: it states something).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from graphs.agent.answer_markup import looks_like_markup
from graphs.llm.offline_stems import content_stems

__all__ = [
    "FRAMING",
    "NUMBER_WORDS",
    "Claim",
    "ClaimKind",
    "Segment",
    "cited_numbers",
    "has_negation",
    "read_claim",
    "segments",
    "without_citations",
]

PINNED_REF: Final = 0
_CITATION: Final = re.compile(r"\s*\[(\d{1,3}|pinned)\]")
_FENCE: Final = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LINE_MARK: Final = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|[-*+•][ \t]+|\d{1,3}[.)][ \t]+|>[ \t]*)?")
_SENTENCE_END: Final = re.compile(
    r"[.!?]+(?:[\"\u201d\u2019)\]]*)(?:\s*\[(?:\d{1,3}|pinned)\])*(?=\s|$)"
)
_NUMBER: Final = re.compile(r"(?<![\w.])\d+(?:[.,:/-]\d+)*(?![\w])")
_CODE_SPAN: Final = re.compile(r"`([^`\n]+)`")
_IDENTIFIER: Final = re.compile(
    r"(?<![\w/.-])(?:[A-Za-z][\w]*[_./-][\w./-]*\w|[A-Z]{2,}[A-Z0-9]*|[a-z]+[A-Z]\w*)(?![\w])"
)
_CAPITALISED: Final = re.compile(r"(?<=[^\s.!?:;\"“(\[*•-])\s+([A-Z][a-z]{2,}\w*)")
_NEGATION: Final = re.compile(
    r"\b(?:no|not|never|none|nothing|nobody|nowhere|neither|nor|without|cannot|unable)\b"
    r"|n't\b|n\u2019t\b",
    re.IGNORECASE,
)
_REFUSAL: Final = re.compile(
    r"\b(?:could ?n[o']t|can ?n[o']t|did ?n[o']t|was ?n[o']t able to|am not able to|unable to)"
    r" (?:find|locate|see|answer)\b|\bno (?:information|source|mention|answer)\b"
    r"|\bi (?:don't|do not) know\b",
    re.IGNORECASE,
)
_FRAMING_WORDS: Final = (
    "according accordingly answer answers anything apologies ask asked asking asks assist "
    "assistance available based sorry unfortunately "
    "certainly cite cited citing citation citations course detail details document "
    "documentation documents else entry excerpt faq feel find finding found further glad "
    "great happy hello "
    "help hey hi hope information know knowledge base let look looking mention mentioned "
    "mentions morning afternoon evening note notes okay passage passages provided "
    "question questions quote quoted result results say says search searched see shown "
    "source sources state stated states sure thank thanks today welcome wish"
)
#: Stems that only frame an answer; a sentence of nothing else claims nothing.
FRAMING: Final = frozenset(content_stems(_FRAMING_WORDS))
_HEDGES: Final = frozenset({"i", "im", "i'm", "you", "me", "here"})
_UNITS: Final = [
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
]  # fmt: skip
_TENS: Final = ["thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
#: Numbers written as words ("one" is left out: "one of your notes" is no number).
NUMBER_WORDS: Final = {
    **{word: str(value) for value, word in enumerate(_UNITS, start=2)},
    **{word: str(value) for value, word in zip(range(30, 100, 10), _TENS, strict=True)},
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
}
_WORDS: Final = re.compile(r"[a-z]+")


class ClaimKind(StrEnum):
    """What a sentence of an answer is."""

    CHAT = "chat"
    MARKUP = "markup"
    CLAIM = "claim"


@dataclass(frozen=True, slots=True)
class Segment:
    """One sentence, list item, heading or code block of an answer, and the text before it."""

    text: str
    before: str = ""


@dataclass(frozen=True, slots=True)
class Claim:
    """What one sentence says, as a source must hold it."""

    text: str
    kind: ClaimKind
    cites: tuple[int, ...]
    stems: frozenset[str]
    numbers: frozenset[str]
    names: frozenset[str]
    negated: bool
    number_words: frozenset[tuple[str, str]] = frozenset()


def cited_numbers(text: str) -> tuple[int, ...]:
    """The sources `text` cites, first mention first (`[pinned]` is 0)."""
    found: list[int] = []
    for match in _CITATION.finditer(text):
        number = PINNED_REF if match.group(1) == "pinned" else int(match.group(1))
        if number not in found:
            found.append(number)
    return tuple(found)


def without_citations(text: str) -> str:
    """`text` with its citation markers removed."""
    return _CITATION.sub("", text)


def has_negation(text: str) -> bool:
    """Whether `text` says no, not, never, without ..."""
    return _NEGATION.search(text) is not None


def _line_segments(line: str, before: str) -> list[Segment]:
    mark = _LINE_MARK.match(line)
    start = mark.end() if mark else 0
    before += line[:start]
    found: list[Segment] = []
    position = start
    for end in _SENTENCE_END.finditer(line, start):
        piece = line[position : end.end()]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            found.append(Segment(piece.strip(), before + piece[:lead]))
            before = ""
        position = end.end()
    rest = line[position:]
    if rest.strip():
        lead = len(rest) - len(rest.lstrip())
        found.append(Segment(rest.strip(), before + rest[:lead]))
    elif found and rest:
        found[-1] = Segment(found[-1].text, found[-1].before)
    return found


def segments(answer: str) -> list[Segment]:
    """The answer as pieces that can be dropped one by one (see the module docstring)."""
    found: list[Segment] = []
    pending = ""
    position = 0
    for fence in [*_FENCE.finditer(answer), None]:
        stop = fence.start() if fence is not None else len(answer)
        for line in re.split(r"(\n)", answer[position:stop]):
            if line == "\n":
                pending += line
                continue
            pieces = _line_segments(line, pending)
            if pieces:
                found.extend(pieces)
                pending = ""
            else:
                pending += line
        if fence is not None:
            found.append(Segment(fence.group(0), pending))
            pending = ""
            position = fence.end()
    return found


def _names(text: str) -> set[str]:
    names = {span.strip().casefold() for span in _CODE_SPAN.findall(text)}
    prose = _CODE_SPAN.sub(" ", text)
    names |= {match.group(0).casefold().rstrip("./-") for match in _IDENTIFIER.finditer(prose)}
    names |= {match.group(1).casefold() for match in _CAPITALISED.finditer(prose)}
    return {name for name in names if name and name not in _HEDGES}


def read_claim(text: str, language: str = "en") -> Claim:
    """What `text` (one segment) says, its words stemmed in `language`; see the module
    docstring."""
    cites = cited_numbers(text)
    body = without_citations(text).strip()
    stems = frozenset(content_stems(body, language)) - FRAMING
    numbers = frozenset(_NUMBER.findall(body))
    spelled = frozenset(
        (word, NUMBER_WORDS[word]) for word in _WORDS.findall(body.lower()) if word in NUMBER_WORDS
    )
    names = frozenset(_names(body))
    if looks_like_markup(body) or body.startswith("```"):
        kind = ClaimKind.MARKUP if not body.startswith("```") else ClaimKind.CLAIM
    elif body.endswith("?") or _REFUSAL.search(body) or not (stems or numbers or names):
        kind = ClaimKind.CHAT
    else:
        kind = ClaimKind.CLAIM
    return Claim(body, kind, cites, stems, numbers, names, has_negation(body), spelled)
