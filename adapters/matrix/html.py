"""Lore's replies as Matrix messages: a plain `body` and its `formatted_body` in the HTML
subset Matrix clients render (`org.matrix.custom.html`), and long answers split to fit an
event.

Every character of user, model or document text is escaped, so only Lore's own markup
formats. Nothing in an answer can call anyone: `@room` is broken by a word joiner (every
message also says `m.mentions: {}`, see `outbox`) and no pill (a matrix.to link) is ever
made. In an answer only the cited sources are links; any other URL is shown as code, which
clients neither linkify nor preview (invariant 9).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.events import CitationEvent
from bot.replies import Rich, Style
from bot.turn_view import FinalAnswer

__all__ = ["MAX_PART_BYTES", "Formatted", "plain", "render_final", "render_rich"]

# An event holds at most 64 KiB; an edit carries the text twice (fallback and new content).
MAX_PART_BYTES = 12_000
_ROOM = re.compile(r"@room\b", re.IGNORECASE)
_URL = re.compile(r"https?://[^\s<>`\"]+", re.IGNORECASE)
_URL_TAIL = ".,;:!?)]}'"
_MARKUP = re.compile(
    r"`(?P<code>[^`\n]+)`|\*\*(?=\S)(?P<bold>.+?)(?<=\S)\*\*|\[(?P<ref>\d{1,3})\]"
    r"|(?P<url>https?://[^\s<>`\"]+)",
    re.IGNORECASE,
)
_WORD_JOINER = "\u2060"


@dataclass(frozen=True, slots=True)
class Formatted:
    """One message's text: plain, and as Matrix HTML."""

    body: str
    html: str

    def __add__(self, other: Formatted) -> Formatted:
        return Formatted(self.body + other.body, self.html + other.html)

    @property
    def size(self) -> int:
        """Bytes the text takes in an event (both forms)."""
        return len(self.body.encode()) + len(self.html.encode())


def _quiet(text: str) -> str:
    """Text that mentions nobody: `@room` loses its power."""
    return _ROOM.sub(lambda match: "@" + _WORD_JOINER + match.group(0)[1:], text)


def _escape(text: str) -> str:
    return html.escape(_quiet(text), quote=False).replace("\n", "<br>")


def _href(url: str) -> str:
    return html.escape(url, quote=True)


def plain(text: str) -> Formatted:
    """Text shown exactly as written."""
    return Formatted(_quiet(text), _escape(text))


def _span(text: str, style: Style, url: str | None = None) -> Formatted:
    shown = _quiet(text)
    if style is Style.BOLD:
        return Formatted(shown, f"<b>{_escape(text)}</b>")
    if style is Style.ITALIC:
        return Formatted(shown, f"<i>{_escape(text)}</i>")
    if style is Style.CODE:
        return Formatted(shown, f"<code>{_escape(text)}</code>")
    if style is Style.LINK and url:
        body = shown if shown == url else f"{shown} ({url})"
        return Formatted(body, f'<a href="{_href(url)}">{_escape(text)}</a>')
    return plain(text)


def _join(parts: Iterable[Formatted]) -> Formatted:
    return sum(parts, Formatted("", ""))


def render_rich(body: Rich) -> Formatted:
    """Lore's rich text (its own words and what people typed)."""
    return _join(_span(span.text, span.style, span.url) for span in body)


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _model_text(text: str, citations: dict[int, CitationEvent], links: frozenset[str]) -> Formatted:
    """A model's answer: `**bold**`, `` `code` `` and `[n]` kept; a URL is a link only if it is
    a cited source, else code."""
    parts: list[Formatted] = []
    position = 0
    for match in _MARKUP.finditer(text):
        parts.append(plain(text[position : match.start()]))
        position = match.end()
        if match.group("code") is not None:
            parts.append(_span(match.group("code"), Style.CODE))
        elif match.group("bold") is not None:
            parts.append(_span(match.group("bold"), Style.BOLD))
        elif match.group("url") is not None:
            url = match.group("url").rstrip(_URL_TAIL)
            position = match.start() + len(url)
            linked = url in links
            parts.append(_span(url, Style.LINK, url) if linked else _span(url, Style.CODE))
        else:
            citation = citations.get(int(match.group("ref")))
            marker = match.group(0)
            if citation is not None and _is_url(citation.source):
                parts.append(Formatted(marker, f'<a href="{_href(citation.source)}">{marker}</a>'))
            else:
                parts.append(plain(marker))
    parts.append(plain(text[position:]))
    return _join(parts)


def _source_line(citation: CitationEvent) -> Formatted:
    title = citation.title or citation.source
    line = plain(f"[{citation.ref}] ")
    if _is_url(citation.source):
        line += _span(title, Style.LINK, citation.source)
    else:
        line += plain(title)
    if citation.private:
        line += plain(" ") + _span("(private)", Style.ITALIC)
    return line


def _paragraphs(text: str) -> list[str]:
    return [part for part in re.split(r"\n\s*\n", text) if part.strip()]


def _cut(text: str, limit: int) -> list[str]:
    """A paragraph longer than `limit` bytes, cut at spaces where it can."""
    pieces: list[str] = []
    while len(text.encode()) > limit:
        cut = len(text.encode()[:limit].decode(errors="ignore"))
        space = text.rfind(" ", 0, cut)
        cut = space + 1 if space > cut // 2 else cut
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


def _blocks(final: FinalAnswer) -> list[Formatted]:
    citations = {citation.ref: citation for citation in final.citations}
    links = frozenset(c.source for c in final.citations if _is_url(c.source))
    blocks = [
        _model_text(piece, citations, links)
        for paragraph in _paragraphs(final.text.strip())
        for piece in _cut(paragraph, MAX_PART_BYTES // 4)
    ]
    if final.citations:
        sources = _span("Sources", Style.BOLD)
        for citation in final.citations:
            sources += Formatted("\n", "<br>") + _source_line(citation)
        blocks.append(sources)
    return blocks or [plain("…")]


def _pack(blocks: Sequence[Formatted]) -> list[Formatted]:
    parts: list[Formatted] = []
    current: Formatted | None = None
    for block in blocks:
        paragraph = Formatted(block.body, f"<p>{block.html}</p>")
        if current is not None and current.size + paragraph.size + 2 <= MAX_PART_BYTES:
            current = current + Formatted("\n\n", "") + paragraph
            continue
        if current is not None:
            parts.append(current)
        current = paragraph
    if current is not None:
        parts.append(current)
    return parts


def render_final(final: FinalAnswer) -> list[Formatted]:
    """The final answer, its citations linked to URL sources, then its numbered sources; in
    as many messages as it needs (almost always one)."""
    return _pack(_blocks(final))
