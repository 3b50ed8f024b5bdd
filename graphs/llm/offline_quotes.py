"""Pick the sentences of a retrieved passage that best answer a question, for quoting.

A passage is Markdown: headings, paragraphs wrapped over lines, lists, tables and code
blocks. It is cut into quotable units (sentences, list items, table rows, code lines),
each remembering the heading above it, and the units are scored by content-word
overlap with the question (stopwords dropped, Snowball stems in the question's language:
`graphs.llm.offline_stems`), each word weighted by how rare it is among the units of the
turn's passages (`stem_weights`). Sentences end at ".", "!" or "?" before a capital (in any
script) and right after a CJK full stop, exclamation or question mark.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from graphs.llm.offline_cues import answer_kind, looks_like
from graphs.llm.offline_stems import content_stems

__all__ = [
    "Sentence",
    "join_quote",
    "pick_sentences",
    "split_sentences",
    "stem_weights",
]


def stem_weights(question: str, texts: Iterable[str], language: str = "en") -> dict[str, float]:
    """How telling each of the question's stems is among the units of `texts`: the
    smoothed inverse share of units (sentences, items, rows, code lines) that hold it,
    scaled so that the question's stems weigh 1 on average. A word every passage repeats
    ("Discord" on the Discord page) then counts less than the one word that only the
    answer holds ("reconnect")."""
    wanted = dict.fromkeys(content_stems(question, language))  # in order: the same mean each run
    units = [set(content_stems(s.text, language)) for text in texts for s in split_sentences(text)]
    if not wanted or not units:
        return dict.fromkeys(wanted, 1.0)
    idf = {
        stem: math.log((len(units) + 1) / (sum(stem in unit for unit in units) + 1)) + 1
        for stem in wanted
    }
    mean = sum(idf.values()) / len(idf)
    return {stem: value / mean for stem, value in idf.items()}


@dataclass(frozen=True, slots=True)
class Sentence:
    """A quotable sentence (or list item, table row, code line) and the heading above it."""

    text: str
    heading: str
    position: int
    code: bool = False
    #: A list item or table row (one of a series), not running text.
    item: bool = False
    #: The first unit under a heading that the passage itself shows.
    opening: bool = False


#: Where a sentence may end (`_split` keeps those before a capital, digit or opening mark).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[\u3002\uff01\uff1f])\s*(?=\S)")
_CJK_ENDS = frozenset("\u3002\uff01\uff1f")
_OPENERS = frozenset('0123456789`"([*\u201c\u201e\u00ab\u00bf\u00a1')
#: Chinese or Japanese text: a sentence of a few characters is still a sentence.
_CJK_TEXT = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")
#: A link in a sentence is an example; its words say nothing about the sentence's topic.
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
_POINTER = re.compile(
    r"^(?:this|that|the\s+following|the\s+next)\s+(?:page|section|document|guide|chapter)\b"
    r"|^see\b",
    re.IGNORECASE,
)
#: A sentence that goes on from the one before it ("Any other number is removed ...").
_CONTINUES = re.compile(
    r"^(?:this|that|these|those|such|it|they|any other|otherwise|then|both)\b", re.IGNORECASE
)
#: A code line that annotates what it shows: "qdrant/private/   embedded shard for ..." or
#: "lore stats   # counts" (two spaces or more, then at least three words of prose).
_ANNOTATED = re.compile(r"^\S.*?\s{2,}(?:#\s*)?(?P<note>[A-Za-z][\w'-]*(?:\s+\S+){2,})\s*$")
#: Longest quoted sentence; longer ones are cut at a word boundary.
_MAX_SENTENCE = 320
#: An opening sentence at least this long is quoted alone.
_LONG = 200
#: A list introduced by ":" is followed while the quote is shorter than this ...
_BUDGET = 500
#: ... and has fewer units than this.
_MAX_UNITS = 5
#: The bonus of a sentence of the kind of answer the question asks for.
_CUE = 0.5


def pick_sentences(
    question: str,
    text: str,
    *,
    section: str = "",
    title: str = "",
    weights: Mapping[str, float] | None = None,
    language: str = "en",
) -> tuple[list[Sentence], float]:
    """The 1-2 sentences of `text` that best answer `question`, in reading order, and a score.

    Each sentence scores the distinct question stems it holds outside links, each by its
    weight (`weights`, from `stem_weights`; 1 each without) (half for a
    code line, an example rather than a statement, unless they are in the prose that
    annotates it: "qdrant/private/   embedded shard for ..."), plus half of those its
    heading holds (`section`, the heading the passage starts under, for the sentences
    before its first own heading), plus a bonus for the kind of answer the question asks
    for (a number, a place, a command, a choice: `graphs.llm.offline_cues`; it only
    ranks, the runner-up rule below ignores it), less one for "This page ..." sentences
    that only point elsewhere; earlier sentences win ties. The opening sentence of a
    section whose heading holds at least two thirds of the question's stems (an FAQ
    entry, a section named after the question; the page's `title` counts as part of the
    heading here) also scores those stems again, and one more when the heading holds them
    all; when it wins and is short, the sentence after it comes along. Otherwise the
    sentence after the best comes along when it goes on from it ("Any other number ...",
    "It ..."), and the runner-up is kept when it scores at least half the best. A sentence
    ending in ":" brings the list it introduces.
    """
    sentences = split_sentences(text, heading=section)
    page = _stem_set(title, language)
    wanted = _weighted(question, weights, language)
    if not sentences:
        return [], 0.0
    kind = answer_kind(question)
    scored = sorted(
        (
            (_score(s, wanted, page, language), _CUE if looks_like(kind, s.text) else 0.0, s)
            for s in sentences
        ),
        key=lambda item: (-item[0] - item[1], item[2].position),
    )
    best_score, best_cue, best = scored[0]
    keep = [best]
    if _answers_section(best, wanted, page, language):
        if len(best.text) < _LONG and (following := _next(best, sentences)):
            keep.append(following)
    else:
        if (following := _next(best, sentences)) and _CONTINUES.match(following.text):
            keep.append(following)
        if best_score > 0 and len(scored) > 1 and scored[1][0] * 2 >= best_score:
            keep.append(scored[1][2])
    chosen = _with_lists(sorted(keep, key=lambda s: s.position), sentences)
    return chosen, best_score + best_cue


def _weighted(
    question: str, weights: Mapping[str, float] | None, language: str
) -> dict[str, float]:
    stems = dict.fromkeys(content_stems(question, language), 1.0)
    if weights:
        stems.update({stem: weights[stem] for stem in stems if stem in weights})
    return stems


def _sum(wanted: Mapping[str, float], stems: Iterable[str]) -> float:
    """The weight of the question stems among `stems`, added in the question's order: the
    same stems always give the same float (a set's order changes with the hash seed), so
    equal scores tie and the earlier sentence wins."""
    held = set(stems)
    return sum(weight for stem, weight in wanted.items() if stem in held)


@functools.lru_cache(maxsize=1024)
def _stem_set(text: str, language: str) -> frozenset[str]:
    """The content stems of a heading or title: every unit under a heading asks for them."""
    return frozenset(content_stems(text, language))


def _heading_stems(sentence: Sentence, wanted: Mapping[str, float], language: str) -> int:
    return len(wanted.keys() & _stem_set(sentence.heading, language))


def _answers_section(
    sentence: Sentence, wanted: Mapping[str, float], page: frozenset[str], language: str
) -> bool:
    """Whether `sentence` opens a section named after the question: its heading holds 2/3
    of the weight of the question's stems, or is itself a question (an FAQ entry) that
    holds 2/3 of them by count (a paraphrase may swap a telling word: "say" for "answer")."""
    if not sentence.opening or not wanted:
        return False
    held = page | _stem_set(sentence.heading, language)
    if _sum(wanted, held) * 3 >= sum(wanted.values()) * 2:
        return True
    faq_entry = sentence.heading.endswith("?")
    return faq_entry and _heading_stems(sentence, wanted, language) * 3 >= len(wanted) * 2


def _next(sentence: Sentence, sentences: Sequence[Sentence]) -> Sentence | None:
    """The sentence after `sentence` under the same heading, if any."""
    if sentence.position + 1 < len(sentences):
        following = sentences[sentence.position + 1]
        if following.heading == sentence.heading:
            return following
    return None


def _with_lists(chosen: list[Sentence], sentences: Sequence[Sentence]) -> list[Sentence]:
    """Add the items a chosen sentence ending in ":" introduces (a few, within budget);
    drop a code line the sentence after it already quotes."""
    result: list[Sentence] = []
    for sentence in chosen:
        if result and result[-1].position >= sentence.position:
            continue
        result.append(sentence)
        current, in_list = sentence, False
        while len(result) < _MAX_UNITS and sum(len(s.text) for s in result) <= _BUDGET:
            following = _next(current, sentences)
            if following is None:
                break
            # A ":" opens a list; its items follow each other until the list ends.
            if not (current.text.endswith(":") or (in_list and current.item and following.item)):
                break
            result.append(following)
            current, in_list = following, True
    return [
        s
        for s, after in itertools.zip_longest(result, result[1:])
        if not (s.code and after is not None and s.text.strip("`") in after.text)
    ]


def _own_stems(sentence: Sentence, wanted: Mapping[str, float], language: str) -> float:
    """The question stems a unit holds: a code line's count half (an example, not a
    statement), except the words of its annotation (a listing's "path   what it is")."""
    text = _URL.sub(" ", sentence.text)
    if not sentence.code:
        return _sum(wanted, content_stems(text, language))
    annotated = _ANNOTATED.match(text.strip("`"))
    said = set(content_stems(annotated["note"], language)) if annotated else set()
    return _sum(wanted, said) + _sum(wanted, set(content_stems(text, language)) - said) / 2


def _score(
    sentence: Sentence, wanted: Mapping[str, float], page: frozenset[str], language: str
) -> float:
    own = _own_stems(sentence, wanted, language)
    heading = _sum(wanted, _stem_set(sentence.heading, language))
    # Opening a section named after the question: its stems count again, all of them more.
    every = _heading_stems(sentence, wanted, language) == len(wanted)
    opening = heading + every if _answers_section(sentence, wanted, page, language) else 0
    pointer = 1 if _POINTER.match(sentence.text) else 0
    return own + heading / 2 + opening - pointer


def split_sentences(text: str, *, heading: str = "") -> list[Sentence]:
    """Sentences, list items, table rows and code lines of a Markdown chunk, headings noted.

    `heading` is the heading the chunk starts under (a chunk cut from a long section
    shows none of its own until the next heading line).
    """
    units = _Units(heading)
    in_code = False
    columns: list[str] = []
    lines = [line.strip() for line in [*text.splitlines(), "", ""]]
    for stripped, after in itertools.pairwise(lines):
        kind = _line_kind(stripped, in_code=in_code)
        bullet = _BULLET.match(stripped) is not None
        if kind not in {"text", "code"} or bullet:
            units.end_paragraph(next_is_item=bullet)
        if kind == "fence":
            in_code = not in_code
        elif kind == "code":
            units.add("code", f"`{stripped}`")
        elif kind == "heading":
            units.start_section(stripped.lstrip("#").strip())
        elif kind == "row" and _TABLE_RULE.match(after):
            columns = _cells(stripped)
        elif kind == "row":
            units.add("row", _row(_cells(stripped), columns))
        elif kind == "text":
            units.paragraph.append(_BULLET.sub("", stripped))
    last = len(units.found) - 1
    return [
        Sentence(
            _tidy(piece, opening=index == 0, closing=kind in {"text", "item"} and index == last),
            where,
            index,
            code=kind == "code",
            item=kind in {"item", "row"},
            opening=first,
        )
        for index, (where, piece, kind, first) in enumerate(units.found)
    ]


class _Units:
    """The units found so far, the paragraph being read and the heading they fall under."""

    def __init__(self, heading: str) -> None:
        self.found: list[tuple[str, str, str, bool]] = []  # heading, text, kind, opening
        self.paragraph: list[str] = []
        self._heading = heading
        self._paragraph_kind = "text"
        self._opening = False  # the next unit is the first under a heading line of the chunk

    def add(self, kind: str, *pieces: str) -> None:
        for piece in pieces:
            self.found.append((self._heading, piece, kind, self._opening))
            self._opening = False

    def end_paragraph(self, *, next_is_item: bool) -> None:
        self.add(self._paragraph_kind, *_sentences(" ".join(self.paragraph)))
        self.paragraph.clear()
        self._paragraph_kind = "item" if next_is_item else "text"

    def start_section(self, heading: str) -> None:
        self._heading, self._opening = heading, True


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip("|").split("|")]


