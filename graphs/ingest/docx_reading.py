"""Reading a Word (.docx) file: the zip is checked for bombs before anything is unpacked,
then paragraphs, headings, list items and tables become Markdown blocks in body order."""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from typing import Any

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.text.paragraph import Paragraph

from graphs.ingest.zip_checks import check_archive

__all__ = ["DOCX_BROKEN", "DOCX_ERRORS", "check_docx_archive", "join_blocks", "read_docx"]

DOCX_BROKEN = "This Word document could not be read; it may be damaged or not really a .docx."
# python-docx raises far more than its own error classes on malformed files
# (SyntaxError covers lxml's XMLSyntaxError).
DOCX_ERRORS = (
    PackageNotFoundError, zipfile.BadZipFile, LookupError, ValueError, TypeError, AttributeError,
    RuntimeError, SyntaxError, EOFError, OSError, zlib.error,
)  # fmt: skip
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)


def check_docx_archive(data: bytes, max_bytes: int) -> None:
    """Refuse a Word document whose zip would unpack beyond `max_bytes` (see `zip_checks`)."""
    check_archive(data, max_bytes, kind="Word document", broken=DOCX_BROKEN)


def read_docx(data: bytes) -> tuple[str | None, list[tuple[bool, str]]]:
    """Return the core-properties title and `(is_list_item, markdown)` blocks in body order."""
    document = docx.Document(io.BytesIO(data))
    blocks: list[tuple[bool, str]] = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            block = _paragraph_markdown(item)
        else:
            block = (False, _table_text(item))
        if block is not None and block[1]:
            blocks.append(block)
    return document.core_properties.title, blocks


def _paragraph_markdown(paragraph: Any) -> tuple[bool, str] | None:
    text = str(paragraph.text).strip()
    if not text:
        return None
    style = paragraph.style
    style_name = str(style.name or "") if style is not None else ""
    level = _heading_level(style_name)
    if level:
        return False, "#" * level + " " + " ".join(text.split())
    properties = paragraph._p.pPr
    if style_name.lower().startswith("list") or (
        properties is not None and properties.numPr is not None
    ):
        return True, "- " + text
    return False, "\\" + text if text.startswith("#") else text


def _heading_level(style_name: str) -> int:
    if style_name.strip().lower() == "title":
        return 1
    match = _HEADING_STYLE.fullmatch(style_name.strip())
    return min(int(match.group(1)), 6) if match else 0


def _table_text(table: Any) -> str:
    """One line per row, cells separated by ' | ' (merged cells appear once)."""
    rows: list[str] = []
    for row in table.rows:
        unique = {id(cell._tc): cell for cell in row.cells}.values()
        if any(cells := [" ".join(str(cell.text).split()) for cell in unique]):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def join_blocks(blocks: list[tuple[bool, str]]) -> str:
    """Blank lines between blocks; consecutive list items stay on adjacent lines."""
    parts: list[str] = []
    previous_is_item = False
    for is_item, block in blocks:
        if parts:
            parts.append("\n" if is_item and previous_is_item else "\n\n")
        parts.append(block)
        previous_is_item = is_item
    return "".join(parts)
