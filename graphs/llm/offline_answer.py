"""Extractive answers: read a turn's tool results and quote the best sentences with citations.

Passages below the relevance threshold never reach an answer, nor do passages that hold
too little of the question's content words (`coverage`, the "near miss" gate); with
nothing left the answer is a recognisable refusal (`is_refusal`). Relevance chooses the
candidates: every passage within `MARGIN` of the best relevance, plus any other passage
above the threshold whose quote matches the question clearly better. How well each one's
quote matches the question then chooses which lead and which are quoted (at most
`MAX_PASSAGES`), so a passage ranked fourth by cosine but holding the question's words
is not cut before its quote is read. A question that asks for a number or a choice among
values gets a quote holding one when the others hold none. Each quoted passage gives the
one or two sentences that best match the question (`graphs.llm.offline_quotes`), quoted
verbatim apart from Markdown markers, with the document title and "[ref]"; a passage in
another language than the question's is quoted from its start. The words around the
quotes, refusals, approval outcomes and apologies are in the question's language
(`graphs.llm.offline_language`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from graphs.llm.data_blocks import unwrap_data
from graphs.llm.offline_cues import AnswerKind, answer_kind, looks_like
from graphs.llm.offline_language import DEFAULT_LANGUAGE, Phrases, phrases
from graphs.llm.offline_quotes import (
    Sentence,
    join_quote,
    pick_sentences,
    split_sentences,
    stem_weights,
)
from graphs.llm.offline_stems import content_stems
from graphs.llm.types import ChatMessage
from storage.text_language import detect_language

__all__ = [
    "MARGIN",
    "MAX_PASSAGES",
    "REFUSAL_TEXT",
    "Answer",
    "Exchange",
    "Source",
    "ToolResults",
    "coverage",
    "read_tool_results",
    "refusal",
    "search_answer",
]

#: At most this many passages are quoted in one answer.
MAX_PASSAGES = 3
#: A passage is quoted only if its relevance is within this much of the best passage's.
MARGIN = 0.1
REFUSAL_TEXT = phrases(DEFAULT_LANGUAGE).refusal
#: A passage in another language than the question's gets its first units quoted, up to
#: this many characters: its words cannot be matched with the question's.
_FOREIGN_QUOTE_CHARS = 360


@dataclass(frozen=True, slots=True)
class Source:
    """One citable passage (search result) or document (get_entry result) of this turn."""

    ref: int
    document_id: str
    title: str
    source: str
    section: str
    text: str
    relevance: float
    private: bool


@dataclass(frozen=True, slots=True)
class Exchange:
    """One past question and answer a search_memory result showed, citable by `ref`."""

    ref: int
    when: str
    question: str
    answer: str
    relevance: float


@dataclass(frozen=True, slots=True)
class ToolResults:
    """Everything the tools returned since the last user message."""

    passages: tuple[Source, ...] = ()
    documents: tuple[Source, ...] = ()
    outcomes: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    errors: tuple[str, ...] = ()
    tools_run: frozenset[str] = frozenset()
    exchanges: tuple[Exchange, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    """An answer as the pieces it is streamed in, and why it ended."""

    parts: tuple[str, ...]
    finish_reason: str = "stop"

    @property
    def text(self) -> str:
        """The whole answer."""
        return "".join(self.parts)


def read_tool_results(messages: Sequence[ChatMessage]) -> ToolResults:
    """Parse the tool messages among `messages` (the current turn); bad JSON is an error."""
    passages: dict[int, Source] = {}
    documents: dict[int, Source] = {}
    exchanges: dict[int, Exchange] = {}
    outcomes: list[tuple[str, Mapping[str, Any]]] = []
    errors: list[str] = []
    run: set[str] = set()
    for message in messages:
        if message.role != "tool":
            continue
        name = message.name or ""
        run.add(name)
        payload = _json_object(message.content)
        if payload is None or "error" in payload:
            errors.append(_error_text(payload))
        elif _collect_lists(payload, name, passages, exchanges):
            pass
        elif (source := _source(payload.get("document"), private=False)) is not None:
            documents.setdefault(source.ref, source)
        elif "status" in payload:
            outcomes.append((name, payload))
    return ToolResults(
        passages=tuple(passages.values()),
        documents=tuple(documents.values()),
        outcomes=tuple(outcomes),
        errors=tuple(dict.fromkeys(errors)),
        tools_run=frozenset(run),
        exchanges=tuple(exchanges.values()),
    )


def _collect_lists(
    payload: Mapping[str, Any],
    tool: str,
    passages: dict[int, Source],
    exchanges: dict[int, Exchange],
) -> bool:
    """Add a search result's passages or exchanges; False if `payload` is neither."""
    if isinstance(payload.get("passages"), list):
        for item in payload["passages"]:
            if (source := _source(item, private=tool == "search_private")) is not None:
                passages.setdefault(source.ref, source)
        return True
    if isinstance(payload.get("exchanges"), list):
        for item in payload["exchanges"]:
            if (exchange := _exchange(item)) is not None:
                exchanges.setdefault(exchange.ref, exchange)
        return True
    return False


