"""Lore's replies as Telegram HTML: rich text, the final answer with numbered citations, and
message splitting.

Telegram counts a message's length after entity parsing, in UTF-16 code units, at most
4096. `split_html` cuts HTML there (at a line break or space when it can), closing the
open tags at the end of a part and opening them again at the start of the next, so
every part is valid HTML on its own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from bot.events import CitationEvent
from bot.replies import Rich, Style
from bot.turn_view import FinalAnswer, source_label

__all__ = [
    "MAX_MESSAGE",
    "escape",
    "render_final",
    "render_rich",
    "split_html",
    "visible_length",
]

MAX_MESSAGE = 4096

_TOKEN = re.compile(r"<[^>]*>|&(?:#\d+|#x[0-9a-fA-F]+|[a-zA-Z]+);|[^<&]+|[<&]")
_TAG_NAME = re.compile(r"</?\s*([a-zA-Z0-9-]+)")
_CITATION = re.compile(r"\[(\d{1,3})\]")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_CODE = re.compile(r"`([^`\n]+)`")


def escape(text: str) -> str:
    """Plain text made safe for Telegram HTML."""
    return html.escape(text, quote=False)


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def visible_length(markup: str) -> int:
    """What Telegram counts: the text after entity parsing, in UTF-16 code units."""
    total = 0
    for token in _TOKEN.findall(markup):
        if token.startswith("<") and len(token) > 1:
            continue
        total += _units(html.unescape(token)) if token.startswith("&") else _units(token)
    return total


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _link(citation: CitationEvent, label: str) -> str:
    href = html.escape(citation.source, quote=True)
    return f'<a href="{href}">{label}</a>'


def _inline(text: str, citations: dict[int, CitationEvent]) -> str:
    body = escape(text)
    body = _CODE.sub(r"<code>\1</code>", body)
    body = _BOLD.sub(r"<b>\1</b>", body)

    def cite(match: re.Match[str]) -> str:
        citation = citations.get(int(match.group(1)))
        if citation is None or not _is_url(citation.source):
            return match.group(0)
        return _link(citation, match.group(0))

    return _CITATION.sub(cite, body)


def _sources(citations: Sequence[CitationEvent]) -> str:
    lines = ["<b>Sources</b>"]
    for citation in citations:
        title = escape(source_label(citation))
        label = _link(citation, title) if _is_url(citation.source) else title
        scope = " <i>(private)</i>" if citation.private else ""
        lines.append(f"[{citation.ref}] {label}{scope}")
    return "\n".join(lines)


def render_final(final: FinalAnswer) -> str:
    """The final answer as Telegram HTML: text with linked citations, then its sources."""
    citations = {citation.ref: citation for citation in final.citations}
    text = final.text.strip()
    body = _inline(text, citations) if text else ""
    if final.citations:
        body = f"{body}\n\n{_sources(final.citations)}" if body else _sources(final.citations)
    return body or "…"


def render_rich(body: Rich) -> str:
    """Lore's rich text as Telegram HTML."""
    out = []
    for span in body:
        text = escape(span.text)
        if span.style is Style.BOLD:
            out.append(f"<b>{text}</b>")
        elif span.style is Style.ITALIC:
            out.append(f"<i>{text}</i>")
        elif span.style is Style.CODE:
            out.append(f"<code>{text}</code>")
        elif span.style is Style.LINK and span.url:
            out.append(f'<a href="{html.escape(span.url, quote=True)}">{text}</a>')
        else:
            out.append(text)
    return "".join(out)


def _tag_name(tag: str) -> str:
    match = _TAG_NAME.match(tag)
    return match.group(1).lower() if match else ""


def _cut_point(text: str, budget: int) -> int:
    """How many characters of `text` fit in `budget` units, preferring a break at whitespace."""
    fits = 0
    used = 0
    for index, char in enumerate(text):
        used += _units(char)
        if used > budget:
            break
        fits = index + 1
    if fits >= len(text):
        return fits
    for separator in ("\n", " "):
        position = text.rfind(separator, 0, fits)
        if position > fits // 2:
            return position + 1
    return fits


class _Splitter:
    """Accumulates HTML tokens into parts of at most `limit` visible units."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.current: list[str] = []
        self.used = 0
        self.open_tags: list[str] = []

    def close_part(self) -> None:
        closing = "".join(f"</{_tag_name(tag)}>" for tag in reversed(self.open_tags))
        part = "".join(self.current) + closing
        if visible_length(part) > 0:
            self.parts.append(part)
        self.current = list(self.open_tags)
        self.used = 0

    def tag(self, token: str) -> None:
        if token.startswith("</"):
            name = _tag_name(token)
            for index in range(len(self.open_tags) - 1, -1, -1):
                if _tag_name(self.open_tags[index]) == name:
                    del self.open_tags[index]
                    break
        elif not token.endswith("/>"):
            self.open_tags.append(token)
        self.current.append(token)

    def atom(self, token: str, size: int) -> None:
        if self.used + size > self.limit:
            self.close_part()
        self.current.append(token)
        self.used += size

    def text(self, token: str) -> None:
        while token:
            take = _cut_point(token, self.limit - self.used)
            if take == 0:
                if self.used == 0:  # a single character wider than the limit: keep it whole
                    take = 1
                else:
                    self.close_part()
                    continue
            self.current.append(token[:take])
            self.used += _units(token[:take])
            token = token[take:]
            if token:
                self.close_part()


def split_html(markup: str, limit: int = MAX_MESSAGE) -> list[str]:
    """`markup` cut into parts of at most `limit` visible UTF-16 units, each valid on its own."""
    if visible_length(markup) <= limit:
        return [markup]
    splitter = _Splitter(limit)
    for token in _TOKEN.findall(markup):
        if token.startswith("<") and len(token) > 1:
            splitter.tag(token)
        elif token.startswith("&") and len(token) > 1:
            splitter.atom(token, _units(html.unescape(token)))
        else:
            splitter.text(token)
    splitter.close_part()
    return splitter.parts
