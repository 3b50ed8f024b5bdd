"""Turn the raw bytes of a source into clean text and a title: one reader per format.

`extract_text` is synchronous and CPU-bound; it runs in the extraction worker processes
(`graphs.ingest.extract_worker`), never in the bot's. Every failure is an `IngestError`
whose message can be shown to the sender; errors of the parsing libraries are translated
at the boundary (`raise ... from exc`). HTML, DOCX, tables, slides and e-mails come out as
Markdown (headings as `#` lines) so the chunker can follow the document's structure; plain
text and PDF come out as plain text. Each reader module (`pdf_reading`, `html_reading`,
`docx_reading`, `table_reading`, `slides_reading`, `email_reading`, `ocr_reading`,
`scan_reading`) is imported when a file of its format first arrives, so a worker that reads
only Markdown and PDFs never loads trafilatura, python-docx, openpyxl, python-pptx or the OCR
models.

Heavy reading (OCR of pictures and of scanned PDF pages) gets a `ReadingJob` from its worker:
limits that scale with the work found, and a way to report how far it is. A PDF is read page
by page, each page under its own heading (`Page 3`), so a citation names the page; pages
without a text layer are OCR'd.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from graphs.ingest.chunking import iter_headings
from graphs.ingest.errors import EmptyDocumentError, NotUtf8Error, UnsupportedSourceError
from graphs.ingest.formats import ExtractedText, SourceFormat
from graphs.ingest.locations import page_heading
from graphs.ingest.reading_job import ReadingJob
from graphs.ingest.text_cleanup import clean, codec_name, decode, escape_headings, pick_title

__all__ = ["extract_text"]

_EMPTY_TEXT = "This file is empty: there is no text in it to save."
_EMPTY_HTML = "This page has no readable text, so there is nothing to save."
_EMPTY_PDF = (
    "This PDF has no text in it, not even in its scanned pages, so there is nothing to save."
)
_EMPTY_IMAGE = "I could not find any readable text in this picture, so I did not save it."
_EMPTY_AUDIO = "I could not hear any words in this recording, so there is nothing to keep."
#: A page whose text layer has fewer non-space characters than this is read by OCR.
_TEXT_LAYER_CHARS = 10
_EMPTY_DOCX = "This Word document has no text in it, so there is nothing to save."
_EMPTY_TABLE = "This table has no cells with anything in them, so there is nothing to save."
_EMPTY_DECK = "This slide deck has no text on its slides, so there is nothing to save."
_EMPTY_EMAIL = "This e-mail has no text in it, so there is nothing to save."


@dataclass(frozen=True, slots=True)
class _Source:
    data: bytes
    filename: str | None
    charset: str | None
    max_bytes: int
    job: ReadingJob


def extract_text(
    data: bytes,
    fmt: SourceFormat,
    *,
    filename: str | None,
    charset: str | None = None,
    max_decompressed_bytes: int,
    job: ReadingJob | None = None,
) -> ExtractedText:
    """Extract clean text and a title from `data`; raise an `IngestError` if that is impossible."""
    source = _Source(data, filename, charset, max_decompressed_bytes, job or ReadingJob())
    return _READERS[fmt](source)


# --- Markdown and plain text -----------------------------------------------------------


def _extract_text(source: _Source) -> ExtractedText:
    text = clean(decode(source.data, source.charset), _EMPTY_TEXT)
    title = pick_title((), text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=False)


def _extract_markdown(source: _Source) -> ExtractedText:
    text = clean(decode(source.data, source.charset), _EMPTY_TEXT)
    h1 = next((h.title for h in iter_headings(text) if h.level == 1), None)
    title = pick_title((h1,), text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


# --- HTML ------------------------------------------------------------------------------


def _extract_html(source: _Source) -> ExtractedText:
    from graphs.ingest.html_reading import read_html  # noqa: PLC0415 - loaded for HTML only

    markup: bytes | str = source.data
    if source.charset:
        try:
            markup = source.data.decode(codec_name(source.charset), errors="replace")
        except NotUtf8Error:
            markup = source.data  # an unknown declared charset: let trafilatura guess
    parts = read_html(markup)
    if parts is None:
        raise EmptyDocumentError(_EMPTY_HTML)
    is_markdown = len(parts.main) >= len(parts.body)
    text = clean(parts.main if is_markdown else parts.body, _EMPTY_HTML)
    title = pick_title(parts.titles, text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=is_markdown)


# --- PDF -------------------------------------------------------------------------------


def _extract_pdf(source: _Source) -> ExtractedText:
    from graphs.ingest.pdf_reading import read_pdf  # noqa: PLC0415 - loaded for PDFs only

    meta_title, pages = read_pdf(source.data, source.max_bytes)
    unread = [n for n, page in enumerate(pages) if len("".join(page.split())) < _TEXT_LAYER_CHARS]
    scanned: dict[int, str] = {}
    if unread:
        from graphs.ingest.scan_reading import read_scanned_pages  # noqa: PLC0415 - scans only

        scanned = read_scanned_pages(source.data, unread, source.job)
    texts = [scanned.get(number, page).strip() for number, page in enumerate(pages)]
    sections = [
        f"# {page_heading(number)}\n\n{escape_headings(page)}"
        for number, page in enumerate(texts, start=1)
        if page
    ]
    text = clean("\n\n".join(sections), _EMPTY_PDF)
    first_line = next((page for page in texts if page), "")
    title = pick_title((meta_title, first_line.split("\n", 1)[0]), text, source.filename)
    recognised = any(scanned.values())
    return ExtractedText(title=title, text=text, is_markdown=True, recognised=recognised)


# --- pictures --------------------------------------------------------------------------


def _extract_image(source: _Source) -> ExtractedText:
    from graphs.ingest.ocr_reading import read_image  # noqa: PLC0415 - loaded for pictures only

    text = clean(read_image(source.data, source.job), _EMPTY_IMAGE)
    title = pick_title((), text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=False, recognised=True)


# --- DOCX ------------------------------------------------------------------------------


def _extract_docx(source: _Source) -> ExtractedText:
    from graphs.ingest import docx_reading  # noqa: PLC0415 - loaded for Word files only

    docx_reading.check_docx_archive(source.data, source.max_bytes)
    try:
        core_title, blocks = docx_reading.read_docx(source.data)
    except docx_reading.DOCX_ERRORS as exc:
        raise UnsupportedSourceError(docx_reading.DOCX_BROKEN) from exc
    text = clean(docx_reading.join_blocks(blocks), _EMPTY_DOCX)
    first_heading = next((h.title for h in iter_headings(text)), None)
    title = pick_title((core_title, first_heading), text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


# --- tables and slides -----------------------------------------------------------------


def _stem(filename: str | None) -> str | None:
    """A file's name without its extension: the title of a table or deck that has none."""
    return filename.rsplit(".", 1)[0] if filename and "." in filename else filename


