"""Extraction of Markdown, text, HTML, PDF and DOCX sources into clean text and a title."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pypdf
import pytest

from graphs.ingest.errors import (
    DecompressionBombError,
    EmptyDocumentError,
    NotUtf8Error,
    UnsupportedSourceError,
)
from graphs.ingest.extract import extract_text
from graphs.ingest.formats import ExtractedText, SourceFormat, detect_format
from tests.sample_files import blank_pdf_bytes, build_text_pdf, build_zip

CAP = 10_000_000


def _extract(path: Path, fmt: SourceFormat, *, charset: str | None = None) -> ExtractedText:
    return extract_text(
        path.read_bytes(),
        fmt,
        filename=path.name,
        charset=charset,
        max_decompressed_bytes=CAP,
    )


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --- fixtures built in the tests ---------------------------------------------------------


def build_docx(*, core_title: str = "") -> bytes:
    document = docx.Document()
    document.core_properties.title = core_title
    document.add_heading("Garden Handbook", 0)
    document.add_paragraph("An introduction to balcony gardening.")
    document.add_heading("Tomatoes", 1)
    document.add_paragraph("Tomatoes need six hours of sun.")
    document.add_heading("Watering", 2)
    document.add_paragraph("Water in the morning", style="List Bullet")
    document.add_paragraph("Feed weekly", style="List Bullet")
    document.add_paragraph("#hashtag is not a heading")
    table = document.add_table(rows=2, cols=2)
    for row, cells in zip(table.rows, (("Plant", "Litres"), ("Tomato", "20")), strict=True):
        for cell, value in zip(row.cells, cells, strict=True):
            cell.text = value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


ARTICLE_HTML = b"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Growing Tomatoes | Garden Blog</title></head>
<body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li>
<li><a href="/shop">Shop seeds</a></li></ul></nav></header>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
Accept all cookies?</div>
<main><article>
<h1>Growing Tomatoes on a Balcony</h1>
<p>Tomatoes need at least six hours of direct sunlight every day. A south-facing balcony is
ideal, but east or west will work if you choose a compact variety.</p>
<h2>Choosing containers</h2>
<p>Use a pot of at least twenty litres per plant. Smaller pots dry out too quickly in summer
and the roots suffer, which leads to blossom end rot and split fruit.</p>
<p>Drainage holes are essential; standing water invites fungal disease.</p>
<h2>Watering</h2>
<p>Water deeply in the morning, and feed with a potassium-rich fertiliser once the first
flowers appear. Consistency matters more than quantity.</p>
</article></main>
<aside><h3>Related posts</h3><ul><li><a href="/p/1">Ten herbs for shade</a></li></ul></aside>
<footer><p>Copyright 2024 Garden Blog. All rights reserved.</p>
<a href="/privacy">Privacy policy</a></footer>
</body></html>
"""


# --- detect_format -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "content_type", "head", "expected"),
    [
        ("notes.md", None, b"", SourceFormat.MARKDOWN),
        ("NOTES.MARKDOWN", None, b"", SourceFormat.MARKDOWN),
        ("notes.md", "text/html", b"<html>", SourceFormat.MARKDOWN),
        ("log.txt", None, b"", SourceFormat.TEXT),
        ("page.htm", None, b"", SourceFormat.HTML),
        ("paper.pdf", None, b"", SourceFormat.PDF),
        ("report.docx", None, b"", SourceFormat.DOCX),
        (None, "text/html; charset=utf-8", b"", SourceFormat.HTML),
        ("index.php", "text/plain", b"", SourceFormat.TEXT),
        (None, "text/markdown", b"", SourceFormat.MARKDOWN),
        (None, "application/pdf", b"", SourceFormat.PDF),
        ("download", "application/octet-stream", b"%PDF-1.7\n", SourceFormat.PDF),
        (None, None, b"\xef\xbb\xbf  <!DOCTYPE html><html>", SourceFormat.HTML),
        (None, None, b"PK\x03\x04....word/document.xml....", SourceFormat.DOCX),
        ("sheet.xlsx", None, b"", SourceFormat.XLSX),
        (None, None, b"PK\x03\x04....xl/workbook.xml....", SourceFormat.XLSX),
        ("deck.pptx", None, b"", SourceFormat.PPTX),
        (None, None, b"PK\x03\x04....ppt/presentation.xml", SourceFormat.PPTX),
        ("people.csv", None, b"", SourceFormat.CSV),
        ("people.tsv", None, b"", SourceFormat.CSV),
        (None, "text/csv", b"", SourceFormat.CSV),
        ("mail.eml", None, b"", SourceFormat.EMAIL),
        (None, "message/rfc822", b"", SourceFormat.EMAIL),
    ],
)
def test_detect_format(
    filename: str | None, content_type: str | None, head: bytes, expected: SourceFormat
) -> None:
    assert detect_format(filename, content_type, head) is expected


