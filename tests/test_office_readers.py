"""Tables (CSV, XLSX), slide decks (PPTX) and e-mails (.eml) become sections a citation can
name: row blocks with the header repeated, one section per slide, the mail's headers and body.
Files are built in the tests; the readers run as the extraction worker runs them."""

from __future__ import annotations

import io
from datetime import datetime

import openpyxl
import pptx
import pytest
from pptx.util import Inches

from bot.app import Lore
from graphs.ingest.chunking import iter_headings
from graphs.ingest.errors import (
    DecompressionBombError,
    EmptyDocumentError,
    NotUtf8Error,
    UnsupportedSourceError,
)
from graphs.ingest.extract import extract_text
from graphs.ingest.formats import ExtractedText, SourceFormat, detect_format
from graphs.ingest.locations import passage_location
from tests.chat_turns import ask, invite, remember
from tests.sample_files import build_zip

CAP = 5_000_000
NAIVE_TIME = datetime(2026, 3, 1, 9, 30)  # noqa: DTZ001 - a spreadsheet's times carry no zone


def _read(data: bytes, fmt: SourceFormat, name: str, cap: int = CAP) -> ExtractedText:
    return extract_text(data, fmt, filename=name, max_decompressed_bytes=cap)


def _sections(text: str) -> dict[str, str]:
    """Each heading's title and the text under it."""
    headings = list(iter_headings(text))
    bodies = {}
    for heading, following in zip(headings, [*headings[1:], None], strict=True):
        end = following.start if following is not None else len(text)
        bodies[heading.title] = text[heading.start : end].split("\n", 1)[1].strip()
    return bodies


def workbook(sheets: dict[str, list[list[object]]], title: str | None = None) -> bytes:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
    if title:
        book.properties.title = title
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


# --- tables ------------------------------------------------------------------------------


def test_a_csv_becomes_row_blocks_each_led_by_the_header_and_cited_by_row_numbers() -> None:
    rows = ["name;room;key"] + [
        f"Person {n};{200 + n};{'yes' if n % 2 else 'no'}" for n in range(60)
    ]
    extracted = _read("\n".join(rows).encode(), SourceFormat.CSV, "keys.csv")
    sections = _sections(extracted.text)
    assert extracted.title == "keys"
    assert extracted.is_markdown
    assert len(sections) >= 3  # 60 rows do not fit one passage
    for heading, body in sections.items():
        assert heading.startswith("Rows ")
        assert body.startswith("name | room | key\n")
    first = next(iter(sections))
    assert first.startswith("Rows 2-")
    assert "Person 0 | 200 | no" in sections[first]
    assert list(sections)[-1].endswith("-61")
    assert passage_location("csv", (first,)) == first.replace("Rows", "rows")


def test_a_tsv_is_read_with_tabs_and_a_quoted_field_may_hold_a_newline() -> None:
    data = b'city\tnote\nBerlin\t"two\nlines"\nParis\tone line\n'
    extracted = _read(data, SourceFormat.CSV, "cities.tsv")
    assert extracted.text == "# Rows 2-3\ncity | note\nBerlin | two lines\nParis | one line"


def test_a_csv_that_is_not_utf8_is_refused() -> None:
    with pytest.raises(NotUtf8Error, match="UTF-8"):
        _read("name\nJürgen\n".encode("latin-1"), SourceFormat.CSV, "people.csv")


def test_an_xlsx_keeps_real_row_numbers_sheet_names_dates_and_skips_empty_rows() -> None:
    data = workbook(
        {
            "Keys": [["Name", "Room"], ["Alice", 204], [], [], ["Bob", 3.0]],
            "Visits": [["Who", "When"], ["Carol", NAIVE_TIME]],
        },
        title="Building",
    )
    assert detect_format(None, None, data[:2048]) is SourceFormat.XLSX
    extracted = _read(data, SourceFormat.XLSX, "building.xlsx")
    sections = _sections(extracted.text)
    assert extracted.title == "Building"
    assert sections == {
        "Keys, rows 2-5": "Name | Room\nAlice | 204\nBob | 3",
        "Visits, row 2": "Who | When\nCarol | 2026-03-01 09:30",
    }
    assert passage_location("xlsx", ("Keys, rows 2-5",)) == "Keys, rows 2-5"
    assert passage_location("xlsx", ("Visits, row 2",)) == "Visits, row 2"


