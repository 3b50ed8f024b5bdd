"""Lore's replies as Slack mrkdwn: rich spans, the final answer with numbered citations and
its Sources, and splitting into parts that each fit one Block Kit section.

Slack needs only `&`, `<` and `>` escaped; `*bold*`, `_italic_`, `` `code` `` and
`<url|label>` links are its markup. Text is kept as pieces (a run in one style, or a link)
until it is cut into parts, so a part never ends inside a link, an entity or between the
two markers of a style: a styled run cut in two is closed at the end of one part and
opened again at the start of the next.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.events import CitationEvent
from bot.replies import Rich, Style
from bot.turn_view import FinalAnswer, source_label

__all__ = [
    "MAX_SECTION",
    "Piece",
    "escape",
    "final_pieces",
    "render",
    "render_rich",
    "rich_pieces",
    "split",
]

MAX_SECTION = 3000  # characters of mrkdwn in one section block
_MARKS = {Style.BOLD: "*", Style.ITALIC: "_", Style.CODE: "`"}
_INLINE = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|`([^`\n]+)`|\[(\d{1,3})\]")
_ENTITY_START = re.compile(r"&[a-z]{0,3}$")


def escape(text: str) -> str:
    """Plain text made safe for mrkdwn (Slack's three control characters)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _link(url: str, label: str) -> str:
    target = escape(url).replace("|", "%7C")
    return f"<{target}|{escape(label)}>"


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of escaped mrkdwn in one style (`mark` wraps it), or an unbreakable link."""

    text: str
    mark: str = ""
    whole: bool = False

    def rendered(self) -> str:
        """The piece as mrkdwn; a style's markers hug the words (Slack ignores `* x *`)."""
        if not self.mark:
            return self.text
        core = self.text.strip()
        if not core:
            return self.text
        head = self.text[: len(self.text) - len(self.text.lstrip())]
        tail = self.text[len(self.text.rstrip()) :]
        return f"{head}{self.mark}{core}{self.mark}{tail}"


def rich_pieces(body: Rich) -> list[Piece]:
    """Lore's rich text as pieces."""
    pieces = []
    for span in body:
        if span.style is Style.LINK and span.url:
            pieces.append(Piece(_link(span.url, span.text), whole=True))
        else:
            pieces.append(Piece(escape(span.text), _MARKS.get(span.style, "")))
    return pieces


def render(pieces: Iterable[Piece]) -> str:
    """Pieces joined into one mrkdwn string."""
    return "".join(piece.rendered() for piece in pieces)


def render_rich(body: Rich) -> str:
    """Lore's rich text as mrkdwn."""
    return render(rich_pieces(body))


def _is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def _answer_pieces(text: str, citations: dict[int, CitationEvent]) -> list[Piece]:
    pieces: list[Piece] = []
    position = 0
    for match in _INLINE.finditer(text):
        if match.start() > position:
            pieces.append(Piece(escape(text[position : match.start()])))
        bold, code, ref = match.groups()
        if bold is not None:
            pieces.append(Piece(escape(bold), "*"))
        elif code is not None:
            pieces.append(Piece(escape(code), "`"))
        else:
            citation = citations.get(int(ref))
            if citation is not None and _is_url(citation.source):
                pieces.append(Piece(_link(citation.source, match.group(0)), whole=True))
            else:
                pieces.append(Piece(escape(match.group(0))))
        position = match.end()
    if position < len(text):
        pieces.append(Piece(escape(text[position:])))
    return pieces


def _source_pieces(citations: Sequence[CitationEvent]) -> list[Piece]:
    pieces = [Piece("Sources", "*")]
    for citation in citations:
        title = source_label(citation)
        pieces.append(Piece(f"\n[{citation.ref}] "))
        if _is_url(citation.source):
            pieces.append(Piece(_link(citation.source, title), whole=True))
        else:
            pieces.append(Piece(escape(title)))
        if citation.private:
            pieces += [Piece(" "), Piece("(private)", "_")]
    return pieces


def final_pieces(final: FinalAnswer) -> list[Piece]:
    """The final answer: its text with linked citations, then a Sources section."""
    citations = {citation.ref: citation for citation in final.citations}
    text = final.text.strip()
    pieces = _answer_pieces(text, citations) if text else []
    if final.citations:
        if pieces:
            pieces.append(Piece("\n\n"))
        pieces += _source_pieces(final.citations)
    return pieces or [Piece("…")]


def _cut(text: str, room: int) -> int:
    """How much of `text` fits in `room` characters: at a line break or a space when one is
    in the second half, never inside an entity such as `&amp;`."""
    if len(text) <= room:
        return len(text)
    for separator in ("\n", " "):
        position = text.rfind(separator, 0, room)
        if position > room // 2:
            return position + 1
    entity = _ENTITY_START.search(text[:room])
    return entity.start() if entity and entity.start() > 0 else room


class _Parts:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.current = ""

    def close(self) -> None:
        if self.current.strip():
            self.parts.append(self.current.strip())
        self.current = ""

    def add(self, piece: Piece) -> None:
        while True:
            rendered = piece.rendered()
            if len(self.current) + len(rendered) <= self.limit:
                self.current += rendered
                return
            overhead = 2 * len(piece.mark)
            room = self.limit - len(self.current) - overhead
            if piece.whole or (room < min(self.limit // 4, len(piece.text)) and self.current):
                if not self.current:  # an unbreakable piece larger than a part: alone
                    self.parts.append(rendered)
                    return
                self.close()
                continue
            take = _cut(piece.text, room)
            self.current += Piece(piece.text[:take], piece.mark).rendered()
            self.close()
            piece = Piece(piece.text[take:], piece.mark)
            if not piece.text:
                return


def split(pieces: Iterable[Piece], limit: int = MAX_SECTION) -> list[str]:
    """Mrkdwn parts of at most `limit` characters each, every one valid on its own."""
    parts = _Parts(limit)
    for piece in pieces:
        parts.add(piece)
    parts.close()
    return parts.parts or ["…"]
