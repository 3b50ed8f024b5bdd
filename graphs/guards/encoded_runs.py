"""Recover text hidden in obvious encoded runs: base64, hex and groups of 8 binary digits.

`decode_runs(text)` finds runs of >= 16 base64 characters, >= 8 hex bytes and >= 4 binary
octets, decodes each, and keeps those that decode to mostly printable, word-like UTF-8,
NFKC-normalised with whitespace collapsed. Decoding recurses once (base64 inside base64);
the number of runs and their length are capped, so a hostile paste cannot make the guard
slow.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterator
from typing import Final

__all__ = ["decode_runs"]

_MAX_DECODED_RUNS: Final = 16
_MAX_RUN_CHARS: Final = 65_536
_MIN_PRINTABLE_RATIO: Final = 0.9
_MIN_WORDLIKE_RATIO: Final = 0.6
_BASE64_MIN: Final = 16
_DIGIT = re.compile(r"[0-9]")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){8,}(?![0-9A-Fa-f])")
_BINARY_RUN = re.compile(r"(?<![01])(?:[01]{8} ?){4,}(?![01])")


def _marks(members: bytes) -> bytes:
    """A `bytes.translate` table: `members` to "+", every other byte to "."."""
    return bytes(ord("+") if byte in members else ord(".") for byte in range(256))


# Stretches of characters of one kind, found in a byte translation of the text's UTF-8
# (a character outside ASCII is bytes of 0x80 and up, none of them a mark, so a stretch
# of ASCII characters stays a stretch): 16 hex digits and separators (eight pairs, each
# perhaps followed by one separator), eight bits, 16 base64 characters.
_HEX_MARKS: Final = _marks(b"0123456789abcdefABCDEF :")
_BIT_MARKS: Final = _marks(b"01")
_BASE64_STRETCH: Final = b"+" * _BASE64_MIN
_BASE64_MARKS: Final = _marks(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _has_stretch(raw: bytes, marks: bytes, length: int) -> bool:
    """Whether the UTF-8 `raw` holds `length` bytes in a row that `marks` marks."""
    return b"+" * length in raw.translate(marks)


def decode_runs(text: str, depth: int = 2) -> tuple[str, ...]:
    """Texts decoded from base64, hex and binary runs in `text` (capped, recursive)."""
    return _decode_runs(text, depth)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _decode_runs(text: str, depth: int) -> tuple[str, ...]:
    """Texts decoded from base64, hex and binary runs in `text` (capped, recursive)."""
    found: list[str] = []
    raw = _utf8(text)  # read once, by all three run finders
    for runs, decoder in (
        (_base64_runs, _decode_base64),
        (_hex_runs, _decode_hex),
        (_binary_runs, _decode_binary),
    ):
        for run in runs(text, raw):
            if len(found) >= _MAX_DECODED_RUNS:
                return tuple(found)
            decoded = decoder(run[:_MAX_RUN_CHARS])
            if decoded is not None:
                found.append(_collapse(unicodedata.normalize("NFKC", decoded)))
    if depth > 1:
        found += [inner for outer in list(found) for inner in _decode_runs(outer, depth - 1)]
    return tuple(found[:_MAX_DECODED_RUNS])


# Cheap necessary conditions, so ordinary prose skips the run patterns: a base64 run is 16
# base64 characters in a row, found in the byte translation; hex that decodes to text
# holds a digit (every printable ASCII byte has one in its high nibble) and 16 hex digits
# and separators in a row; a binary run holds eight bits in a row. Each run is found, in
# order, as `pattern.finditer(text)` finds it.
def _base64_runs(_text: str, raw: bytes) -> Iterator[str]:
    """What `re.finditer(r"[A-Za-z0-9+/_-]{16,}={0,2}", text)` finds: each maximal
    stretch of 16 base64 characters or more (the first 16 in a row are its start) with
    up to two "=" after it, read off the text's UTF-8 (`raw`; the text itself is not
    needed, but every run finder is called alike) and its base64 marks."""
    marked = raw.translate(_BASE64_MARKS)
    start = marked.find(_BASE64_STRETCH)
    while start >= 0:
        end = marked.find(b".", start)
        end = len(marked) if end < 0 else end
        padding = 0
        while padding < 2 and raw[end + padding : end + padding + 1] == b"=":
            padding += 1
        yield raw[start : end + padding].decode("ascii")
        start = marked.find(_BASE64_STRETCH, end)


def _hex_runs(text: str, raw: bytes) -> Iterator[str]:
    if _DIGIT.search(text) is None or not _has_stretch(raw, _HEX_MARKS, 16):
        return
    for match in _HEX_RUN.finditer(text):
        yield match.group()


def _binary_runs(text: str, raw: bytes) -> Iterator[str]:
    if not _has_stretch(raw, _BIT_MARKS, 8):
        return
    for match in _BINARY_RUN.finditer(text):
        yield match.group()


def _decode_base64(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable_text(raw)


def _decode_hex(run: str) -> str | None:
    digits = run.replace(" ", "").replace(":", "")
    if len(digits) % 2:
        return None
    return _printable_text(bytes.fromhex(digits))


def _decode_binary(run: str) -> str | None:
    bits = run.replace(" ", "")
    return _printable_text(int(bits, 2).to_bytes(len(bits) // 8, "big"))


def _printable_text(raw: bytes) -> str | None:
    """`raw` as UTF-8 if it decodes and is mostly printable text, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    wordlike = sum(1 for c in text if c.isalnum() or c.isspace())
    if printable < _MIN_PRINTABLE_RATIO * len(text) or wordlike < _MIN_WORDLIKE_RATIO * len(text):
        return None
    return text