def test_a_single_sheet_has_no_sheet_name_and_a_header_only_table_is_kept() -> None:
    extracted = _read(workbook({"Sheet": [["Only", "a", "header"]]}), SourceFormat.XLSX, "h.xlsx")
    assert extracted.text == "# Row 1\nOnly | a | header"
    assert extracted.title == "h"


def test_an_empty_workbook_is_refused_and_nothing_is_invented() -> None:
    with pytest.raises(EmptyDocumentError, match="no cells"):
        _read(workbook({"Sheet": []}), SourceFormat.XLSX, "empty.xlsx")


def test_an_xlsx_zip_bomb_and_a_broken_xlsx_are_refused_before_parsing() -> None:
    bomb = build_zip({"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"\0" * 6_000_000})
    with pytest.raises(DecompressionBombError, match="spreadsheet would expand"):
        _read(bomb, SourceFormat.XLSX, "bomb.xlsx")
    with pytest.raises(UnsupportedSourceError, match="spreadsheet could not be read"):
        _read(b"not a zip at all", SourceFormat.XLSX, "broken.xlsx")
    with pytest.raises(UnsupportedSourceError, match="spreadsheet could not be read"):
        _read(build_zip({"xl/workbook.xml": b"<nonsense"}), SourceFormat.XLSX, "odd.xlsx")


def test_a_table_with_more_text_than_the_cap_is_refused() -> None:
    rows = [["cell " * 20] for _ in range(200)]
    with pytest.raises(DecompressionBombError, match="more than"):
        _read(workbook({"Sheet": rows}), SourceFormat.XLSX, "big.xlsx", cap=10_000)


# --- slides ------------------------------------------------------------------------------


def deck() -> bytes:
    presentation = pptx.Presentation()
    presentation.core_properties.title = ""
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Quarterly numbers"
    first.placeholders[1].text = "Revenue grew 12 percent\n# a line, not a heading"
    first.notes_slide.notes_text_frame.text = "Thank Anna for the figures."
    second = presentation.slides.add_slide(presentation.slide_layouts[6])  # blank: no title
    box = second.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "The boiler key hangs by the printer."
    table = second.shapes.add_table(2, 2, Inches(1), Inches(3), Inches(4), Inches(1)).table
    for (row, column), value in {
        (0, 0): "Room",
        (0, 1): "Key",
        (1, 0): "204",
        (1, 1): "yes",
    }.items():
        table.cell(row, column).text = value
    presentation.slides.add_slide(presentation.slide_layouts[6])  # an empty slide
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def test_a_deck_becomes_one_section_per_slide_with_tables_and_notes() -> None:
    data = deck()
    assert detect_format(None, None, data[:2048]) is SourceFormat.PPTX
    extracted = _read(data, SourceFormat.PPTX, "review.pptx")
    sections = _sections(extracted.text)
    assert extracted.title == "Quarterly numbers"
    assert list(sections) == ["Slide 1: Quarterly numbers", "Slide 2"]
    assert sections["Slide 1: Quarterly numbers"] == (
        "Revenue grew 12 percent\n\\# a line, not a heading\n\nNotes: Thank Anna for the figures."
    )
    assert sections["Slide 2"] == "The boiler key hangs by the printer.\n\nRoom | Key\n204 | yes"
    assert passage_location("pptx", ("Slide 1: Quarterly numbers",)) == "slide 1"
    assert passage_location("markdown", ("Slide 1: Quarterly numbers",)) == ""


def test_a_broken_deck_is_refused() -> None:
    with pytest.raises(UnsupportedSourceError, match="slide deck could not be read"):
        _read(build_zip({"ppt/presentation.xml": b"<x"}), SourceFormat.PPTX, "x.pptx")


# --- e-mail ------------------------------------------------------------------------------

MAIL = b"""From: Anna Berg <anna@example.org>
To: Bob <bob@example.org>
Subject: Boiler room key
Date: Tue, 01 Dec 2026 10:00:00 +0100
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="XX"

--XX
Content-Type: multipart/alternative; boundary="YY"

--YY
Content-Type: text/plain; charset=utf-8

The key hangs next to the printer.
# a line, not a heading
--YY
Content-Type: text/html; charset=utf-8

<p>The key hangs <b>next to the printer</b>.</p>
--YY--
--XX
Content-Type: text/plain; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"

Ask the caretaker on Mondays.
--XX
Content-Type: application/pdf; name="scan.pdf"
Content-Disposition: attachment; filename="scan.pdf"
Content-Transfer-Encoding: base64

JVBERi0=
--XX--
"""


def test_an_email_keeps_sender_date_subject_body_and_text_attachments() -> None:
    extracted = _read(MAIL, SourceFormat.EMAIL, "key.eml")
    assert extracted.title == "Boiler room key"
    assert extracted.text == (
        "# Boiler room key\n\n"
        "From: Anna Berg <anna@example.org>\nTo: Bob <bob@example.org>\n"
        "Date: Tue, 01 Dec 2026 10:00:00 +0100\n\n"
        "The key hangs next to the printer.\n\\# a line, not a heading\n\n"
        "## Attachment: notes.txt\n\nAsk the caretaker on Mondays.\n\n"
        "Attachments not read: scan.pdf"
    )


def test_an_html_only_email_is_read_as_text_and_a_subjectless_one_is_titled_by_sender() -> None:
    mail = (
        b"From: Carol <carol@example.org>\nContent-Type: text/html; charset=utf-8\n\n"
        b"<html><body><p>Lunch is at <b>noon</b> on Friday in the garden.</p></body></html>\n"
    )
    extracted = _read(mail, SourceFormat.EMAIL, "lunch.eml")
    assert extracted.title == "E-mail from Carol <carol@example.org>"
    assert "Lunch is at" in extracted.text
    assert "noon" in extracted.text
    assert "<b>" not in extracted.text


def test_text_that_is_no_email_and_an_email_without_text_are_refused() -> None:
    with pytest.raises(UnsupportedSourceError, match="e-mail could not be read"):
        _read(b"just a line of text\n", SourceFormat.EMAIL, "x.eml")
    with pytest.raises(EmptyDocumentError, match="no text"):
        _read(b"From: a@example.org\nSubject: empty\n\n", SourceFormat.EMAIL, "y.eml")


# --- where a passage is ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "path", "expected"),
    [
        ("audio", ("1:23",), "at 1:23"),
        ("audio", ("1:02:03",), "at 1:02:03"),
        ("audio", ("Intro",), ""),
        ("pdf", ("Page 3",), "page 3"),
        ("pdf", ("Chapter 1",), ""),
        ("csv", ("Rows 2-21",), "rows 2-21"),
        ("csv", ("Row 7",), "row 7"),
        ("markdown", ("Page 3",), ""),
        ("pdf", (), ""),
    ],
)
def test_a_citation_names_the_place_only_where_a_reader_wrote_it(
    fmt: str, path: tuple[str, ...], expected: str
) -> None:
    assert passage_location(fmt, path) == expected


# --- through the core: the citation says where -------------------------------------------


async def test_an_xlsx_row_and_a_slide_are_cited_with_where_they_are(lore: Lore) -> None:
    member = await invite(lore.bot, "alice")
    rooms = [["Name", "Room", "Badge"]] + [
        [f"Person {n}", 100 + n, f"B-{n:03d}"] for n in range(80)
    ]
    rooms[57] = ["Zelda Quartermaine", 731, "B-731"]
    sheet = workbook({"Rooms": rooms, "Other": [["a"], ["b"]]})
    saved = await remember(lore.bot, member, data=sheet, file_name="rooms.xlsx")
    assert saved.chunk_count > 2
    await remember(lore.bot, member, data=deck(), file_name="review.pptx")

    turn = await ask(lore.bot, member, "Which room is Zelda Quartermaine in?")
    cited = [c for c in turn.done.citations if c.title == "rooms"]
    assert cited, turn.done
    assert cited[0].location.startswith("Rooms, rows ")
    first, last = (int(n) for n in cited[0].location.split("rows ")[1].split("-"))
    assert first <= 58 <= last  # Zelda is on spreadsheet row 58 (the header is row 1)

    turn = await ask(lore.bot, member, "Where does the boiler key hang?")
    slides = [c for c in turn.done.citations if c.title == "Quarterly numbers"]
    assert [c.location for c in slides] == ["slide 2"], turn.done
