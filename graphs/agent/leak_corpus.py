"""What the prompt-leak checks compare an answer with: the instructions and the tool definitions.

Built once from `graphs.agent.prompts` and `graphs.agent.tools`, in three forms:

- **compact text**: casefolded letters and digits only (`compact`), so re-casing, re-spacing,
  punctuation, bullets and line breaks make no difference; cut into `SHINGLE`-character
  shingles, one set for the instructions and one for the tool definitions (names,
  descriptions and the JSON schema as the model receives it);
- **rule signatures**: the content-word stems of each instruction (`stems`), to notice an
  answer that paraphrases several of them;
- **tool vocabulary**: each tool's name and parameter names as patterns that also match
  `search memory`, `searchMemory` or `search-memory`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from graphs.agent.prompts import CONTEXT_LINE, HARDENED, INSTRUCTIONS, MARKER_LINE
from graphs.agent.tools import TOOLS

__all__ = [
    "INSTRUCTION_SHINGLES",
    "INSTRUCTION_TEXT",
    "RULES",
    "SHINGLE",
    "SHINGLE_SOURCES",
    "TOOL_SHINGLES",
    "TOOL_TEXT",
    "TOOL_VOCABULARY",
    "ToolWords",
    "compact",
    "shingles",
    "stems",
]

#: Characters per shingle of compact text (about three words).
SHINGLE: Final = 16
_NOT_ALNUM: Final = re.compile(r"[\W_]+")
_WORD: Final = re.compile(r"[^\W_]+")
_STEM_CHARS: Final = 5
_STOPWORD_TEXT: Final = """
    a about after again all also am an and any are as at be because been before being but
    by can could did do does doing done each for from had has have having here how i if in
    into is it its itself just like may me more most my no nor not now of off on once only or
    other our out over own same say says she should so some such than that the their theirs
    them then there these they this those through to too under until up us very was we were
    what when where which while who whom why will with would you your yours"""
_STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split())


def compact(text: str) -> str:
    """`text` casefolded, with everything but letters and digits removed."""
    return _NOT_ALNUM.sub("", text.casefold())


def shingles(compact_text: str) -> frozenset[str]:
    """Every `SHINGLE`-character piece of a compact text."""
    last = len(compact_text) - SHINGLE + 1
    return frozenset(compact_text[i : i + SHINGLE] for i in range(max(0, last)))


def _stem(word: str) -> str:
    for suffix, shortest in (("ing", 6), ("ed", 5), ("s", 4)):
        if word.endswith(suffix) and len(word) >= shortest:
            word = word[: -len(suffix)]
            break
    return word[:_STEM_CHARS]


def stems(text: str) -> frozenset[str]:
    """The content words of `text` (casefolded, no stopwords, three letters or more), cut
    to a crude stem: "-ing", "-ed" or "-s" off, then the first five letters ("answers" and
    "answering" meet, "citations" and "cite" stay apart)."""
    words = _WORD.findall(text.casefold())
    return frozenset(_stem(w) for w in words if len(w) >= 3 and w not in _STOPWORDS)


def _rules(*texts: str) -> tuple[frozenset[str], ...]:
    """One signature per instruction: a bullet with its continuation lines, or a sentence."""
    found: list[frozenset[str]] = []
    for text in texts:
        for block in re.split(r"\n\s*-\s+|\n\n", text):
            signature = stems(block)
            if len(signature) >= 4:
                found.append(signature)
    return tuple(found)


def _tool_json() -> str:
    """The tool definitions as the model receives them."""
    specs = [
        {"name": t.spec.name, "description": t.spec.description, "parameters": t.spec.parameters}
        for t in TOOLS.values()
    ]
    return json.dumps(specs)


def _loose(name: str) -> str:
    """A pattern for an identifier written with `_`, `-`, `.`, spaces or nothing between
    its words ("day_from", "day from", "dayFrom" once casefolded)."""
    parts = [re.escape(part) for part in name.split("_")]
    return r"(?<![^\W_])" + r"[\s_.\-]{0,3}".join(parts) + r"(?![^\W_])"


@dataclass(frozen=True, slots=True)
class ToolWords:
    """One tool's name and parameter names as patterns over casefolded text."""

    name: str
    pattern: re.Pattern[str]
    parameters: tuple[tuple[str, re.Pattern[str]], ...]

    @property
    def compact_name(self) -> str:
        """The name as `compact` writes it: every text that names the tool holds it."""
        return compact(self.name)

    def named_in(self, words: str, compact_text: str) -> bool:
        """Whether the casefolded `words` (whose compact form is `compact_text`) name the tool."""
        return self.compact_name in compact_text and self.pattern.search(words) is not None

    def parameters_in(self, text: str, exempt: Iterable[str] = ()) -> set[str]:
        """The tool's parameter names that `text` mentions, minus those in `exempt`."""
        skip = set(exempt)
        return {
            name for name, pattern in self.parameters if name not in skip and pattern.search(text)
        }


def _vocabulary() -> tuple[ToolWords, ...]:
    return tuple(
        ToolWords(
            tool.name,
            re.compile(_loose(tool.name)),
            tuple((a.name, re.compile(_loose(a.name))) for a in tool.arguments),
        )
        for tool in TOOLS.values()
    )


INSTRUCTION_TEXT: Final = compact(
    INSTRUCTIONS
    + HARDENED
    + CONTEXT_LINE.format(role="member", chat="a private chat")
    + MARKER_LINE
)
TOOL_TEXT: Final = compact(_tool_json())
INSTRUCTION_SHINGLES: Final = shingles(INSTRUCTION_TEXT)
TOOL_SHINGLES: Final = shingles(TOOL_TEXT)
#: Each shingle of either text: (in the instructions, in the tool definitions).
SHINGLE_SOURCES: Final = {
    piece: (piece in INSTRUCTION_SHINGLES, piece in TOOL_SHINGLES)
    for piece in INSTRUCTION_SHINGLES | TOOL_SHINGLES
}
RULES: Final = _rules(INSTRUCTIONS, HARDENED, MARKER_LINE)
TOOL_VOCABULARY: Final = _vocabulary()
