"""Source files built in code for tests: PDFs with text, DOCX, blank and bomb files."""

from __future__ import annotations

import io
import re
import zipfile

import docx
import pypdf

__all__ = [
    "blank_pdf_bytes",
    "broken_pdf_bytes",
    "build_text_pdf",
    "build_zip",
    "docx_bytes",
    "pdf_bytes",
    "zip_bomb_docx_bytes",
]


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def build_text_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A minimal valid PDF with one Helvetica text object per page and a correct xref."""
    first_page = 4
    page_ids = [first_page + 2 * number for number in range(len(pages))]
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for page_id, lines in zip(page_ids, pages, strict=True):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_id + 1)
        )
        operators = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        operators += [f"({_pdf_escape(line)}) Tj T*" for line in lines]
        stream = "\n".join([*operators, "ET"]).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    info = ""
    if title is not None:
        objects.append(f"<< /Title ({_pdf_escape(title)}) >>".encode("latin-1"))
        info = f" /Info {len(objects)} 0 R"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\n"
    out += f"{trailer}startxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(out)


def build_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def pdf_bytes(lines: list[str], title: str | None = None) -> bytes:
    """A one-page PDF with these lines of text."""
    return build_text_pdf([lines], title)


def blank_pdf_bytes() -> bytes:
    """A PDF whose only page has no text layer, like a scan."""
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=612, height=792)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def docx_bytes(title: str, sections: list[tuple[str, str]]) -> bytes:
    """A Word document: a title, then one heading and paragraph per section."""
    document = docx.Document()
    document.add_heading(title, 0)
    for heading, paragraph in sections:
        document.add_heading(heading, 1)
        document.add_paragraph(paragraph)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def zip_bomb_docx_bytes() -> bytes:
    """A tiny .docx whose document.xml would inflate to 50 MB."""
    return build_zip({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"\0" * 50_000_000})


def broken_pdf_bytes() -> bytes:
    """A PDF whose startxref pointer is off: pypdf reads it, logging a warning."""
    data = pdf_bytes(["The kettle is descaled on Mondays."], title="Kitchen")
    return re.sub(rb"startxref\s+(\d+)", lambda m: b"startxref\n%d" % (int(m.group(1)) + 7), data)