def _exchange(item: object) -> Exchange | None:
    if not isinstance(item, dict) or not isinstance(item.get("ref"), int):
        return None
    relevance = item.get("relevance")
    return Exchange(
        ref=item["ref"],
        when=str(item.get("when") or ""),
        question=str(item.get("question") or ""),
        answer=str(item.get("answer") or ""),
        relevance=float(relevance) if isinstance(relevance, int | float) else 0.0,
    )


def _error_text(payload: Mapping[str, Any] | None) -> str:
    if payload is None:
        return "a tool returned something I could not read."
    return str(payload["error"])


def _json_object(content: str) -> dict[str, Any] | None:
    try:
        payload = json.loads(unwrap_data(content))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def _source(item: object, *, private: bool) -> Source | None:
    if not isinstance(item, dict) or not isinstance(item.get("ref"), int):
        return None
    relevance = item.get("relevance")
    return Source(
        ref=item["ref"],
        document_id=str(item.get("document_id", "")),
        title=str(item.get("title") or "untitled"),
        source=str(item.get("source") or ""),
        section=str(item.get("section") or ""),
        text=str(item.get("text") or ""),
        # Fail closed: a passage without a relevance can never carry an answer.
        relevance=float(relevance) if isinstance(relevance, int | float) else 0.0,
        private=bool(item.get("private", private)),
    )


def refusal(
    *, searched_private: bool, group_note: bool, language: str = DEFAULT_LANGUAGE
) -> Answer:
    """The polite "not found" answer (finish reason "refusal"), in `language`."""
    words = phrases(language)
    text = words.refusal_with_notes if searched_private else words.refusal
    parts = (text, " " + words.group_note) if group_note else (text,)
    return Answer(parts, "refusal")


def search_answer(
    question: str,
    passages: Sequence[Source],
    *,
    threshold: float,
    group_note: bool,
    min_coverage: float = 0.0,
    max_chars: int = 4096,
    language: str = DEFAULT_LANGUAGE,
) -> Answer | None:
    """Quotes from the best passages at or above `threshold`, or None when there are none.

    An extractive answer needs words to extract by: when the passages in the question's
    `language` hold less than `min_coverage` of the question's content stems, there is
    nothing to quote (None). Passages in another language share no words with the
    question: when only such passages are at the top, relevance alone decides, and each
    is quoted from its start (`_FOREIGN_QUOTE_CHARS`).

    Of the top passages by relevance, the one whose quote matches the question best
    leads; another is quoted only if its quote scores at least 1 and a third of the leader's.
    Passages after the first are left out once the answer would pass `max_chars`.
    """
    best = _best_passages(passages, threshold)
    alike = [p for p in best if _written_in(p, language)]
    if alike and coverage(question, alike, language) < min_coverage:
        return None
    above = [p for p in passages if p.relevance >= threshold]
    picks = _picks(question, best, above, language)
    words = phrases(language)
    parts: list[str] = []
    quoted: set[str] = set()
    titles: set[str] = set()
    for sentences, score, passage in picks:
        fresh = [s for s in sentences if s.text not in quoted]
        size = sum(map(len, parts)) + sum(len(s.text) for s in fresh)
        if parts and (not fresh or score < 1 or score * 3 < picks[0][1] or size > max_chars):
            continue
        quoted.update(s.text for s in fresh)
        lead = _lead(passage, fresh[0], words, first=not parts, seen=passage.title in titles)
        titles.add(passage.title)
        first, *rest = join_quote(fresh)
        parts.append(("\n" if parts else "") + f"{lead}{words.quote_open}{first}")
        parts.extend(rest)
        parts.append(f"{words.quote_close} [{passage.ref}]")
    if not parts:
        return None
    if group_note:
        parts.append("\n" + words.group_note)
    return Answer(tuple(parts))