def test_detect_format_on_a_real_docx_head() -> None:
    assert detect_format(None, None, build_docx()[:2048]) is SourceFormat.DOCX


@pytest.mark.parametrize(
    ("filename", "content_type", "head"),
    [
        ("program.exe", "application/octet-stream", b"MZ\x90\x00"),
        (None, None, b"just some bytes"),
        ("archive.zip", "application/zip", b"PK\x03\x04data/file.bin"),
    ],
)
def test_unknown_format_is_refused_naming_what_lore_reads(
    filename: str | None, content_type: str | None, head: bytes
) -> None:
    with pytest.raises(UnsupportedSourceError, match=r"Markdown, plain text, HTML, PDF"):
        detect_format(filename, content_type, head)


# --- Markdown and plain text -------------------------------------------------------------


def test_markdown_title_is_the_first_h1_outside_code(tmp_path: Path) -> None:
    source = "Some preface\n\n```\n# not the title\n```\n\n## Intro\n\n# Real Title\n\nBody.\n"
    result = _extract(_write(tmp_path, "doc.md", source.encode()), SourceFormat.MARKDOWN)
    assert result.title == "Real Title"
    assert result.is_markdown
    assert result.text == source.strip()


def test_text_is_cleaned_bom_newlines_nuls_blank_runs_and_trailing_spaces(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbfFirst line   \r\nsecond\x00 line\r\n\r\n\r\n\r\n\r\nthird\t \rfourth\n\n\n"
    result = _extract(_write(tmp_path, "a.txt", raw), SourceFormat.TEXT)
    assert result.text == "First line\nsecond line\n\nthird\nfourth"
    assert result.title == "First line"
    assert not result.is_markdown


def test_plain_text_title_is_trimmed_first_non_empty_line(tmp_path: Path) -> None:
    long_line = " ".join(["word"] * 60)
    result = _extract(
        _write(tmp_path, "a.txt", f"\n\n   {long_line}\nrest".encode()), SourceFormat.TEXT
    )
    assert result.title.endswith("…")
    assert len(result.title) <= 121
    assert long_line.startswith(result.title.removesuffix("…"))


def test_markdown_without_h1_uses_first_line_without_hashes(tmp_path: Path) -> None:
    result = _extract(_write(tmp_path, "x.md", b"## Setup notes\n\ntext"), SourceFormat.MARKDOWN)
    assert result.title == "Setup notes"


def test_non_utf8_text_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "latin.txt", "caf\u00e9 cr\u00e8me".encode("latin-1"))
    with pytest.raises(NotUtf8Error, match="not UTF-8"):
        _extract(path, SourceFormat.TEXT)


def test_declared_latin1_charset_is_honoured(tmp_path: Path) -> None:
    path = _write(tmp_path, "latin.txt", "caf\u00e9 cr\u00e8me".encode("latin-1"))
    assert _extract(path, SourceFormat.TEXT, charset="ISO-8859-1").text == "caf\u00e9 cr\u00e8me"


def test_unknown_declared_charset_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NotUtf8Error, match="character set"):
        _extract(_write(tmp_path, "a.txt", b"hello"), SourceFormat.TEXT, charset="klingon-8")


