"""Lore's replies as Discord markdown: rich spans, the final answer with numbered citations and
masked links, and splitting at Discord's 2,000 characters without breaking formatting.

Text is first cut into pieces (plain, bold, italic, code, link), each rendered on its own:
every character of user, model or document text that Discord would read as markup is
escaped, so only Lore's own markup formats. Links are masked links with the URL in angle
brackets (`[title](<url>)`) or bare `<url>`s, which Discord never unfurls. In a model answer
a URL is a link only if it is a cited source or in the asker's own message; any other URL is
shown as code, which Discord does not make clickable (invariant 9). Splitting packs whole
pieces into messages and cuts a long piece at a line break or space into pieces of the
same style, so no part ever holds half of a `**bold**` or of a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from bot.events import CitationEvent
from bot.replies import Rich, Style
from bot.turn_view import FinalAnswer, source_label

__all__ = [
    "MAX_MESSAGE",
    "Piece",
    "escape",
    "final_pieces",
    "render",
    "render_final",
    "render_rich",
    "rich_pieces",
    "split",
    "units",
]

MAX_MESSAGE = 2000

_ESCAPED = re.compile(r"([\\*_~|`\[\]<@])")
_LINE_START = re.compile(r"(?m)^([ \t]*)([-#>]|\d+\.)")
_URL = re.compile(r"https?://[^\s<>`\"]+", re.IGNORECASE)
_URL_TAIL = ".,;:!?)]}'"
_MODEL_MARKUP = re.compile(
    r"`(?P<code>[^`\n]+)`|\*\*(?=\S)(?P<bold>.+?)(?<=\S)\*\*|\[(?P<ref>\d{1,3})\]"
)
_WRAPS = {Style.BOLD: "**", Style.ITALIC: "*"}
_JOINERS = set("*_~`|")
_ZERO_WIDTH = "\u200b"


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of text in one style. A link piece whose text is its URL renders as `<url>`."""

    text: str
    style: Style = Style.PLAIN
    url: str | None = None


def units(text: str) -> int:
    """A message's length as Discord's limit counts it, never less (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def escape(text: str) -> str:
    """Text that Discord shows exactly as written (no formatting, mention or list)."""
    return _LINE_START.sub(r"\1\\\2", _ESCAPED.sub(r"\\\1", text))


def _href(url: str) -> str:
    return quote(url, safe=":/?#@!$&'*+,;=%-._~[]")


def _code(text: str) -> str:
    return "`" + (text.replace("`", "\u02cb") or " ") + "`"  # a backtick cannot be escaped


def render(piece: Piece) -> str:
    """One piece as Discord markdown."""
    if piece.style is Style.CODE:
        return _code(piece.text)
    if piece.style is Style.LINK and piece.url:
        if piece.text == piece.url:
            return f"<{_href(piece.url)}>"
        return f"[{escape(piece.text)}](<{_href(piece.url)}>)"
    wrap = _WRAPS.get(piece.style, "")
    return f"{wrap}{escape(piece.text)}{wrap}"


def _join(rendered: Iterable[str]) -> str:
    """Rendered pieces side by side; a zero-width space keeps `**a***b*` from merging."""
    out = ""
    for text in rendered:
        if out and text and out[-1] in _JOINERS and text[0] in _JOINERS:
            out += _ZERO_WIDTH
        out += text
    return out


def _urls_split(text: str, style: Style, allowed: frozenset[str] | None) -> list[Piece]:
    """`text` in `style`, with each URL its own piece: a link if allowed (None: all), else code."""
    pieces: list[Piece] = []
    position = 0
    for match in _URL.finditer(text):
        url = match.group(0).rstrip(_URL_TAIL)
        start, end = match.start(), match.start() + len(url)
        if start > position:
            pieces.append(Piece(text[position:start], style))
        linked = allowed is None or url in allowed
        pieces.append(Piece(url, Style.LINK, url) if linked else Piece(url, Style.CODE))
        position = end
    if position < len(text):
        pieces.append(Piece(text[position:], style))
    return pieces


def rich_pieces(body: Rich) -> list[Piece]:
    """Lore's rich text (the core's own words and what people typed) as pieces."""
    pieces: list[Piece] = []
    for span in body:
        if span.style is Style.LINK and span.url:
            pieces.append(Piece(span.text, Style.LINK, span.url))
        elif span.style in {Style.PLAIN, Style.BOLD, Style.ITALIC}:
            pieces.extend(_urls_split(span.text, span.style, None))
        else:
            pieces.append(Piece(span.text, span.style))
    return [piece for piece in pieces if piece.text]


def render_rich(body: Rich) -> str:
    """Rich text as one Discord markdown string (unsplit)."""
    return _join(render(piece) for piece in rich_pieces(body))


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _model_text(
    text: str,
    citations: dict[int, CitationEvent],
    allowed: frozenset[str],
    style: Style = Style.PLAIN,
) -> list[Piece]:
    """A model's answer: `**bold**`, `` `code` `` and `[n]` markers kept, the rest in `style`."""
    pieces: list[Piece] = []
    position = 0
    for match in _MODEL_MARKUP.finditer(text):
        pieces += _urls_split(text[position : match.start()], style, allowed)
        position = match.end()
        if match.group("code") is not None:
            pieces.append(Piece(match.group("code"), Style.CODE))
        elif match.group("bold") is not None:
            pieces += _model_text(match.group("bold"), citations, allowed, Style.BOLD)
        else:
            citation = citations.get(int(match.group("ref")))
            marker = match.group(0)
            if citation is not None and _is_url(citation.source):
                pieces.append(Piece(marker, Style.LINK, citation.source))
            else:
                pieces.append(Piece(marker, style))
    pieces += _urls_split(text[position:], style, allowed)
    return pieces


