"""Turn the raw bytes of a source into clean text and a title: one reader per format.

`extract_text` is synchronous and CPU-bound; it runs in the extraction worker processes
(`graphs.ingest.extract_worker`), never in the bot's. Every failure is an `IngestError`
whose message can be shown to the sender; errors of the parsing libraries are translated
at the boundary (`raise ... from exc`). HTML, DOCX, tables, slides and e-mails come out as
Markdown (headings as `#` lines) so the chunker can follow the document's structure; plain
text and PDF come out as plain text. Each reader module (`pdf_reading`, `html_reading`,
`docx_reading`, `table_reading`, `slides_reading`, `email_reading`) is imported when a file
of its format first arrives, so a worker that reads only Markdown and PDFs never loads
trafilatura, python-docx, openpyxl or python-pptx.
"""

from __future__ import annotations

from collections.abc import Callable

from graphs.ingest.chunking import iter_headings
from graphs.ingest.errors import EmptyDocumentError, NotUtf8Error, UnsupportedSourceError
from graphs.ingest.formats import ExtractedText, SourceFormat
from graphs.ingest.text_cleanup import clean, codec_name, decode, escape_headings, pick_title

__all__ = ["extract_text"]

_EMPTY_TEXT = "This file is empty: there is no text in it to save."
_EMPTY_HTML = "This page has no readable text, so there is nothing to save."
_EMPTY_PDF = "This PDF has no text layer (it looks scanned); Lore cannot read it yet."
_EMPTY_DOCX = "This Word document has no text in it, so there is nothing to save."
_EMPTY_TABLE = "This table has no cells with anything in them, so there is nothing to save."
_EMPTY_DECK = "This slide deck has no text on its slides, so there is nothing to save."
_EMPTY_EMAIL = "This e-mail has no text in it, so there is nothing to save."


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
        case SourceFormat.CSV:
            return _extract_csv(data, filename, charset, max_decompressed_bytes)
        case SourceFormat.EMAIL:
            return _extract_email(data, filename, max_decompressed_bytes)
    return _BINARY_READERS[fmt](data, filename, max_decompressed_bytes)


# --- Markdown and plain text -----------------------------------------------------------


def _extract_plain(
    data: bytes, filename: str | None, charset: str | None, *, is_markdown: bool
) -> ExtractedText:
    text = clean(decode(data, charset), _EMPTY_TEXT)
    h1 = next((h.title for h in iter_headings(text) if h.level == 1), None) if is_markdown else None
    return ExtractedText(
        title=pick_title((h1,), text, filename), text=text, is_markdown=is_markdown
    )


# --- HTML ------------------------------------------------------------------------------


def _extract_html(data: bytes, filename: str | None, charset: str | None) -> ExtractedText:
    from graphs.ingest.html_reading import read_html  # noqa: PLC0415 - loaded for HTML only

    source: bytes | str = data
    if charset:
        try:
            source = data.decode(codec_name(charset), errors="replace")
        except NotUtf8Error:
            source = data  # an unknown declared charset: let trafilatura guess
    parts = read_html(source)
    if parts is None:
        raise EmptyDocumentError(_EMPTY_HTML)
    is_markdown = len(parts.main) >= len(parts.body)
    text = clean(parts.main if is_markdown else parts.body, _EMPTY_HTML)
    title = pick_title(parts.titles, text, filename)
    return ExtractedText(title=title, text=text, is_markdown=is_markdown)


# --- PDF -------------------------------------------------------------------------------


def _extract_pdf(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest.pdf_reading import read_pdf  # noqa: PLC0415 - loaded for PDFs only

    meta_title, pages = read_pdf(data, max_bytes)
    text = clean("\n\n".join(page.strip() for page in pages), _EMPTY_PDF)
    return ExtractedText(
        title=pick_title((meta_title,), text, filename), text=text, is_markdown=False
    )


# --- DOCX ------------------------------------------------------------------------------


def _extract_docx(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest import docx_reading  # noqa: PLC0415 - loaded for Word files only

    docx_reading.check_docx_archive(data, max_bytes)
    try:
        core_title, blocks = docx_reading.read_docx(data)
    except docx_reading.DOCX_ERRORS as exc:
        raise UnsupportedSourceError(docx_reading.DOCX_BROKEN) from exc
    text = clean(docx_reading.join_blocks(blocks), _EMPTY_DOCX)
    first_heading = next((h.title for h in iter_headings(text)), None)
    title = pick_title((core_title, first_heading), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


# --- tables and slides -----------------------------------------------------------------


def _stem(filename: str | None) -> str | None:
    """A file's name without its extension: the title of a table or deck that has none."""
    return filename.rsplit(".", 1)[0] if filename and "." in filename else filename


def _extract_csv(
    data: bytes, filename: str | None, charset: str | None, max_bytes: int
) -> ExtractedText:
    from graphs.ingest.table_reading import read_csv  # noqa: PLC0415 - loaded for tables only

    tab_separated = bool(filename and filename.lower().endswith(".tsv"))
    sections = read_csv(decode(data, charset), tab_separated=tab_separated, max_bytes=max_bytes)
    text = clean(sections, _EMPTY_TABLE)
    title = pick_title((_stem(filename),), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


def _extract_xlsx(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest.table_reading import read_xlsx  # noqa: PLC0415 - loaded for tables only

    core_title, sections = read_xlsx(data, max_bytes)
    text = clean(sections, _EMPTY_TABLE)
    title = pick_title((core_title, _stem(filename)), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


def _extract_pptx(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest.slides_reading import read_pptx  # noqa: PLC0415 - loaded for decks only

    core_title, first_slide_title, sections = read_pptx(data, max_bytes)
    text = clean(sections, _EMPTY_DECK)
    title = pick_title((core_title, first_slide_title, _stem(filename)), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


# --- e-mail ----------------------------------------------------------------------------


def _extract_email(data: bytes, filename: str | None, max_bytes: int) -> ExtractedText:
    from graphs.ingest.email_reading import read_email  # noqa: PLC0415 - loaded for e-mail only

    found = read_email(data, max_bytes)
    body = found.body
    if found.body_is_html and body.strip():
        body = _html_body_text(body)
    parts = ["\n".join(found.headers), escape_headings(body.strip())]
    parts += [f"## Attachment: {name}\n\n{text}" for name, text in found.attachments]
    if found.not_read:
        parts.append("Attachments not read: " + ", ".join(found.not_read))
    heading = f"# {found.subject}\n\n" if found.subject else ""
    text = clean(heading + "\n\n".join(part for part in parts if part), _EMPTY_EMAIL)
    if not found.body.strip() and not found.attachments:
        raise EmptyDocumentError(_EMPTY_EMAIL)
    sender = next((h.removeprefix("From: ") for h in found.headers if h.startswith("From:")), "")
    fallback = f"E-mail from {sender}" if sender else None
    title = pick_title((found.subject, fallback), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


def _html_body_text(html: str) -> str:
    from graphs.ingest.html_reading import read_html  # noqa: PLC0415 - loaded for HTML only

    parts = read_html(html)
    if parts is None:
        return ""
    return parts.main if len(parts.main) >= len(parts.body) else parts.body


_BINARY_READERS: dict[SourceFormat, Callable[[bytes, str | None, int], ExtractedText]] = {
    SourceFormat.PDF: _extract_pdf,
    SourceFormat.DOCX: _extract_docx,
    SourceFormat.XLSX: _extract_xlsx,
    SourceFormat.PPTX: _extract_pptx,
}
