"""Turn the raw bytes of a source (Markdown, text, HTML, PDF, DOCX) into clean text and a title.

`extract_text` is synchronous and CPU-bound: callers run it with `asyncio.to_thread`.
Every failure is an `IngestError` whose message can be shown to the sender; errors of
the parsing libraries are translated here, at the boundary (`raise ... from exc`).
HTML and DOCX come out as Markdown (headings as `#` lines) so the chunker can follow
the document's structure; plain text and PDF come out as plain text.
"""

from __future__ import annotations

import codecs
import copy
import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath
from typing import Any

import pypdf
import trafilatura
from docx.opc.exceptions import PackageNotFoundError
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from graphs.ingest.chunking import iter_headings
from graphs.ingest.docx_reading import (
    DOCX_BROKEN,
    check_archive,
    join_blocks,
    megabytes,
    read_docx,
)
from graphs.ingest.errors import (
    DecompressionBombError,
    EmptyDocumentError,
    NotUtf8Error,
    UnsupportedSourceError,
)
from graphs.ingest.html_hidden import drop_hidden_elements

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "SUPPORTED_SUFFIXES",
    "ExtractedText",
    "SourceFormat",
    "detect_format",
    "extract_text",
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
_TITLE_MAX = 120
_SHORT_PAGE_CHARS = 200  # below this, trafilatura's choice is checked against the page body
_UNTITLED = "Untitled"

_TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.MULTILINE)
_BLANK_RUN = re.compile(r"\n{3,}")

_EMPTY_TEXT = "This file is empty: there is no text in it to save."
_EMPTY_HTML = "This page has no readable text, so there is nothing to save."
_EMPTY_PDF = "This PDF has no text layer (it looks scanned); Lore cannot read it yet."
_EMPTY_DOCX = "This Word document has no text in it, so there is nothing to save."
_PDF_LOCKED = (
    "This PDF is password-protected, so Lore cannot open it; please send an unlocked copy."
)
_PDF_BROKEN = "This PDF could not be read; it may be damaged or not really a PDF."

# Parsers raise far more than their own error classes on malformed files
# (SyntaxError covers lxml's XMLSyntaxError).
_PDF_ERRORS = (
    PyPdfError, ValueError, TypeError, LookupError, AttributeError, AssertionError, RuntimeError,
    ArithmeticError, zlib.error,
)  # fmt: skip
_DOCX_ERRORS = (
    PackageNotFoundError, zipfile.BadZipFile, LookupError, ValueError, TypeError, AttributeError,
    RuntimeError, SyntaxError, EOFError, OSError, zlib.error,
)  # fmt: skip


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


def extract_text(
    data: bytes,
    fmt: SourceFormat,
    *,
    filename: str | None,
    charset: str | None = None,
    max_decompressed_bytes: int,
) -> ExtractedText:
    """Extract clean text and a title from `data`; raise an `IngestError` if that is impossible."""
    match fmt:
        case SourceFormat.MARKDOWN | SourceFormat.TEXT:
            return _extract_plain(data, filename, charset, is_markdown=fmt is SourceFormat.MARKDOWN)
        case SourceFormat.HTML:
            return _extract_html(data, filename, charset)
        case SourceFormat.PDF:
            return _extract_pdf(data, filename, max_decompressed_bytes)
        case SourceFormat.DOCX:
            return _extract_docx(data, filename, max_decompressed_bytes)


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


# --- shared cleanup and titles ---------------------------------------------------------


def _clean(text: str, empty_message: str) -> str:
    """Normalise newlines, drop NULs and trailing spaces, collapse blank runs; refuse empties."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _BLANK_RUN.sub("\n\n", _TRAILING_SPACE.sub("", text)).strip("\n")
    if not text.strip():
        raise EmptyDocumentError(empty_message)
    return text


def _short_title(line: str) -> str:
    line = " ".join(line.split())
    if len(line) <= _TITLE_MAX:
        return line
    cut = line[:_TITLE_MAX].rsplit(" ", 1)[0] or line[:_TITLE_MAX]
    return cut.rstrip(" ,;:-") + "…"


def _pick_title(candidates: tuple[str | None, ...], text: str, filename: str | None) -> str:
    """The first non-blank candidate, else the first line of `text`, else the file's stem."""
    for candidate in candidates:
        if candidate and candidate.strip():
            return _short_title(candidate)
    for line in text.split("\n"):
        if stripped := line.strip().lstrip("#").strip():
            return _short_title(stripped)
    stem = PurePath(filename).stem if filename else ""
    return stem or _UNTITLED


# --- Markdown and plain text -----------------------------------------------------------


def _extract_plain(
    data: bytes, filename: str | None, charset: str | None, *, is_markdown: bool
) -> ExtractedText:
    text = _clean(_decode(data, charset), _EMPTY_TEXT)
    h1 = next((h.title for h in iter_headings(text) if h.level == 1), None) if is_markdown else None
    return ExtractedText(
        title=_pick_title((h1,), text, filename), text=text, is_markdown=is_markdown
    )


