"""The kinds of source Lore reads, how a source's kind is recognised, and what extraction gives.

Imports no parser: the bot's process recognises formats and receives `ExtractedText`
without ever loading a parser (only the extraction worker processes do, see
`graphs.ingest.extract`).
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath

from graphs.ingest.errors import UnsupportedSourceError

__all__ = [
    "READABLE_KINDS",
    "SUPPORTED_EXTENSIONS",
    "ExtractedText",
    "SourceFormat",
    "detect_format",
]


class SourceFormat(StrEnum):
    """The kinds of source Lore reads."""

    MARKDOWN = "markdown"
    TEXT = "text"
    HTML = "html"
    PDF = "pdf"
    DOCX = "docx"
    CSV = "csv"
    XLSX = "xlsx"
    PPTX = "pptx"
    EMAIL = "email"
    IMAGE = "image"
    AUDIO = "audio"


@dataclass(frozen=True, slots=True)
class ExtractedText:
    """Clean text of a source, its title, and whether the text is Markdown.

    `recognised` is set when a model read some of it (OCR, speech): such text cannot be had
    again cheaply or exactly, so it is kept beside the original. `language` is the language a
    model detected (an ISO 639-1 code), "" when none did.
    """

    title: str
    text: str
    is_markdown: bool
    recognised: bool = False
    language: str = ""


#: What Lore reads, as a person reads it in a message.
READABLE_KINDS = (
    "Markdown, plain text, HTML, PDF (scanned ones too), Word (.docx), CSV, Excel (.xlsx), "
    "PowerPoint (.pptx), e-mail (.eml), pictures (.png, .jpg, .webp) and recordings (.ogg, "
    ".opus, .mp3, .m4a, .wav, .mp4)"
)
# Recordings, and videos whose sound is transcribed (a Telegram video note is an MP4).
_AUDIO_EXTENSIONS = (
    *(".ogg", ".oga", ".opus", ".mp3", ".m4a", ".aac", ".wav", ".flac", ".weba", ".webm"),
    *(".mp4", ".mov", ".mkv"),
)
_AUDIO_TYPES = (
    *("audio/ogg", "audio/opus", "audio/mpeg", "audio/mp3", "audio/mp4", "audio/x-m4a"),
    *("audio/aac", "audio/wav", "audio/x-wav", "audio/wave", "audio/flac", "audio/webm"),
    *("video/mp4", "video/webm", "video/quicktime", "video/ogg"),
)
_EXTENSIONS: dict[str, SourceFormat] = {
    **dict.fromkeys((".md", ".markdown", ".mdown", ".mkd"), SourceFormat.MARKDOWN),
    **dict.fromkeys((".txt", ".text"), SourceFormat.TEXT),
    **dict.fromkeys((".html", ".htm", ".xhtml"), SourceFormat.HTML),
    ".pdf": SourceFormat.PDF,
    ".docx": SourceFormat.DOCX,
    **dict.fromkeys((".csv", ".tsv"), SourceFormat.CSV),
    ".xlsx": SourceFormat.XLSX,
    ".pptx": SourceFormat.PPTX,
    ".eml": SourceFormat.EMAIL,
    **dict.fromkeys(
        (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff"), SourceFormat.IMAGE
    ),
    **dict.fromkeys(
        _AUDIO_EXTENSIONS,
        SourceFormat.AUDIO,
    ),
}
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(_EXTENSIONS)
_OOXML = "application/vnd.openxmlformats-officedocument"
_DOCX_TYPE = f"{_OOXML}.wordprocessingml.document"
_CONTENT_TYPES: dict[str, SourceFormat] = {
    **dict.fromkeys(("text/markdown", "text/x-markdown"), SourceFormat.MARKDOWN),
    "text/plain": SourceFormat.TEXT,
    **dict.fromkeys(("text/html", "application/xhtml+xml"), SourceFormat.HTML),
    **dict.fromkeys(("application/pdf", "application/x-pdf"), SourceFormat.PDF),
    _DOCX_TYPE: SourceFormat.DOCX,
    **dict.fromkeys(("text/csv", "text/tab-separated-values"), SourceFormat.CSV),
    f"{_OOXML}.spreadsheetml.sheet": SourceFormat.XLSX,
    f"{_OOXML}.presentationml.presentation": SourceFormat.PPTX,
    "message/rfc822": SourceFormat.EMAIL,
    **dict.fromkeys(
        ("image/png", "image/jpeg", "image/webp", "image/gif", "image/bmp", "image/tiff"),
        SourceFormat.IMAGE,
    ),
    **dict.fromkeys(
        _AUDIO_TYPES,
        SourceFormat.AUDIO,
    ),
}
_AUDIO_MAGIC = (b"OggS", b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2", b"fLaC", b"\x1aE\xdf\xa3")
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*")
_ZIP_MARKERS: tuple[tuple[bytes, SourceFormat], ...] = (
    (b"word/", SourceFormat.DOCX),
    (b"xl/", SourceFormat.XLSX),
    (b"ppt/", SourceFormat.PPTX),
)
_SNIFF_BYTES = 1024


def detect_format(filename: str | None, content_type: str | None, head: bytes) -> SourceFormat:
    """Guess the format from the file extension, then the content type, then magic bytes."""
    if filename and (by_name := _EXTENSIONS.get(PurePath(filename).suffix.lower())):
        return by_name
    media_type = (content_type or "").split(";", 1)[0].strip().lower()
    if by_type := _CONTENT_TYPES.get(media_type):
        return by_type
    if by_magic := _sniff(head):
        return by_magic
    what = f'"{filename}"' if filename else "this source"
    raise UnsupportedSourceError(f"Lore cannot read {what}: it only reads {READABLE_KINDS} files.")


def _sniff(head: bytes) -> SourceFormat | None:
    start = head[:_SNIFF_BYTES]
    if b"%PDF-" in start:
        return SourceFormat.PDF
    if head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return SourceFormat.IMAGE
    if head.startswith(_AUDIO_MAGIC) or head[4:8] == b"ftyp" or head[8:12] == b"WAVE":
        return SourceFormat.AUDIO
    if head.startswith(b"PK\x03\x04"):
        # The first member's name (an Office file starts with [Content_Types].xml, then
        # its own folder: word/, xl/ or ppt/).
        return next((fmt for marker, fmt in _ZIP_MARKERS if marker in head), None)
    lowered = start.removeprefix(codecs.BOM_UTF8).lstrip().lower()
    if lowered.startswith(b"<") and (b"<!doctype html" in lowered or b"<html" in lowered):
        return SourceFormat.HTML
    return None