def _extract_csv(source: _Source) -> ExtractedText:
    from graphs.ingest.table_reading import read_csv  # noqa: PLC0415 - loaded for tables only

    filename = source.filename
    tab_separated = bool(filename and filename.lower().endswith(".tsv"))
    table = decode(source.data, source.charset)
    sections = read_csv(table, tab_separated=tab_separated, max_bytes=source.max_bytes)
    text = clean(sections, _EMPTY_TABLE)
    title = pick_title((_stem(filename),), text, filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


def _extract_xlsx(source: _Source) -> ExtractedText:
    from graphs.ingest.table_reading import read_xlsx  # noqa: PLC0415 - loaded for tables only

    core_title, sections = read_xlsx(source.data, source.max_bytes)
    text = clean(sections, _EMPTY_TABLE)
    title = pick_title((core_title, _stem(source.filename)), text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


def _extract_pptx(source: _Source) -> ExtractedText:
    from graphs.ingest.slides_reading import read_pptx  # noqa: PLC0415 - loaded for decks only

    core_title, first_slide_title, sections = read_pptx(source.data, source.max_bytes)
    text = clean(sections, _EMPTY_DECK)
    candidates = (core_title, first_slide_title, _stem(source.filename))
    title = pick_title(candidates, text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


# --- e-mail ----------------------------------------------------------------------------


def _extract_email(source: _Source) -> ExtractedText:
    from graphs.ingest.email_reading import read_email  # noqa: PLC0415 - loaded for e-mail only

    found = read_email(source.data, source.max_bytes)
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
    title = pick_title((found.subject, fallback), text, source.filename)
    return ExtractedText(title=title, text=text, is_markdown=True)


def _html_body_text(html: str) -> str:
    from graphs.ingest.html_reading import read_html  # noqa: PLC0415 - loaded for HTML only

    parts = read_html(html)
    if parts is None:
        return ""
    return parts.main if len(parts.main) >= len(parts.body) else parts.body


# --- recordings ------------------------------------------------------------------------


def _extract_audio(source: _Source) -> ExtractedText:
    from graphs.ingest.audio_reading import read_audio  # noqa: PLC0415 - loaded for sound only

    heard = read_audio(source.data, source.job)
    text = clean(heard.text, _EMPTY_AUDIO)
    title = pick_title((heard.first_words,), text, source.filename)
    return ExtractedText(title, text, is_markdown=True, recognised=True, language=heard.language)


_READERS: dict[SourceFormat, Callable[[_Source], ExtractedText]] = {
    SourceFormat.MARKDOWN: _extract_markdown,
    SourceFormat.TEXT: _extract_text,
    SourceFormat.HTML: _extract_html,
    SourceFormat.PDF: _extract_pdf,
    SourceFormat.DOCX: _extract_docx,
    SourceFormat.CSV: _extract_csv,
    SourceFormat.XLSX: _extract_xlsx,
    SourceFormat.PPTX: _extract_pptx,
    SourceFormat.EMAIL: _extract_email,
    SourceFormat.IMAGE: _extract_image,
    SourceFormat.AUDIO: _extract_audio,
}