def coverage(question: str, passages: Sequence[Source], language: str = DEFAULT_LANGUAGE) -> float:
    """The share of the question's content stems found in the passages (1.0 when it has none)."""
    wanted = set(content_stems(question, language))
    if not wanted:
        return 1.0
    found: set[str] = set()
    for passage in passages:
        found.update(content_stems(f"{passage.title} {passage.section} {passage.text}", language))
    return len(wanted & found) / len(wanted)


def _written_in(passage: Source, language: str) -> bool:
    """Whether the passage reads as `language` (or as no language at all: a table, code)."""
    found = detect_language(passage.text)
    return found is None or found == language


Pick = tuple[list[Sentence], float, Source]


def _picks(
    question: str, best: Sequence[Source], above: Sequence[Source], language: str
) -> list[Pick]:
    """The quotes of the `best` passages, and of any other passage `above` the threshold
    whose quote scores at least one more than all of theirs (it holds a word of the
    question they lack), best quote first; at most `MAX_PASSAGES`. When the question asks
    for a number or a choice among values that none of these quotes holds, the best
    other quote that holds one comes too (`_of_the_kind`). A passage in another language
    than the question's is quoted from its start, with score 0."""

    weights = stem_weights(question, [p.text for p in above], language)

    def pick(passage: Source) -> Pick:
        if not _written_in(passage, language):
            return _opening(passage), 0.0, passage
        section = passage.section.rsplit(" > ", 1)[-1]
        quote = pick_sentences(
            question,
            passage.text,
            section=section,
            title=passage.title,
            weights=weights,
            language=language,
        )
        return (*quote, passage)

    picks = [pick(p) for p in best]
    bar = max((score for _, score, _ in picks), default=0.0)
    chosen = {p.ref for p in best}
    others = [pick(p) for p in above if p.ref not in chosen and p.text.strip()]
    picks.extend(candidate for candidate in others if candidate[1] >= bar + 1)
    picks.sort(key=lambda item: (-item[1], -item[2].relevance, item[2].ref))
    kept = picks[:MAX_PASSAGES]
    extra = _of_the_kind(answer_kind(question), kept, [*picks[MAX_PASSAGES:], *others])
    if extra is not None:  # it takes the last place when every place is taken
        kept = [*kept[: MAX_PASSAGES - 1], extra] if len(kept) == MAX_PASSAGES else [*kept, extra]
    return kept


def _opening(passage: Source) -> list[Sentence]:
    """The passage's first units, up to `_FOREIGN_QUOTE_CHARS` (at least one)."""
    units = split_sentences(passage.text, heading=passage.section.rsplit(" > ", 1)[-1])
    kept: list[Sentence] = []
    for unit in units:
        if kept and sum(len(s.text) for s in kept) + len(unit.text) > _FOREIGN_QUOTE_CHARS:
            break
        kept.append(unit)
    return kept


#: Kinds of answer whose shape is unmistakable (a digit; `a`, `b` or `c`): a quote without
#: one does not answer the question. A place or a command is too loose a shape to insist on.
_INSISTED = frozenset({AnswerKind.NUMBER, AnswerKind.CHOICE})


def _of_the_kind(kind: AnswerKind, kept: Sequence[Pick], rest: Sequence[Pick]) -> Pick | None:
    """The best quote of `rest` that holds an answer of `kind` and may follow the leading
    quote (it scores at least 1 and a third of the leader's), when no `kept` quote does."""

    def holds(item: Pick) -> bool:
        return any(looks_like(kind, sentence.text) for sentence in item[0])

    if kind not in _INSISTED or not kept or any(map(holds, kept)):
        return None
    lead = kept[0][1]
    fitting = [item for item in rest if holds(item) and item[1] >= 1 and item[1] * 3 >= lead]
    return max(fitting, key=lambda item: (item[1], item[2].relevance), default=None)


def _best_passages(passages: Sequence[Source], threshold: float) -> list[Source]:
    ranked = sorted(
        (p for p in passages if p.relevance >= threshold and p.text.strip()),
        key=lambda p: (-p.relevance, p.ref),
    )
    if not ranked:
        return []
    floor = ranked[0].relevance - MARGIN
    return [p for p in ranked if p.relevance >= floor]


def _lead(passage: Source, sentence: Sentence, words: Phrases, *, first: bool, seen: bool) -> str:
    if seen:
        template = words.again_note if passage.private else words.again_document
    elif first:
        template = words.from_note if passage.private else words.from_document
    else:
        template = words.also_note if passage.private else words.also_document
    section = sentence.heading or passage.section.rsplit(" > ", 1)[-1]
    where = words.section.format(section=section) if section and section != passage.title else ""
    return template.format(title=passage.title) + where
