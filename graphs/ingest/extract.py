"""Turn the raw bytes of a source (Markdown, text, HTML, PDF, DOCX) into clean text and a title.

`extract_text` is synchronous and CPU-bound; it runs in the extraction worker processes
(`graphs.ingest.extract_worker`), never in the bot's. Every failure is an `IngestError`
whose message can be shown to the sender; errors of the parsing libraries are translated
at the boundary (`raise ... from exc`). HTML and DOCX come out as Markdown (headings as
`#` lines) so the chunker can follow the document's structure; plain text and PDF come
out as plain text. Each parser (`pdf_reading`, `html_reading`, `docx_reading`) is
imported when a file of its format first arrives, so a worker that reads only Markdown
and PDFs never loads trafilatura or python-docx.
"""

from __future__ import annotations

import codecs
import re
from pathlib import PurePath

from graphs.ingest.chunking import iter_headings
from graphs.ingest.errors import EmptyDocumentError, NotUtf8Error, UnsupportedSourceError
from graphs.ingest.formats import ExtractedText, SourceFormat

__all__ = ["extract_text"]

_TITLE_MAX = 120
_UNTITLED = "Untitled"

_TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.MULTILINE)
_BLANK_RUN = re.compile(r"\n{3,}")

_EMPTY_TEXT = "This file is empty: there is no text in it to save."
_EMPTY_HTML = "This page has no readable text, so there is nothing to save."
_EMPTY_PDF = "This PDF has no text layer (it looks scanned); Lore cannot read it yet."
_EMPTY_DOCX = "This Word document has no text in it, so there is nothing to save."


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


def _extract_html(data: bytes, filename: str | None, charset: str | None) -> ExtractedText:
    from graphs.ingest.html_reading import read_html  # noqa: PLC0415 - loaded for HTML only

    source: bytes | str = data
    if charset:
        try:
            source = data.decode(_codec_name(charset), errors="replace")
        except NotUtf8Error:
            source = data  # an unknown declared charset: let trafilatura guess
    parts = read_html(source)
    if parts is None:
        raise EmptyDocumentError(_EMPTY_HTML)
    is_markdown = len(parts.main) >= len(parts.body)
    text = _clean(parts.main if is_markdown else parts.body, _EMPTY_HTML)
    title = _pick_title(parts.titles, text, filename)
    return ExtractedText(title=title, text=text, is_markdown=is_markdown)


# --- PDF -------------------------------------------------------------------------------


def _extract_pdf(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest.pdf_reading import read_pdf  # noqa: PLC0415 - loaded for PDFs only

    meta_title, pages = read_pdf(data, max_bytes)
    text = _clean("\n\n".join(page.strip() for page in pages), _EMPTY_PDF)
    return ExtractedText(
        title=_pick_title((meta_title,), text, filename), text=text, is_markdown=False
    )


# --- DOCX ------------------------------------------------------------------------------


def _extract_docx(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest import docx_reading  # noqa: PLC0415 - loaded for Word files only

    docx_reading.check_archive(data, max_bytes)
    try:
        core_title, blocks = docx_reading.read_docx(data)
    except docx_reading.DOCX_ERRORS as exc:
        raise UnsupportedSourceError(docx_reading.DOCX_BROKEN) from exc
    text = _clean(docx_reading.join_blocks(blocks), _EMPTY_DOCX)
    first_heading = next((h.title for h in iter_headings(text)), None)
    title = _pick_title((core_title, first_heading), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)
