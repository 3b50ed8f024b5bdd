"""Hostile sources built in code, for tests and `benchmarks/hostile_inputs.py`.

- `nested_gzip_bomb(mib)`: a body sent as `Content-Encoding: gzip, gzip` that decodes to
  `mib` MiB of zeros (1 GiB from about 1.8 KB);
- `pdf_drawing_bomb(pages, operators)`: a few KB of PDF whose pages all share one large
  content stream of drawing operators (and a word of text, so extraction parses it);
- `docx_memory_bomb(xml_bytes)`: a valid .docx whose document.xml holds millions of empty
  paragraphs, compressed modestly (ratio < 200, under the zip-bomb checks), so that
  parsing it needs hundreds of MB;
- `long_text(lines)`: a plain-text file of many short lines.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib

from tests.sample_files import docx_bytes

__all__ = ["docx_memory_bomb", "long_text", "nested_gzip_bomb", "pdf_drawing_bomb"]

_MIB = 1024 * 1024


def _gzip_of_zeros(mib: int) -> bytes:
    """A gzip member of `mib` MiB of zeros, built from one repeated deflate block.

    After a full flush a deflate stream starts over, so compressing the same MiB again
    gives the same bytes: compress it once, repeat it, end the stream and add the trailer.
    """
    zeros = bytes(_MIB)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    ending = deflate.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, (mib * _MIB) & 0xFFFFFFFF)
    return header + block * mib + ending + trailer


def nested_gzip_bomb(mib: int) -> bytes:
    """`gzip(gzip(zeros))`: send it with `Content-Encoding: gzip, gzip`."""
    outer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return outer.compress(_gzip_of_zeros(mib)) + outer.flush()


def pdf_drawing_bomb(pages: int, operators: int) -> bytes:
    """A PDF of `pages` pages sharing one Flate content stream of `operators` line strokes."""
    stream = zlib.compress(
        b"BT /F1 12 Tf 72 720 Td (Hi) Tj ET\n" + b"0 0 m 1 1 l S\n" * operators, 9
    )
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    first_page = 4
    kids = " ".join(f"{first_page + n} 0 R" for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 " + font + b" >> >> /Contents 3 0 R >>"
    )
    objects += [page] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n"
    out += f"{trailer}startxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(out)


def docx_memory_bomb(xml_bytes: int) -> bytes:
    """A .docx whose document.xml is about `xml_bytes` of empty paragraphs.

    One paragraph in 150 carries a random revision id, which keeps the compression
    ratio near 150 (under the 200 a zip-bomb check refuses).
    """
    rng = random.Random(7)
    with zipfile.ZipFile(io.BytesIO(docx_bytes("Report", [("Intro", "Hello.")]))) as source:
        members = {info.filename: source.read(info.filename) for info in source.infolist()}
    head, _, tail = members["word/document.xml"].partition(b"<w:body>")
    parts, size = [], 0
    while size < xml_bytes:
        part = b"<w:p/>" * 150 + b'<w:p w:rsidR="%08X"/>' % rng.getrandbits(32)
        parts.append(part)
        size += len(part)
    members["word/document.xml"] = head + b"<w:body>" + b"".join(parts) + tail
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def long_text(lines: int) -> bytes:
    """`lines` short lines of plain text (a log or a word list)."""
    return "".join(f"line {n}: the quick brown fox {n % 97}\n" for n in range(lines)).encode()
