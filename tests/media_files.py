"""Pictures, scans and hostile media built in code for tests and benchmarks: text drawn with
Pillow's own font (no system font needed), scanned-looking PDFs whose pages are pictures,
a PNG that declares 40,000 x 40,000 pixels in a few hundred bytes, a scan of many pages.
"""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image, ImageDraw, ImageFont

from tests.sample_files import build_text_pdf

__all__ = ["drawn_text", "mixed_pdf", "png_bomb", "png_bytes", "scanned_pdf"]


def drawn_text(
    lines: list[str], *, size: tuple[int, int] = (900, 260), font_size: int = 32
) -> Image.Image:
    """A white picture with `lines` of black text, one under the other."""
    picture = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(picture)
    font = ImageFont.load_default(size=font_size)
    for number, line in enumerate(lines):
        draw.text((24, 24 + int(font_size * 1.75) * number), line, fill="black", font=font)
    return picture


def png_bytes(picture: Image.Image) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    return buffer.getvalue()


def scanned_pdf(
    pages: list[list[str]], *, copies: int = 1, size: tuple[int, int] = (1240, 1754)
) -> bytes:
    """A PDF whose pages are black-and-white pictures of text (no text layer), like a scanner
    makes, A4 at 150 dpi by default; with `copies`, the pages repeated that many times."""
    pictures = [drawn_text(lines, size=size, font_size=40).convert("1") for lines in pages]
    pictures *= copies
    buffer = io.BytesIO()
    pictures[0].save(buffer, "PDF", save_all=True, append_images=pictures[1:], resolution=150)
    return buffer.getvalue()


def mixed_pdf(text_page: list[str], scanned_page: list[str]) -> bytes:
    """A PDF whose first page has a text layer and whose second is a scan."""
    import pypdf  # noqa: PLC0415 - only this fixture joins PDFs

    writer = pypdf.PdfWriter()
    for part in (build_text_pdf([text_page]), scanned_pdf([scanned_page])):
        writer.append(pypdf.PdfReader(io.BytesIO(part)))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_bomb(width: int = 40_000, height: int = 40_000) -> bytes:
    """A valid PNG header declaring `width` x `height` RGB pixels (4.8 GB for the default),
    with only the start of its first row: a few hundred bytes on the wire."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    first_row = zlib.compress(b"\x00" + bytes(3 * min(width, 4096)))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", first_row)
        + _chunk(b"IEND", b"")
    )


def wav_declaring(seconds: float, *, rate: int = 16_000) -> bytes:
    """A WAV whose header declares `seconds` of 16-bit mono sound but which holds one second
    of silence: a long recording as its metadata announces it."""
    declared = int(seconds * rate) * 2
    header = b"RIFF" + struct.pack("<I", 36 + declared) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
    return header + b"data" + struct.pack("<I", declared) + bytes(rate * 2)


def _ogg_crc(page: bytes) -> int:
    """The Ogg page checksum: CRC-32, polynomial 0x04C11DB7, not reflected, initial 0."""
    crc = 0
    for byte in page:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return crc


def ogg_declaring(recording: bytes, seconds: float) -> bytes:
    """An Ogg/Opus recording whose last page claims it ends after `seconds` (its granule
    position), as a 3-hour file announces itself: a few KB that declare hours of sound."""
    last = recording.rindex(b"OggS")
    page = bytearray(recording[last:])
    page[6:14] = struct.pack("<q", int(seconds * 48_000))
    page[22:26] = bytes(4)
    page[22:26] = struct.pack("<I", _ogg_crc(bytes(page)))
    return recording[:last] + bytes(page)