def _row(cells: list[str], columns: list[str]) -> str:
    """A table row as text: "first cell \u2014 column: cell; column: cell"."""
    pairs = itertools.zip_longest(columns[1:], cells[1:], fillvalue="")
    rest = [f"{column}: {cell}" if column else cell for column, cell in pairs if cell]
    return f"{cells[0]} \u2014 " + "; ".join(rest) if rest else cells[0]


def _line_kind(stripped: str, *, in_code: bool) -> str:
    """fence, code, blank, heading, row (of a table) or text."""
    if stripped.startswith("```"):
        return "fence"
    if in_code:
        return "code" if stripped else "blank"
    if not stripped or _TABLE_RULE.match(stripped):
        return "blank"
    if _HEADING.match(stripped):
        return "heading"
    return "row" if stripped.startswith("|") else "text"


def _sentences(paragraph: str) -> list[str]:
    if not paragraph.strip():
        return []
    pieces: list[str] = []
    carry = ""
    for piece in _split(paragraph):
        # "No." or "Yes." leads the sentence that follows
        if len(piece.split()) <= 2 and not _CJK_TEXT.search(piece):
            carry = f"{carry}{piece} "
            continue
        pieces.append(carry + piece)
        carry = ""
    if carry.strip() and pieces:
        pieces[-1] = f"{pieces[-1]} {carry.strip()}"  # "... runs it. It:" stays together
    elif carry.strip():
        pieces.append(carry.strip())
    return pieces