@pytest.mark.parametrize("raw", [b"", b"   \n\t\r\n  \x00 ", b"\xef\xbb\xbf\n"])
def test_empty_or_whitespace_text_is_refused(tmp_path: Path, raw: bytes) -> None:
    with pytest.raises(EmptyDocumentError, match="empty"):
        _extract(_write(tmp_path, "blank.md", raw), SourceFormat.MARKDOWN)


# --- HTML --------------------------------------------------------------------------------


def test_html_keeps_the_article_and_drops_boilerplate(tmp_path: Path) -> None:
    result = _extract(_write(tmp_path, "page.html", ARTICLE_HTML), SourceFormat.HTML)
    assert result.is_markdown
    assert result.title == "Growing Tomatoes on a Balcony"
    assert "six hours of direct sunlight" in result.text
    assert "Drainage holes are essential" in result.text
    assert "## Choosing containers" in result.text
    for boilerplate in ("cookies", "About us", "Shop seeds", "Copyright", "Privacy policy"):
        assert boilerplate not in result.text


def test_html_that_trafilatura_skips_falls_back_to_body_text(tmp_path: Path) -> None:
    page = (
        b"<html><head><title>Shopping</title><style>p {color: red}</style></head><body>"
        b"<nav><a href='/'>Home</a></nav><ul><li>Milk</li><li>Bread</li></ul>"
        b"<script>var tracking = 1;</script></body></html>"
    )
    result = _extract(_write(tmp_path, "list.html", page), SourceFormat.HTML)
    assert result.text == "Milk\nBread"
    assert result.title == "Shopping"
    assert not result.is_markdown


def test_html_with_declared_charset(tmp_path: Path) -> None:
    page = "<html><body><p>Cr\u00e8me br\u00fbl\u00e9e recipe.</p></body></html>"
    path = _write(tmp_path, "p.html", page.encode("latin-1"))
    result = _extract(path, SourceFormat.HTML, charset="latin-1")
    assert "Cr\u00e8me br\u00fbl\u00e9e recipe." in result.text


def test_html_without_text_is_refused(tmp_path: Path) -> None:
    page = b"<html><head><title>x</title></head><body><script>1</script></body></html>"
    with pytest.raises(EmptyDocumentError, match="no readable text"):
        _extract(_write(tmp_path, "e.html", page), SourceFormat.HTML)


# --- PDF ---------------------------------------------------------------------------------


def test_hand_built_pdf_is_valid_for_strict_pypdf() -> None:
    reader = pypdf.PdfReader(io.BytesIO(build_text_pdf([["Hello"]], "T")), strict=True)
    assert len(reader.pages) == 1


def test_pdf_pages_each_have_their_heading_and_the_title_comes_from_metadata(
    tmp_path: Path,
) -> None:
    pdf = build_text_pdf(
        [["Quarterly report", "Revenue grew (a lot)."], ["# Second page text."]],
        title="Q3 Report",
    )
    result = _extract(_write(tmp_path, "q3.pdf", pdf), SourceFormat.PDF)
    assert result.title == "Q3 Report"
    assert result.is_markdown
    assert not result.recognised  # a text layer, nothing OCR'd
    heading, first, heading_2, second = result.text.split("\n\n")
    assert (heading, heading_2) == ("# Page 1", "# Page 2")
    assert "Quarterly report" in first
    assert "Revenue grew (a lot)." in first
    assert second == "\\# Second page text."  # a line of the page, never a heading


def test_pdf_without_metadata_title_uses_first_line(tmp_path: Path) -> None:
    pdf = build_text_pdf([["Minutes of the meeting", "Attendees: all"]])
    assert _extract(_write(tmp_path, "m.pdf", pdf), SourceFormat.PDF).title == (
        "Minutes of the meeting"
    )


def test_pdf_without_text_layer_is_refused_as_scanned(tmp_path: Path) -> None:
    path = _write(tmp_path, "scan.pdf", blank_pdf_bytes())
    with pytest.raises(EmptyDocumentError, match="scanned"):
        _extract(path, SourceFormat.PDF)


