"""A model's answer cut into sentences, and what each one claims: the words, numbers and names
that a source must hold for the sentence to be supported (`graphs.agent.grounding`).

`segments(answer)` cuts the answer into pieces that can be dropped one by one and joined
again without breaking the rest: sentences of running text, list items, headings and whole
fenced code blocks. Each keeps the text before it (spaces, a line break, a bullet), and a
citation written after the full stop ("It opens at 8. [1]") stays with its sentence.

`read_claim(text)` reads one piece:

- `cites`: the source numbers it cites (`[2]`, `[1][3]`; `[pinned]` is 0);
- `stems`: its content words as stems, without those that only frame an answer
  ("according", "source", "found", "hello", "help" ...: `FRAMING`; "gerne", "Antwort",
  "以下是" ... in the other languages, `graphs.agent.claim_words`);
- `numbers`: every number written in digits ("1.5", "8", "2026-12-07", "08:30"), and
  `number_words` those written as words ("eight" as ("eight", "8"), "acht", "二楼");
- `names`: code spans, identifiers (`DATA_DIR`, `lore-backup.py`, `docs/faq.md`), words in
  capitals (`API`) and capitalised words inside the sentence (`Paris`, `Telegram`);
- `negated`: whether it says no, not, never, without ...;
- `kind`: `chat` (a question back, a greeting, thanks, "here is what I found", a "could not
  find" refusal, in English or the question's language: nothing a source must hold),
  `markup` (tool-call or template markup, JSON), or `claim` (everything else: it states
  something).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from graphs.agent.answer_markup import looks_like_markup
from graphs.agent.claim_words import (
    ENGLISH_NUMBER_WORDS,
    claim_stems,
    framing_stems,
    is_framing_name,
    number_words,
    says_not_found,
)

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
    # Chinese and Japanese end a sentence with full-width marks and no space after them.
    r"|[\u3002\uff01\uff1f]+(?:[\u300d\u300f\u201d\uff09]*)(?:\s*\[(?:\d{1,3}|pinned)\])*"
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
#: Stems that only frame an English answer; a sentence of nothing else claims nothing (other
#: languages: `graphs.agent.claim_words`).
FRAMING: Final = framing_stems("en")
_HEDGES: Final = frozenset({"i", "im", "i'm", "you", "me", "here"})
#: Numbers written as English words ("one" is left out: "one of your notes" is no number).
NUMBER_WORDS: Final = ENGLISH_NUMBER_WORDS


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


def _names(text: str, language: str) -> set[str]:
    names = {span.strip().casefold() for span in _CODE_SPAN.findall(text)}
    prose = _CODE_SPAN.sub(" ", text)
    names |= {match.group(0).casefold().rstrip("./-") for match in _IDENTIFIER.finditer(prose)}
    names |= {
        match.group(1).casefold()
        for match in _CAPITALISED.finditer(prose)
        if not is_framing_name(match.group(1), language)
    }
    return {name for name in names if name and name not in _HEDGES}


def read_claim(text: str, language: str = "en") -> Claim:
    """What `text` (one segment) says, its words stemmed in `language`; see the module
    docstring."""
    cites = cited_numbers(text)
    body = without_citations(text).strip()
    stems = claim_stems(body, language)
    numbers = frozenset(_NUMBER.findall(body))
    spelled = number_words(body, language)
    names = frozenset(_names(body, language))
    if looks_like_markup(body) or body.startswith("```"):
        kind = ClaimKind.MARKUP if not body.startswith("```") else ClaimKind.CLAIM
    elif (
        body.endswith(("?", "\uff1f"))
        or says_not_found(body, language)
        or not (stems or numbers or names)
    ):
        kind = ClaimKind.CHAT
    else:
        kind = ClaimKind.CLAIM
    return Claim(body, kind, cites, stems, numbers, names, has_negation(body), spelled)
