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

from graphs.ingest.errors import DecompressionBombError, UnsupportedSourceError, megabytes

__all__ = ["DOCX_BROKEN", "DOCX_ERRORS", "check_archive", "join_blocks", "read_docx"]

DOCX_BROKEN = "This Word document could not be read; it may be damaged or not really a .docx."
# python-docx raises far more than its own error classes on malformed files
# (SyntaxError covers lxml's XMLSyntaxError).
DOCX_ERRORS = (
    PackageNotFoundError, zipfile.BadZipFile, LookupError, ValueError, TypeError, AttributeError,
    RuntimeError, SyntaxError, EOFError, OSError, zlib.error,
)  # fmt: skip
_MAX_ZIP_MEMBERS = 10_000
_MAX_COMPRESSION_RATIO = 200
_RATIO_CHECK_FLOOR = 1 << 20  # members smaller than this may compress as well as they like
_HEADING_STYLE = re.compile(r"heading\s*([1-9])", re.IGNORECASE)


def check_archive(data: bytes, max_bytes: int) -> None:
    """Refuse a zip whose declared contents exceed `max_bytes` or compress absurdly well.

    `zipfile` stops reading a member at its declared size, so checking the declared
    sizes before parsing bounds what python-docx can ever decompress.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise UnsupportedSourceError(DOCX_BROKEN) from exc
    if len(members) > _MAX_ZIP_MEMBERS:
        raise DecompressionBombError(
            f"This Word document holds {len(members)} files inside; Lore will not unpack it."
        )
    declared = sum(member.file_size for member in members)
    if declared > max_bytes:
        raise DecompressionBombError(
            f"This Word document would expand to {megabytes(declared)}, more than the "
            f"{megabytes(max_bytes)} Lore accepts."
        )
    for member in members:
        ratio_limit = _MAX_COMPRESSION_RATIO * max(member.compress_size, 1)
        if member.file_size > _RATIO_CHECK_FLOOR and member.file_size > ratio_limit:
            raise DecompressionBombError(
                "This Word document is compressed suspiciously well (it looks like a zip "
                "bomb); Lore will not unpack it."
            )


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
