"""Reading a PowerPoint (.pptx) deck: one section per slide, its title as the heading, then the
text of its shapes in order (tables row by row, groups opened) and the speaker notes.

The zip is checked for bombs before python-pptx unpacks anything. Each slide's heading
(`locations.slide_heading`) is the only heading level, so a citation names the slide.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import pptx
from pptx.exc import PythonPptxError
from pptx.shapes.group import GroupShape

from graphs.ingest.errors import DecompressionBombError, UnsupportedSourceError, megabytes
from graphs.ingest.locations import slide_heading
from graphs.ingest.text_cleanup import escape_headings
from graphs.ingest.zip_checks import check_archive

__all__ = ["PPTX_BROKEN", "read_pptx"]

PPTX_BROKEN = "This slide deck could not be read; it may be damaged or not really a .pptx file."
# python-pptx raises far more than its own error classes on malformed files
# (SyntaxError covers lxml's XMLSyntaxError).
_PPTX_ERRORS = (
    PythonPptxError, zipfile.BadZipFile, KeyError, LookupError, ValueError, TypeError,
    AttributeError, RuntimeError, SyntaxError, EOFError, OSError, zlib.error,
)  # fmt: skip


def read_pptx(data: bytes, max_bytes: int) -> tuple[str | None, str | None, str]:
    """The deck's own title, its first slide title, and one section per slide."""
    check_archive(data, max_bytes, kind="slide deck", broken=PPTX_BROKEN)
    try:
        return _read(data, max_bytes)
    except DecompressionBombError:
        raise
    except _PPTX_ERRORS as exc:
        raise UnsupportedSourceError(PPTX_BROKEN) from exc


def _read(data: bytes, max_bytes: int) -> tuple[str | None, str | None, str]:
    deck = pptx.Presentation(io.BytesIO(data))
    sections: list[str] = []
    first_title: str | None = None
    total = 0
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = slide.shapes.title
        title = _one_line(title_shape.text_frame.text) if title_shape is not None else ""
        first_title = first_title or title or None
        body = [text for text in _shape_texts(slide.shapes, skip=title_shape) if text]
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            body.append("Notes: " + notes.text.strip())
        if not body and not title:
            continue
        section = "\n\n".join((f"# {slide_heading(number, title)}", *map(escape_headings, body)))
        total += len(section)
        if total > max_bytes:
            raise DecompressionBombError(
                f"This slide deck holds more than {megabytes(max_bytes)} of text, "
                "more than Lore accepts for one document."
            )
        sections.append(section)
    return deck.core_properties.title, first_title, "\n\n".join(sections)


def _shape_texts(shapes: Iterable[Any], *, skip: Any) -> Iterator[str]:
    """The text of each shape in order: text frames, tables row by row, groups opened."""
    for shape in shapes:
        if skip is not None and shape.shape_id == skip.shape_id:
            continue
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes, skip=None)
        elif getattr(shape, "has_table", False) and shape.has_table:
            yield "\n".join(_table_rows(shape.table))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            yield shape.text_frame.text.strip()


def _table_rows(table: Any) -> Iterator[str]:
    for row in table.rows:
        cells = [_one_line(cell.text) for cell in row.cells]
        if any(cells):
            yield " | ".join(cells)


def _one_line(text: str) -> str:
    return " ".join(text.split())
