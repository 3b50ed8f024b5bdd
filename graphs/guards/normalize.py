"""Normalise untrusted text into the views the content guards scan, undoing cheap obfuscation.

`normalize(text)` returns a `NormalizedText` with:

- `visible`: Unicode NFKC (fullwidth and mathematical letters and digits become ASCII),
  with invisible characters removed (zero-width space/joiners, word joiner, BOM, soft
  hyphen, bidi controls, variation selectors, Hangul fillers) and whitespace collapsed.
  Case is kept; the card and IBAN detectors scan this.
- `folded`: `visible` casefolded, with Latin/Greek/Cyrillic accents dropped, Cyrillic
  and Greek look-alikes folded to Latin inside words that are otherwise Latin
  ("ignore" typed with Cyrillic i, o and e), and letter-spaced words joined ("i g n o r e").
- `leet`: `folded` with leetspeak digits and symbols inside words read as letters
  ("1gn0r3" -> "ignore"); equal to `folded` when there is nothing to translate.
- `hidden_tag_text`: ASCII spelled by Unicode tag characters (U+E0020-U+E007E). These are
  invisible in every client, so any such text is smuggled; emoji subdivision flags
  (black flag + tag letters + cancel tag) are legitimate and are not reported.
- `decoded`: texts recovered from obvious encoded runs (base64 of >= 16 characters, hex of
  >= 8 bytes, groups of 8 binary digits) that decode to mostly printable UTF-8, each
  normalised like `visible`; decoding recurses once (base64 inside base64).

Limits: this undoes common, cheap tricks only. It does not translate languages, solve
ciphers (ROT13, Caesar, Morse), or reassemble payloads split across messages; the number
of decoded runs is capped so a hostile paste cannot make the guard slow.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass
from typing import Final

__all__ = ["NormalizedText", "fold", "leet_fold", "normalize"]

_MAX_DECODED_RUNS: Final = 16
_MAX_RUN_CHARS: Final = 65_536
_MIN_PRINTABLE_RATIO: Final = 0.9
_MIN_WORDLIKE_RATIO: Final = 0.6

# Invisible characters: zero-width space/non-joiner/joiner, LRM/RLM, bidi embeddings and
# isolates, word joiner and invisible operators, BOM, soft hyphen, combining grapheme
# joiner, Mongolian vowel separator, Hangul fillers, variation selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0100-\U000e01ef]"
)
_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]+")
_EMOJI_TAG_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]+\U000e007f")
# A word spelled with single spaces between its characters: "i g n o r e" (>= 3 chars).
_SPACED_WORD = re.compile(r"(?<!\S)(?:[^\W_] ){2,}[^\W_](?!\S)")
_COMBINING_ACCENT = re.compile("[\u0300-\u036f]")

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){8,}(?![0-9A-Fa-f])")
_BINARY_RUN = re.compile(r"(?<![01])(?:[01]{8} ?){4,}(?![01])")

# Cyrillic and Greek letters that look like Latin ones (lowercase, as after casefold).
_CONFUSABLES: Final = {
    "\u0430": "a", "\u0432": "b", "\u0433": "r", "\u0435": "e", "\u0451": "e", "\u0456": "i",
    "\u0457": "i", "\u0458": "j", "\u043a": "k", "\u043c": "m", "\u043d": "h", "\u043e": "o",
    "\u043f": "n", "\u0440": "p", "\u0441": "c", "\u0442": "t", "\u0443": "y", "\u0445": "x",
    "\u0455": "s", "\u04bb": "h", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04cf": "l",
    "\u0261": "g", "\u0251": "a", "\u0131": "i", "\u03bf": "o", "\u03b1": "a", "\u03b9": "i",
    "\u03bd": "v", "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03ba": "k", "\u03c7": "x",
    "\u03b5": "e", "\u03b2": "b", "\u03b3": "y", "\u03b7": "n", "\u03bc": "u", "\u03c9": "w",
}  # fmt: skip
_CONFUSABLE_TABLE: Final = str.maketrans(_CONFUSABLES)
_CONFUSABLE_CHARS: Final = frozenset(_CONFUSABLES)
_HAS_CONFUSABLE = re.compile("[" + "".join(_CONFUSABLES) + "]")
_WORD = re.compile(r"[^\W\d_]+")

_LEET_TABLE: Final = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s"}
)
# A token holding both a letter and a leetspeak character.
_LEET_TOKEN = re.compile(r"(?<![a-z0-9@$])(?=[0-9@$]*[a-z])(?=[a-z]*[0-9@$])[a-z0-9@$]+")
_LEET_CHARS = re.compile(r"[0-9@$]")


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """The views of one message that the guards scan (see the module docstring)."""

    visible: str
    folded: str
    leet: str
    hidden_tag_text: str
    decoded: tuple[str, ...]

    def plain_texts(self) -> tuple[str, ...]:
        """Case-preserving texts to scan for numbers: the visible text, then decoded runs."""
        hidden = (self.hidden_tag_text,) if self.hidden_tag_text else ()
        return (self.visible, *hidden, *self.decoded)

    def match_texts(self) -> tuple[str, ...]:
        """Folded texts to match phrases against, without duplicates, visible text first."""
        views = [self.folded, self.leet]
        hidden = (self.hidden_tag_text,) if self.hidden_tag_text else ()
        for extra in (*hidden, *self.decoded):
            folded = fold(_collapse(_join_spaced(extra)))
            views += [folded, leet_fold(folded)]
        return tuple(dict.fromkeys(views))


def normalize(text: str) -> NormalizedText:
    """Normalise `text` into every view the guards scan."""
    stripped, hidden = _strip_tags(text)
    cleaned = unicodedata.normalize("NFKC", _INVISIBLE.sub("", stripped))
    visible = _collapse(cleaned)
    folded = fold(_collapse(_join_spaced(cleaned)))
    return NormalizedText(
        visible=visible,
        folded=folded,
        leet=leet_fold(folded),
        hidden_tag_text=_collapse(hidden),
        decoded=_decode_runs(cleaned, depth=2),
    )


def fold(text: str) -> str:
    """Casefold, drop accents, and fold look-alike letters inside Latin words."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    folded = _COMBINING_ACCENT.sub("", unicodedata.normalize("NFD", folded))
    folded = unicodedata.normalize("NFC", folded)
    if _HAS_CONFUSABLE.search(folded) is None:
        return folded
    return _WORD.sub(_fold_confusable_word, folded)


