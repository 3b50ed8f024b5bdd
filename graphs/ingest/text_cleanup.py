"""What every reader does to the text it found: decode it, tidy it, refuse it empty, title it.

Shared by the readers in the extraction workers (`graphs.ingest.extract` and the format
modules it loads); imports no parser.
"""

from __future__ import annotations

import codecs
import re
from pathlib import PurePath

from graphs.ingest.errors import EmptyDocumentError, NotUtf8Error

__all__ = ["clean", "codec_name", "decode", "escape_headings", "pick_title", "short_title"]

_TITLE_MAX = 120
_UNTITLED = "Untitled"

_TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.MULTILINE)
_BLANK_RUN = re.compile(r"\n{3,}")
_HEADING_START = re.compile(r"^([ \t]*)#", re.MULTILINE)


def clean(text: str, empty_message: str) -> str:
    """Normalise newlines, drop NULs and trailing spaces, collapse blank runs; refuse empties."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = _BLANK_RUN.sub("\n\n", _TRAILING_SPACE.sub("", text)).strip("\n")
    if not text.strip():
        raise EmptyDocumentError(empty_message)
    return text


def escape_headings(text: str) -> str:
    """Text a reader puts under its own Markdown headings: a line that starts with `#` is
    escaped, so it can never open a section (and so never fake a page or slide)."""
    return _HEADING_START.sub(r"\1\\#", text)


def short_title(line: str) -> str:
    """A title of at most 120 characters, cut at a word."""
    line = " ".join(line.split())
    if len(line) <= _TITLE_MAX:
        return line
    cut = line[:_TITLE_MAX].rsplit(" ", 1)[0] or line[:_TITLE_MAX]
    return cut.rstrip(" ,;:-") + "…"


def pick_title(candidates: tuple[str | None, ...], text: str, filename: str | None) -> str:
    """The first non-blank candidate, else the first line of `text`, else the file's stem."""
    for candidate in candidates:
        if candidate and candidate.strip():
            return short_title(candidate)
    for line in text.split("\n"):
        if stripped := line.strip().lstrip("#").strip():
            return short_title(stripped)
    stem = PurePath(filename).stem if filename else ""
    return stem or _UNTITLED


def decode(data: bytes, charset: str | None) -> str:
    """Strict UTF-8 (a BOM is dropped) unless the sender declared another charset."""
    codec = codec_name(charset)
    if codec == "utf-8":
        data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        if codec == "utf-8":
            raise NotUtf8Error(
                "This file is not UTF-8 text (the first invalid byte is at position "
                f"{exc.start}); please save it as UTF-8 and send it again."
            ) from exc
        raise NotUtf8Error(
            f"This file does not match the character set it declares ({charset}); "
            "please save it as UTF-8 and send it again."
        ) from exc


def codec_name(charset: str | None) -> str:
    """Python's name of a declared charset ("utf-8" when none); `NotUtf8Error` if unknown."""
    if not charset or not charset.strip().strip("\"'"):
        return "utf-8"
    try:
        name = codecs.lookup(charset.strip().strip("\"'")).name
    except LookupError as exc:
        raise NotUtf8Error(
            f'This text declares a character set Lore does not know ("{charset}"); '
            "please send it as UTF-8."
        ) from exc
    return "utf-8" if name in {"ascii", "utf-8-sig"} else name
