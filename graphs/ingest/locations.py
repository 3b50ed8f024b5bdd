"""Where in a source a passage is: the headings readers write for pages, slides, row blocks and
moments of a recording, and the words a citation uses for them ("page 3", "at 1:23").

A reader that knows positions (a PDF's pages, a deck's slides, a table's rows, a transcript's
times) puts each under a heading of its own, one level deep, so every chunk's heading path
names its position. `passage_location` turns that heading back into citation words, only for
the formats whose readers write such headings (a Markdown file's own "Page 2" heading is a
section title, not a location). Imports no parser: the bot's process uses it for citations.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "page_heading",
    "passage_location",
    "rows_heading",
    "slide_heading",
    "time_heading",
    "timestamp",
]

_LOCATED_FORMATS = frozenset({"pdf", "csv", "xlsx", "pptx", "audio"})
_PAGE = re.compile(r"Page (\d+)")
_SLIDE = re.compile(r"Slide (\d+)(?:: .*)?", re.DOTALL)
_ROWS = re.compile(r"(?:(?P<sheet>.+), )?[Rr]ows? (?P<first>\d+)(?:-(?P<last>\d+))?", re.DOTALL)
_TIME = re.compile(r"(?:\d+:)?\d{1,2}:\d{2}")


def timestamp(seconds: float) -> str:
    """A moment of a recording as people write it: "0:07", "12:34", "1:02:03"."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def page_heading(number: int) -> str:
    """The heading over one page of a PDF."""
    return f"Page {number}"


def slide_heading(number: int, title: str) -> str:
    """The heading over one slide, with the slide's own title when it has one."""
    title = " ".join(title.split())
    return f"Slide {number}: {title}" if title else f"Slide {number}"


def rows_heading(first: int, last: int, sheet: str | None = None) -> str:
    """The heading over a block of table rows (spreadsheet row numbers, header = row 1)."""
    rows = f"rows {first}-{last}" if last > first else f"row {first}"
    if sheet:
        return f"{' '.join(sheet.split())}, {rows}"
    return rows[0].upper() + rows[1:]


def time_heading(seconds: float) -> str:
    """The heading over the part of a transcript that starts at `seconds`."""
    return timestamp(seconds)


def passage_location(document_format: str, heading_path: Sequence[str]) -> str:
    """The words a citation adds for a passage ("page 3", "slide 2", "rows 2-21", "at 1:23"),
    or "" when its format has no positions or its heading is not one a reader wrote."""
    if document_format not in _LOCATED_FORMATS or not heading_path:
        return ""
    heading = heading_path[-1]
    if document_format == "audio":
        return f"at {heading}" if _TIME.fullmatch(heading) else ""
    if document_format == "pdf":
        page = _PAGE.fullmatch(heading)
        return f"page {page.group(1)}" if page else ""
    if document_format == "pptx":
        slide = _SLIDE.fullmatch(heading)
        return f"slide {slide.group(1)}" if slide else ""
    rows = _ROWS.fullmatch(heading)
    if rows is None:
        return ""
    span = (
        f"row {rows['first']}" if rows["last"] is None else f"rows {rows['first']}-{rows['last']}"
    )
    return f"{rows['sheet']}, {span}" if rows["sheet"] else span
