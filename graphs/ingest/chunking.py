"""Split clean text into token-bounded, heading-aware chunks for embedding.

Tokens come from the embedding model's own tokenizer, passed in as a `TokenSpans`
callable that returns the character `(start, end)` of every token (no special tokens).
Each section is tokenized exactly once; windows are then cut on token offsets, so a
chunk is an exact slice of the text, never splits a token, and its `token_count` is exact.

Markdown is split into sections at ATX headings (`#` lines inside fenced code blocks
do not count; setext underlines are not headings here). Every chunk carries the
heading path of the section it came from.

Merging rule for small sections: a section is appended to the chunk being built only
when it lies *inside* that chunk's first section (its heading path extends the
chunk's path, e.g. `### Linux` under `## Install`) and the total still fits
`max_tokens`. The chunk keeps the path of its first section, which therefore names
the deepest heading that contains every line of the chunk; siblings are never merged
under a shortened path. Text before the first heading (empty path) absorbs nothing.

A section larger than `max_tokens` is cut into windows of at most `max_tokens` tokens
that overlap by up to `overlap_tokens`. Inside the second half of a window the latest
paragraph break is preferred, then a line break, then a sentence end, then any space;
only text without spaces (a long URL, CJK) is cut between arbitrary tokens. The next
window starts at a sentence or word start inside the overlap. If the chunk being
built is an ancestor of the large section, its text leads the first window instead
of standing alone as a heading-only chunk.

The tokenizer must not truncate or pad: `Tokenizer.no_truncation()` and
`no_padding()` (the MiniLM `tokenizer.json` enables both). Zero-width spans (padding)
are ignored, and spans that stop short of the text raise `ValueError`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Chunk", "Heading", "TokenSpans", "chunk_text", "iter_headings"]

TokenSpans = Callable[[str], Sequence[tuple[int, int]]]
"""Character `(start, end)` offsets of each token of a text, without special tokens."""

_MIN_MAX_TOKENS = 16
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^`]*)$")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SENTENCE_END = frozenset(".!?…")
_SENTENCE_END_NO_SPACE = frozenset("\u3002\uff01\uff1f")  # CJK full stop, ! and ?

# Ranks of a cut position, best last.
_ANY, _WORD, _SENTENCE, _LINE, _PARAGRAPH = range(5)

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a document, ready to embed."""

    index: int
    text: str
    heading_path: tuple[str, ...]
    token_count: int


@dataclass(frozen=True, slots=True)
class Heading:
    """An ATX heading of a markdown text: its level, its title and where its line starts."""

    level: int
    title: str
    start: int


@dataclass(frozen=True, slots=True)
class _Section:
    path: tuple[str, ...]
    spans: list[Span]  # absolute offsets into the whole text


def iter_headings(text: str) -> Iterator[Heading]:
    """Yield the ATX headings of `text` in order, skipping lines inside fenced code blocks."""
    fence: str | None = None
    pos = 0
    length = len(text)
    while pos < length:
        newline = text.find("\n", pos)
        end = length if newline == -1 else newline
        line = text[pos:end]
        if fence is not None:
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                fence = None
        elif opening := _FENCE_OPEN.match(line):
            fence = opening.group(1)
        elif (atx := _ATX.match(line)) and atx.group(2):
            yield Heading(level=len(atx.group(1)), title=atx.group(2).strip(), start=pos)
        pos = end + 1


def chunk_text(
    text: str,
    *,
    is_markdown: bool,
    token_spans: TokenSpans,
    max_tokens: int,
    overlap_tokens: int,
) -> list[Chunk]:
    """Cut `text` into chunks of at most `max_tokens` tokens, in document order."""
    if max_tokens < _MIN_MAX_TOKENS:
        raise ValueError(f"max_tokens must be at least {_MIN_MAX_TOKENS}, got {max_tokens}")
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError(
            f"overlap_tokens must be >= 0 and < max_tokens ({max_tokens}), got {overlap_tokens}"
        )
    builder = _ChunkBuilder(text, max_tokens, overlap_tokens)
    for section in _sections(text, is_markdown=is_markdown, token_spans=token_spans):
        builder.add(section)
    builder.flush()
    return builder.chunks


def _sections(text: str, *, is_markdown: bool, token_spans: TokenSpans) -> Iterator[_Section]:
    """Yield the non-empty sections of `text` with their heading paths and tokens."""
    bounds: list[tuple[int, tuple[str, ...]]] = [(0, ())]
    if is_markdown:
        stack: list[tuple[int, str]] = []
        for heading in iter_headings(text):
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            stack.append((heading.level, heading.title))
            bounds.append((heading.start, tuple(title for _, title in stack)))
    bounds.append((len(text), ()))
    for (start, path), (end, _) in itertools.pairwise(bounds):
        if start < end and (spans := _tokenize(text, start, end, token_spans)):
            yield _Section(path=path, spans=spans)