def _decode(data: bytes, charset: str | None) -> str:
    """Strict UTF-8 (a BOM is dropped) unless the sender declared another charset."""
    codec = _codec_name(charset)
    if codec == "utf-8":
        data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        if codec == "utf-8":
            raise NotUtf8Error(
                "This file is not UTF-8 text (the first invalid byte is at position "
                f"{exc.start}); please save it as UTF-8 and send it again."
            ) from exc
        raise NotUtf8Error(
            f"This file does not match the character set it declares ({charset}); "
            "please save it as UTF-8 and send it again."
        ) from exc


def _codec_name(charset: str | None) -> str:
    if not charset or not charset.strip().strip("\"'"):
        return "utf-8"
    try:
        name = codecs.lookup(charset.strip().strip("\"'")).name
    except LookupError as exc:
        raise NotUtf8Error(
            f'This text declares a character set Lore does not know ("{charset}"); '
            "please send it as UTF-8."
        ) from exc
    return "utf-8" if name in {"ascii", "utf-8-sig"} else name


# --- HTML ------------------------------------------------------------------------------

_DROPPED_HTML_TAGS = (
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "svg", "iframe", "button", "select",
)  # fmt: skip
_BLOCK_HTML_TAGS = (
    "p", "div", "li", "br", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "section",
    "article", "main", "pre", "blockquote", "dd", "dt", "table", "ul", "ol", "hr",
)  # fmt: skip


def _extract_html(data: bytes, filename: str | None, charset: str | None) -> ExtractedText:
    source: bytes | str = data
    if charset:
        try:
            source = data.decode(_codec_name(charset), errors="replace")
        except NotUtf8Error:
            source = data  # an unknown declared charset: let trafilatura guess
    tree = trafilatura.load_html(source)
    if tree is None:
        raise EmptyDocumentError(_EMPTY_HTML)
    drop_hidden_elements(tree)
    markdown = trafilatura.extract(  # tables kept; links, images and comments dropped
        tree, output_format="markdown", favor_precision=True, include_comments=False
    )
    metadata = trafilatura.extract_metadata(tree, extensive=False)
    titles = (metadata.title, tree.findtext(".//title"))
    main = (markdown or "").strip()
    body = "" if len(main) >= _SHORT_PAGE_CHARS else _html_body_text(tree).strip()
    # On short pages trafilatura may keep nothing, or a menu instead of the content.
    is_markdown = len(main) >= len(body)
    text = _clean(main if is_markdown else body, _EMPTY_HTML)
    title = _pick_title(titles, text, filename)
    return ExtractedText(title=title, text=text, is_markdown=is_markdown)


def _html_body_text(tree: Any) -> str:
    """Plain text of the page body without scripts, navigation, headers and footers."""
    root = copy.deepcopy(tree)
    for element in list(root.iter(*_DROPPED_HTML_TAGS)):
        element.drop_tree()
    body = root.find(".//body")
    body = root if body is None else body
    for element in body.iter(*_BLOCK_HTML_TAGS):
        element.tail = "\n" + (element.tail or "")
    lines = (" ".join(line.split()) for line in str(body.text_content()).split("\n"))
    return "\n".join(lines)


# --- PDF -------------------------------------------------------------------------------


def _extract_pdf(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    try:
        meta_title, pages = _read_pdf(data, max_bytes)
    except (DependencyError, FileNotDecryptedError) as exc:
        raise UnsupportedSourceError(_PDF_LOCKED) from exc
    except _PDF_ERRORS as exc:
        raise UnsupportedSourceError(_PDF_BROKEN) from exc
    text = _clean("\n\n".join(page.strip() for page in pages), _EMPTY_PDF)
    return ExtractedText(
        title=_pick_title((meta_title,), text, filename), text=text, is_markdown=False
    )


def _read_pdf(data: bytes, max_bytes: int) -> tuple[str | None, list[str]]:
    """Open the PDF (an empty password is tried) and return its title and page texts."""
    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted and reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
        raise UnsupportedSourceError(_PDF_LOCKED)
    pages: list[str] = []
    total = 0
    for page in reader.pages:
        page_text = page.extract_text()
        total += len(page_text)
        if total > max_bytes:
            raise DecompressionBombError(
                f"This PDF holds more than {megabytes(max_bytes)} of text, "
                "more than Lore accepts for one document."
            )
        pages.append(page_text)
    metadata = reader.metadata
    return (metadata.title if metadata is not None else None), pages


# --- DOCX ------------------------------------------------------------------------------


def _extract_docx(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    check_archive(data, max_bytes)
    try:
        core_title, blocks = read_docx(data)
    except _DOCX_ERRORS as exc:
        raise UnsupportedSourceError(DOCX_BROKEN) from exc
    text = _clean(join_blocks(blocks), _EMPTY_DOCX)
    first_heading = next((h.title for h in iter_headings(text)), None)
    title = _pick_title((core_title, first_heading), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)