def leet_fold(text: str) -> str:
    """Read leetspeak digits and symbols inside words as letters ("pr3v10us" -> "previous")."""
    if _LEET_CHARS.search(text) is None:
        return text
    return _LEET_TOKEN.sub(_fold_leet_token, text)


def _fold_confusable_word(match: re.Match[str]) -> str:
    word = match.group()
    if all(c.isascii() or c in _CONFUSABLE_CHARS for c in word):
        return word.translate(_CONFUSABLE_TABLE)
    return word


def _fold_leet_token(match: re.Match[str]) -> str:
    return match.group().translate(_LEET_TABLE)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _join_spaced(text: str) -> str:
    if " " not in text:
        return text
    return _SPACED_WORD.sub(lambda m: m.group().replace(" ", ""), text)


def _strip_tags(text: str) -> tuple[str, str]:
    """Remove tag characters; return the text and the ASCII the non-flag tags spell."""
    if _TAG_CHARS.search(text) is None:
        return text, ""
    without_flags = _EMOJI_TAG_FLAG.sub("\U0001f3f4", text)
    hidden = "".join(
        chr(ord(c) - 0xE0000)
        for run in _TAG_CHARS.findall(without_flags)
        for c in run
        if 0xE0020 <= ord(c) <= 0xE007E
    )
    return _TAG_CHARS.sub("", without_flags), hidden


def _decode_runs(text: str, depth: int) -> tuple[str, ...]:
    """Texts decoded from base64, hex and binary runs in `text` (capped, recursive)."""
    found: list[str] = []
    for pattern, decoder in (
        (_BASE64_RUN, _decode_base64),
        (_HEX_RUN, _decode_hex),
        (_BINARY_RUN, _decode_binary),
    ):
        for match in pattern.finditer(text):
            if len(found) >= _MAX_DECODED_RUNS:
                return tuple(found)
            decoded = decoder(match.group()[:_MAX_RUN_CHARS])
            if decoded is not None:
                found.append(_collapse(unicodedata.normalize("NFKC", decoded)))
    if depth > 1:
        found += [inner for outer in list(found) for inner in _decode_runs(outer, depth - 1)]
    return tuple(found[:_MAX_DECODED_RUNS])


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
