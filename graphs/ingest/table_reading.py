"""Reading tables (CSV, TSV, XLSX): one section per block of rows, the header row repeated in
each, so that every row can be found and cited by its row numbers ("rows 2-21").

Row numbers are the ones a spreadsheet shows (the header is row 1 when it is the first row);
empty rows are skipped but keep their numbers. Cells are separated by " | ". A block holds
whole rows up to about `BLOCK_CHARS` characters; its heading (`locations.rows_heading`) is
the only heading level, so blocks are never merged by the chunker. A workbook's sheets follow
one another, each with its own header. Output is capped at `max_bytes` characters.
"""

from __future__ import annotations

import csv
import io
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from datetime import date, datetime, time
from typing import Any

import openpyxl
from openpyxl.utils.exceptions import InvalidFileException

from graphs.ingest.errors import DecompressionBombError, UnsupportedSourceError, megabytes
from graphs.ingest.locations import rows_heading
from graphs.ingest.text_cleanup import escape_headings
from graphs.ingest.zip_checks import check_archive

__all__ = ["BLOCK_CHARS", "XLSX_BROKEN", "read_csv", "read_xlsx"]

BLOCK_CHARS = 500
"""About this many characters of rows per block (a block stays one chunk of 256 tokens)."""
XLSX_BROKEN = "This spreadsheet could not be read; it may be damaged or not really an .xlsx file."
_CSV_BROKEN = "This CSV file could not be read as a table"
_SNIFF_CHARS = 16 * 1024
_DELIMITERS = ",;\t|"
# openpyxl raises far more than its own error classes on malformed files
# (SyntaxError covers the XML parser's errors).
_XLSX_ERRORS = (
    InvalidFileException, zipfile.BadZipFile, KeyError, LookupError, ValueError, TypeError,
    AttributeError, RuntimeError, SyntaxError, EOFError, OSError, zlib.error,
)  # fmt: skip

Row = tuple[int, list[str]]


def read_csv(text: str, *, tab_separated: bool, max_bytes: int) -> str:
    """The sections of a CSV (or TSV) file's rows; `UnsupportedSourceError` if it is no table."""
    dialect: type[csv.Dialect] = csv.excel_tab if tab_separated else csv.excel
    if not tab_separated:
        try:
            dialect = csv.Sniffer().sniff(text[:_SNIFF_CHARS], delimiters=_DELIMITERS)
        except csv.Error:
            dialect = csv.excel
    try:
        records = csv.reader(io.StringIO(text, newline=""), dialect)
        rows = [(number, _cells(record)) for number, record in enumerate(records, start=1)]
    except csv.Error as exc:
        raise UnsupportedSourceError(f"{_CSV_BROKEN} ({exc}).") from exc
    return "\n\n".join(_sections(rows, None, _Budget(max_bytes)))


def read_xlsx(data: bytes, max_bytes: int) -> tuple[str | None, str]:
    """The workbook's title and the sections of every sheet's rows."""
    check_archive(data, max_bytes, kind="spreadsheet", broken=XLSX_BROKEN)
    try:
        return _read_xlsx(data, max_bytes)
    except DecompressionBombError:
        raise
    except _XLSX_ERRORS as exc:
        raise UnsupportedSourceError(XLSX_BROKEN) from exc


def _read_xlsx(data: bytes, max_bytes: int) -> tuple[str | None, str]:
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        budget = _Budget(max_bytes)
        sections: list[str] = []
        named = len(workbook.worksheets) > 1
        for sheet in workbook.worksheets:
            sheet.reset_dimensions()  # a declared A1:XFD1048576 must not pad every row
            rows = (
                (number, _cells(values))
                for number, values in enumerate(sheet.iter_rows(values_only=True), start=1)
            )
            sections += _sections(rows, sheet.title if named else None, budget)
        return workbook.properties.title, "\n\n".join(sections)
    finally:
        workbook.close()


class _Budget:
    """Characters left before the table counts as a decompression bomb."""

    def __init__(self, max_bytes: int) -> None:
        self._max = max_bytes
        self._left = max_bytes

    def spend(self, text: str) -> None:
        self._left -= len(text) + 1
        if self._left < 0:
            raise DecompressionBombError(
                f"This table holds more than {megabytes(self._max)} of text, "
                "more than Lore accepts for one document."
            )


def _cells(values: Iterable[Any]) -> list[str]:
    """A row's cells as clean one-line strings, trailing empty cells dropped."""
    cells = [_cell_text(value) for value in values]
    while cells and not cells[-1]:
        cells.pop()
    return cells


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="minutes").removesuffix(" 00:00")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


def _sections(rows: Iterable[Row], sheet: str | None, budget: _Budget) -> Iterator[str]:
    """Blocks of whole rows under their row-number heading, each led by the header row."""
    header: tuple[int, str] | None = None
    block: list[tuple[int, str]] = []
    size = 0
    for number, cells in rows:
        if not cells:
            continue
        line = escape_headings(" | ".join(cells))
        budget.spend(line)
        if header is None:
            header = (number, line)
            continue
        if block and size + len(line) > BLOCK_CHARS:
            yield _section(header[1], block, sheet)
            block, size = [], 0
        block.append((number, line))
        size += len(line) + 1
    if header is not None and not block:
        yield _section(header[1], [], sheet, header[0])  # a table of one row: its header
    elif header is not None:
        yield _section(header[1], block, sheet)


def _section(
    header: str, block: list[tuple[int, str]], sheet: str | None, header_row: int = 0
) -> str:
    first, last = (block[0][0], block[-1][0]) if block else (header_row, header_row)
    return "\n".join(
        (f"# {rows_heading(first, last, sheet)}", header, *(line for _, line in block))
    )