def _tokenize(text: str, start: int, end: int, token_spans: TokenSpans) -> list[Span]:
    """Tokenize `text[start:end]` once and return absolute, non-empty spans."""
    part = text[start:end]
    spans = [(start + s, start + e) for s, e in token_spans(part) if e > s]
    covered = spans[-1][1] - start if spans else 0
    if any(ch.isalnum() for ch in part[covered:]):
        raise ValueError(
            "token_spans stopped before the end of the text; "
            "disable truncation on the tokenizer (Tokenizer.no_truncation())"
        )
    return spans


class _ChunkBuilder:
    """Accumulates sections into chunks following the merging rule of this module."""

    def __init__(self, text: str, max_tokens: int, overlap_tokens: int) -> None:
        self._text = text
        self._max = max_tokens
        self._overlap = overlap_tokens
        self._pending: _Section | None = None
        self.chunks: list[Chunk] = []

    def add(self, section: _Section) -> None:
        pending = self._pending
        inside = pending is not None and _is_inside(section.path, pending.path)
        if len(section.spans) > self._max:
            lead = pending if inside else None
            if not inside:
                self.flush()
            self._pending = None
            self._emit_windows(section, lead)
        elif (
            pending is not None and inside and len(pending.spans) + len(section.spans) <= self._max
        ):
            self._pending = _Section(path=pending.path, spans=pending.spans + section.spans)
        else:
            self.flush()
            self._pending = section

    def flush(self) -> None:
        if self._pending is not None:
            self._emit(self._pending.spans, self._pending.path)
            self._pending = None

    def _emit_windows(self, section: _Section, lead: _Section | None) -> None:
        spans = section.spans if lead is None else lead.spans + section.spans
        lead_count = 0 if lead is None else len(lead.spans)
        for first, stop in _windows(self._text, spans, self._max, self._overlap):
            path = section.path if lead is None or first >= lead_count else lead.path
            self._emit(spans[first:stop], path)

    def _emit(self, spans: list[Span], path: tuple[str, ...]) -> None:
        text = self._text[spans[0][0] : spans[-1][1]]
        self.chunks.append(
            Chunk(index=len(self.chunks), text=text, heading_path=path, token_count=len(spans))
        )


def _is_inside(path: tuple[str, ...], ancestor: tuple[str, ...]) -> bool:
    return 0 < len(ancestor) < len(path) and path[: len(ancestor)] == ancestor


def _windows(text: str, spans: list[Span], max_tokens: int, overlap: int) -> Iterator[Span]:
    """Yield `(first, stop)` token index ranges covering `spans`, overlapping by <= overlap."""
    count = len(spans)
    first = 0
    while count - first > max_tokens:
        lowest = first + max(max_tokens // 2, overlap + 1)
        stop = _best_cut(text, spans, lowest, first + max_tokens)
        yield first, stop
        first = _overlap_start(text, spans, stop, overlap)
    yield first, count


def _best_cut(text: str, spans: list[Span], lowest: int, highest: int) -> int:
    """Return the latest best-ranked cut in [lowest, highest]; a cut c splits tokens c-1|c."""
    best = [-1] * (_PARAGRAPH + 1)
    for cut in range(highest, lowest - 1, -1):
        rank = _cut_rank(text, spans[cut - 1][1], spans[cut][0])
        if best[rank] < 0:
            best[rank] = cut
            if rank == _PARAGRAPH:
                break
    return next((cut for cut in reversed(best) if cut >= 0), highest)


def _cut_rank(text: str, prev_end: int, next_start: int) -> int:
    if prev_end == next_start:
        return _SENTENCE if text[prev_end - 1] in _SENTENCE_END_NO_SPACE else _ANY
    gap = text[prev_end:next_start]
    newlines = gap.count("\n")
    if newlines >= 2:
        return _PARAGRAPH
    if newlines == 1:
        return _LINE
    last = text[prev_end - 1]
    return _SENTENCE if last in _SENTENCE_END or last in _SENTENCE_END_NO_SPACE else _WORD


def _overlap_start(text: str, spans: list[Span], stop: int, overlap: int) -> int:
    """First token of the next window: at most `overlap` tokens back from `stop`.

    A sentence start in the first half of that range wins (keeping at least half the
    overlap), else the earliest word start; with no word start in range, no overlap.
    """
    if overlap == 0:
        return stop
    target = stop - overlap
    word_start = -1
    for index in range(target, stop):
        rank = _cut_rank(text, spans[index - 1][1], spans[index][0])
        if rank >= _SENTENCE and index <= target + overlap // 2:
            return index
        if rank >= _WORD and word_start < 0:
            word_start = index
    return word_start if word_start >= 0 else stop