def _encrypted(pdf: bytes, user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_password_protected_pdf_is_refused_politely(tmp_path: Path) -> None:
    path = _write(tmp_path, "locked.pdf", _encrypted(build_text_pdf([["Secret"]]), "secret"))
    with pytest.raises(UnsupportedSourceError, match="password-protected"):
        _extract(path, SourceFormat.PDF)


def test_pdf_encrypted_with_empty_user_password_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, "open.pdf", _encrypted(build_text_pdf([["Open sesame"]]), ""))
    assert _extract(path, SourceFormat.PDF).text == "# Page 1\n\nOpen sesame"


def test_damaged_pdf_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "broken.pdf", b"%PDF-1.4\nthis is not a pdf at all")
    with pytest.raises(UnsupportedSourceError, match="could not be read"):
        _extract(path, SourceFormat.PDF)


def test_pdf_with_more_text_than_the_cap_is_refused(tmp_path: Path) -> None:
    pdf = build_text_pdf([["A line of text that is long enough."] * 20])
    with pytest.raises(DecompressionBombError):
        extract_text(pdf, SourceFormat.PDF, filename="big.pdf", max_decompressed_bytes=100)


# --- DOCX --------------------------------------------------------------------------------


def test_docx_headings_lists_and_tables_become_markdown(tmp_path: Path) -> None:
    path = _write(tmp_path, "handbook.docx", build_docx(core_title="The Handbook"))
    result = _extract(path, SourceFormat.DOCX)
    assert result.is_markdown
    assert result.title == "The Handbook"
    assert result.text == (
        "# Garden Handbook\n\n"
        "An introduction to balcony gardening.\n\n"
        "# Tomatoes\n\n"
        "Tomatoes need six hours of sun.\n\n"
        "## Watering\n\n"
        "- Water in the morning\n"
        "- Feed weekly\n\n"
        "\\#hashtag is not a heading\n\n"
        "Plant | Litres\n"
        "Tomato | 20"
    )


def test_docx_without_core_title_uses_first_heading(tmp_path: Path) -> None:
    result = _extract(_write(tmp_path, "h.docx", build_docx()), SourceFormat.DOCX)
    assert result.title == "Garden Handbook"


def test_docx_zip_bomb_is_refused_before_parsing(tmp_path: Path) -> None:
    bomb = build_zip({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"\0" * 50_000_000})
    assert len(bomb) < 200_000
    path = _write(tmp_path, "bomb.docx", bomb)
    assert detect_format(None, None, bomb) is SourceFormat.DOCX
    with pytest.raises(DecompressionBombError, match="expand"):
        extract_text(bomb, SourceFormat.DOCX, filename=path.name, max_decompressed_bytes=CAP)


def test_docx_with_absurd_compression_ratio_is_refused_under_the_size_cap() -> None:
    bomb = build_zip({"word/document.xml": b"\0" * 5_000_000})
    with pytest.raises(DecompressionBombError, match="zip bomb"):
        extract_text(bomb, SourceFormat.DOCX, filename="r.docx", max_decompressed_bytes=CAP)


def test_real_docx_over_a_small_cap_is_refused() -> None:
    with pytest.raises(DecompressionBombError):
        extract_text(
            build_docx(), SourceFormat.DOCX, filename="d.docx", max_decompressed_bytes=1000
        )


def test_docx_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "fake.docx", b"this is plain text pretending")
    with pytest.raises(UnsupportedSourceError, match="could not be read"):
        _extract(path, SourceFormat.DOCX)


def test_zip_that_is_not_a_word_document_is_refused() -> None:
    archive = build_zip({"hello.txt": b"hi"})
    with pytest.raises(UnsupportedSourceError, match="could not be read"):
        extract_text(archive, SourceFormat.DOCX, filename="x.docx", max_decompressed_bytes=CAP)


def test_docx_without_text_is_refused() -> None:
    buffer = io.BytesIO()
    docx.Document().save(buffer)
    with pytest.raises(EmptyDocumentError, match="no text"):
        extract_text(
            buffer.getvalue(), SourceFormat.DOCX, filename="e.docx", max_decompressed_bytes=CAP
        )