def _sources(citations: Sequence[CitationEvent]) -> list[Piece]:
    pieces = [Piece("Sources", Style.BOLD)]
    for citation in citations:
        title = source_label(citation)
        pieces.append(Piece(f"\n[{citation.ref}] "))
        if _is_url(citation.source):
            pieces.append(Piece(title, Style.LINK, citation.source))
        else:
            pieces.append(Piece(title))
        if citation.private:
            pieces += [Piece(" "), Piece("(private)", Style.ITALIC)]
    return pieces


def final_pieces(final: FinalAnswer, asked: str = "") -> list[Piece]:
    """The final answer: text with linked citations, then its numbered sources. URLs may be
    links only if cited or written by the asker (`asked`)."""
    citations = {citation.ref: citation for citation in final.citations}
    allowed = frozenset(c.source for c in final.citations if _is_url(c.source))
    allowed |= frozenset(match.group(0).rstrip(_URL_TAIL) for match in _URL.finditer(asked))
    pieces = _model_text(final.text.strip(), citations, allowed)
    if final.citations:
        if pieces:
            pieces.append(Piece("\n\n"))
        pieces += _sources(final.citations)
    pieces = [piece for piece in pieces if piece.text]
    return pieces or [Piece("…")]


def render_final(final: FinalAnswer, asked: str = "") -> list[str]:
    """The final answer as Discord messages of at most 2,000 characters each."""
    return split(final_pieces(final, asked))


def _fits(piece: Piece, budget: int) -> int:
    """How many characters of `piece.text` render within `budget`, cut at a break if possible."""
    low, high = 0, len(piece.text)
    while low < high:  # the longest prefix that renders within the budget
        middle = (low + high + 1) // 2
        if units(render(Piece(piece.text[:middle], piece.style, piece.url))) <= budget:
            low = middle
        else:
            high = middle - 1
    if low >= len(piece.text) or low == 0:
        return low
    for separator in ("\n", " "):
        position = piece.text.rfind(separator, 0, low)
        if position > low // 2:
            return position + 1
    return low


class _Packer:
    """Whole pieces into parts of at most `limit` units."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.current: list[str] = []

    @property
    def used(self) -> int:
        return units(_join(self.current))

    def close(self) -> None:
        text = _join(self.current).strip()
        if text:
            self.parts.append(text)
        self.current = []

    def add(self, piece: Piece) -> None:
        rendered = render(piece)
        if units(_join([*self.current, rendered])) <= self.limit:
            self.current.append(rendered)
            return
        if piece.style is Style.LINK and units(rendered) <= self.limit:
            self.close()  # a link is never cut
            self.current.append(rendered)
            return
        self._cut(piece if piece.style is not Style.LINK else Piece(piece.text))

    def _cut(self, piece: Piece) -> None:
        text = piece.text
        while text:
            rest = Piece(text, piece.style, piece.url)
            budget = self.limit - self.used - 1  # room for a zero-width joiner
            take = _fits(rest, budget) if budget > 0 else 0
            if take == 0:
                if not self.current:  # wider than a whole message: keep one character
                    take = 1
                else:
                    self.close()
                    continue
            self.current.append(render(Piece(text[:take], piece.style, piece.url)))
            text = text[take:]
            if text:
                self.close()


def split(pieces: Sequence[Piece], limit: int = MAX_MESSAGE) -> list[str]:
    """Pieces as messages of at most `limit` units, each valid markdown on its own."""
    whole = _join(render(piece) for piece in pieces).strip()
    if units(whole) <= limit:
        return [whole or "…"]
    packer = _Packer(limit)
    for piece in pieces:
        packer.add(piece)
    packer.close()
    return packer.parts or ["…"]
