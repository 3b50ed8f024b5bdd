"""What kind of answer a question asks for, and whether a sentence looks like one.

"How many ...?" wants a number, "Where ...?" a place (a path, a file, a folder), "How do
I ...?" an action (a command or a setting to type), "Which values can X take?" a choice
(a list of alternatives such as `a`, `b` or `c`). A sentence of the expected kind gets
a small bonus in `graphs.llm.offline_quotes`, enough to break a tie between sentences
that share as many words with the question, never enough to beat a better match; and
`graphs.llm.offline_answer` adds a passage whose quote is of the kind when the best
quotes are not.
"""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["AnswerKind", "answer_kind", "looks_like"]


class AnswerKind(StrEnum):
    """The kind of answer a question asks for."""

    NUMBER = "number"
    PLACE = "place"
    ACTION = "action"
    CHOICE = "choice"
    ANY = "any"


_KINDS: tuple[tuple[re.Pattern[str], AnswerKind], ...] = (
    (
        re.compile(
            r"^(?:how\s+(?:many|much|long|big|large|often|old|fast|late|early|soon)\b"
            r"|(?:what|which)\s+(?:is|are)\s+the\s+(?:default|size|limit|largest|biggest|"
            r"maximum|minimum|smallest|number|version)\b"
            r"|(?:what|which)\s+(?:version|number|port|size|limit)\b)"
        ),
        AnswerKind.NUMBER,
    ),
    (re.compile(r"^where\b"), AnswerKind.PLACE),
    (
        re.compile(r"^(?:how\s+(?:do|can|should|would)\s+(?:i|we|you|one)\b|how\s+to\b)"),
        AnswerKind.ACTION,
    ),
    (
        re.compile(
            r"^(?:which|what)\s+(?:values|options|choices)\b"
            r"|^(?:which|what)\s+(?:[\w-]+\s+){1,3}(?:can|may|could|will)\s"
        ),
        AnswerKind.CHOICE,
    ),
)
_NUMBER = re.compile(r"\d")
_PLACE = re.compile(r"\w/|/\w|`[^`\s]+\.[a-z0-9]{2,8}`|\b[A-Z][A-Z0-9]*_DIR\b")
_ACTION = re.compile(r"`(?:/[a-z]|lore\s|make\s|[A-Z][A-Z0-9]*_[A-Z0-9_]+)")
#: Three alternatives or more, each marked as code: `a`, `b` or `c`.
_CHOICE = re.compile(r"`[^`]+`(?:\s*,\s*`[^`]+`)+\s*,?\s+(?:or|and)\s+`[^`]+`")


def answer_kind(question: str) -> AnswerKind:
    """The kind of answer `question` asks for (ANY when it does not say)."""
    text = " ".join(question.lower().split())
    for pattern, kind in _KINDS:
        if pattern.search(text):
            return kind
    return AnswerKind.ANY


def looks_like(kind: AnswerKind, sentence: str) -> bool:
    """Whether `sentence` holds an answer of `kind`: a digit, a path, a command to type, a
    list of alternatives."""
    if kind is AnswerKind.NUMBER:
        return _NUMBER.search(sentence) is not None
    if kind is AnswerKind.PLACE:
        return _PLACE.search(sentence) is not None
    if kind is AnswerKind.ACTION:
        return _ACTION.search(sentence) is not None
    if kind is AnswerKind.CHOICE:
        return _CHOICE.search(sentence) is not None
    return False