def _split(paragraph: str) -> list[str]:
    """`paragraph` cut where a sentence ends (see `_SENTENCE_END`)."""
    pieces: list[str] = []
    start = 0
    for found in _SENTENCE_END.finditer(paragraph):
        after = paragraph[found.end()]
        if paragraph[found.start() - 1] in _CJK_ENDS or after.isupper() or after in _OPENERS:
            pieces.append(paragraph[start : found.start()])
            start = found.end()
    pieces.append(paragraph[start:])
    return pieces


def _tidy(sentence: str, *, opening: bool, closing: bool) -> str:
    text = sentence.replace("**", "").strip()
    if opening and text[:1].islower():
        text = "…" + text  # the chunk starts mid-sentence
    if closing and text[-1:].isalnum():
        text += " \u2026"  # the chunk ends mid-sentence
    if len(text) > _MAX_SENTENCE:
        text = text[:_MAX_SENTENCE].rsplit(" ", 1)[0] + " …"
    return text


def _joint(before: Sentence, after: Sentence) -> str:
    if after.position != before.position + 1:
        return " \u2026 "
    return " " if before.text[-1:] in ".!?:;\u2026" else "; "


def join_quote(sentences: Sequence[Sentence]) -> list[str]:
    """The pieces of a quote: sentences in order, " \u2026 " where text was skipped and "; "
    after a unit without final punctuation (a table row, a list item)."""
    pieces = [sentences[0].text] if sentences else []
    pieces.extend(
        _joint(before, after) + after.text for before, after in itertools.pairwise(sentences)
    )
    return pieces
