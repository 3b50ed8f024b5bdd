"""The kinds of source Lore reads, how a source's kind is recognised, and what extraction gives.

Imports no parser: the bot's process recognises formats and receives `ExtractedText`
without ever loading pypdf, python-docx or trafilatura (only the extraction worker
processes do, see `graphs.ingest.extract`).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath

from graphs.ingest.errors import UnsupportedSourceError

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "SUPPORTED_SUFFIXES",
    "ExtractedText",
    "SourceFormat",
    "detect_format",
]


class SourceFormat(StrEnum):
    """The kinds of source Lore reads."""

    MARKDOWN = "markdown"
    TEXT = "text"
    HTML = "html"
    PDF = "pdf"
    DOCX = "docx"


@dataclass(frozen=True, slots=True)
class ExtractedText:
    """Clean text of a source, its title, and whether the text is Markdown."""

    title: str
    text: str
    is_markdown: bool


_SUPPORTED = "Markdown, plain text, HTML, PDF and Word (.docx)"
_EXTENSIONS: dict[str, SourceFormat] = {
    **dict.fromkeys((".md", ".markdown", ".mdown", ".mkd"), SourceFormat.MARKDOWN),
    **dict.fromkeys((".txt", ".text"), SourceFormat.TEXT),
    **dict.fromkeys((".html", ".htm", ".xhtml"), SourceFormat.HTML),
    ".pdf": SourceFormat.PDF,
    ".docx": SourceFormat.DOCX,
}
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(_EXTENSIONS)
#: The same, in the order a person reads them (grouped by format).
SUPPORTED_SUFFIXES: tuple[str, ...] = tuple(_EXTENSIONS)
_DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_CONTENT_TYPES: dict[str, SourceFormat] = {
    **dict.fromkeys(("text/markdown", "text/x-markdown"), SourceFormat.MARKDOWN),
    "text/plain": SourceFormat.TEXT,
    **dict.fromkeys(("text/html", "application/xhtml+xml"), SourceFormat.HTML),
    **dict.fromkeys(("application/pdf", "application/x-pdf"), SourceFormat.PDF),
    _DOCX_TYPE: SourceFormat.DOCX,
}
_SNIFF_BYTES = 1024


def detect_format(filename: str | None, content_type: str | None, head: bytes) -> SourceFormat:
    """Guess the format from the file extension, then the content type, then magic bytes."""
    if filename and (by_name := _EXTENSIONS.get(PurePath(filename).suffix.lower())):
        return by_name
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if by_type := _CONTENT_TYPES.get(media_type):
        return by_type
    if by_magic := _sniff(head):
        return by_magic
    what = f'"{filename}"' if filename else "this source"
    raise UnsupportedSourceError(f"Lore cannot read {what}: it only reads {_SUPPORTED} files.")


def _sniff(head: bytes) -> SourceFormat | None:
    start = head[:_SNIFF_BYTES]
    if b"%PDF-" in start:
        return SourceFormat.PDF
    if head.startswith(b"PK\x03\x04") and b"word/document.xml" in head:
        return SourceFormat.DOCX
    lowered = start.removeprefix(codecs.BOM_UTF8).lstrip().lower()
    if lowered.startswith(b"<") and (b"<!doctype html" in lowered or b"<html" in lowered):
        return SourceFormat.HTML
    return None
