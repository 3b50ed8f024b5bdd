"""Normalise untrusted text into the views the content guards scan, undoing cheap obfuscation.

`normalize(text)` returns a `NormalizedText` with:

- `visible`: Unicode NFKC (fullwidth and mathematical letters and digits become ASCII)
  with every invisible character removed and every blank-looking one made a space, both
  by Unicode category (see `invisible`), whitespace collapsed. Case is kept; the card and
  IBAN detectors scan this.
- `folded`: `visible` casefolded, accents dropped, look-alike letters folded to ASCII
  inside words meant to be Latin (Unicode's confusables data, see `lookalikes`), and
  letter-spaced words joined ("i g n o r e").
- `leet`: `folded` with leetspeak inside words read as letters ("1gn0r3", "|gn0r3",
  "!gnore", "$ystem"); equal to `folded` when there is nothing to translate.
- `unmarked`: the folded, leet-read text once HTML comments and tags, Markdown marks, HTML
  entities and percent-escapes are undone (`ign<!-- -->ore`, `**ign**ore`, `&#105;gnore`,
  `ignore%20all`); "" when the text has no markup.
- `hidden_tag_text`: ASCII spelled by Unicode tag characters (U+E0020-U+E007E). These are
  invisible in every client, so any such text is smuggled; emoji subdivision flags
  (black flag + tag letters + cancel tag) are legitimate and are not reported.
- `decoded`: texts recovered from base64, hex and binary runs (see `encoded_runs`).
- `rot13` and `reversed`: the folded text in ROT13 and backwards, two ciphers that cost
  nothing to undo. They are for the phrase rules only: read this way, ordinary text is
  gibberish that no rule matches.

Limits: this undoes common, cheap tricks only. It does not translate languages, solve
other ciphers (Caesar shifts, Morse), or reassemble payloads split across messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from graphs.guards.encoded_runs import decode_runs
from graphs.guards.invisible import BLANK, INVISIBLE, holds_hidden
from graphs.guards.lookalikes import fold_lookalikes
from graphs.guards.markup import unmarked
from graphs.guards.normal_forms import fold_accents, nfkc

__all__ = ["NormalizedText", "fold", "leet_fold", "normalize"]

_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]+")
_EMOJI_TAG_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]+\U000e007f")
# A word spelled with single spaces between its characters: "i g n o r e" (>= 3 chars).
_SPACED_WORD = re.compile(r"(?<!\S)(?:[^\W_] ){2,}[^\W_](?!\S)")
# Inside every `_SPACED_WORD` match, one character after its start: " g n" (then no \S).
# A literal first character lets the regex engine skip ahead, unlike the lookbehind.
_SPACED_HINT = re.compile(r" [^\W_] [^\W_](?!\S)")

_LEET_TABLE: Final = str.maketrans(
    {
        "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a",
        "$": "s", "|": "i", "!": "i",
    }
)  # fmt: skip
# A token holding both a letter and a leetspeak character ("!" and "|" only before a letter).
_LEET_TOKEN = re.compile(
    r"(?<![a-z0-9@$|!])(?=[0-9@$|!]*[a-z])(?=[a-z]*[0-9@$|!])[a-z0-9@$|!]*[a-z0-9@$]"
)
_LEET_CHARS = re.compile(r"[0-9@$|!]")
_LEET_RUN: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789@$|!")
_LETTER = re.compile("[a-z]")
_ROT13_BYTES: Final = bytes(range(256)).translate(
    bytes.maketrans(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        b"NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
    )
)
_ASCII_INVISIBLE: Final = {
    point: None for point in range(128) if INVISIBLE.fullmatch(chr(point)) is not None
}


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """The views of one message that the guards scan (see the module docstring)."""

    visible: str
    folded: str
    leet: str
    hidden_tag_text: str
    decoded: tuple[str, ...]
    unmarked: str = ""
    rot13: str = ""
    reversed: str = ""

    def plain_texts(self) -> tuple[str, ...]:
        """Case-preserving texts to scan for numbers: the visible text, then decoded runs."""
        hidden = (self.hidden_tag_text,) if self.hidden_tag_text else ()
        return (self.visible, *hidden, *self.decoded)

    def match_texts(self) -> tuple[str, ...]:
        """Folded texts to match phrases against, without duplicates, visible text first."""
        views = [self.folded, self.leet]
        if self.unmarked:
            views.append(self.unmarked)
        hidden = (self.hidden_tag_text,) if self.hidden_tag_text else ()
        for extra in (*hidden, *self.decoded):
            folded = fold(_collapse(_join_spaced(extra)))
            views += [folded, leet_fold(folded)]
        return tuple(dict.fromkeys(views))

    def cipher_texts(self) -> tuple[str, ...]:
        """The ROT13 and reversed readings of the folded text."""
        return tuple(view for view in (self.rot13, self.reversed) if view)


def normalize(text: str) -> NormalizedText:
    """Normalise `text` into every view the guards scan."""
    if text.isascii():
        # Same result, cheaper: ASCII holds no tag characters, NFKC leaves it alone, its
        # only blank is the space and its only invisibles are the control characters.
        stripped, hidden = text, ""
        cleaned = text.translate(_ASCII_INVISIBLE)
    elif "  " not in text and not holds_hidden(text):
        # Nothing to strip or replace: no tag characters (they are invisible), no invisible
        # characters, no blank but the space, and no run of spaces (`BLANK` makes a run one).
        stripped, hidden = text, ""
        cleaned = nfkc(text)
    else:
        stripped, hidden = _strip_tags(text)
        cleaned = nfkc(INVISIBLE.sub("", BLANK.sub(" ", stripped)))
    visible = _collapse(cleaned)
    joined = _join_spaced(cleaned)
    folded = fold(visible if joined is cleaned else _collapse(joined))
    leet = leet_fold(folded)
    marked = unmarked(cleaned)
    unmarked_view = leet_fold(fold(_collapse(_join_spaced(marked)))) if marked else ""
    return NormalizedText(
        visible=visible,
        folded=folded,
        leet=leet,
        hidden_tag_text=_collapse(hidden),
        decoded=decode_runs(cleaned),
        unmarked=unmarked_view if unmarked_view not in {folded, leet} else "",
        rot13=_rot13(leet),
        reversed=leet[::-1],
    )


def fold(text: str) -> str:
    """Casefold, drop accents, and fold look-alike letters inside Latin words."""
    folded = text.casefold()
    if folded.isascii():
        return folded
    return fold_lookalikes(fold_accents(folded))


def leet_fold(text: str) -> str:
    """Read leetspeak digits and symbols inside words as letters ("pr3v10us" -> "previous").

    What `_LEET_TOKEN.sub` would do, read off the few leetspeak characters instead of
    trying the pattern at every position: each maximal run of `[a-z0-9@$|!]` that holds a
    leetspeak character and a letter is translated, but for its trailing "|" and "!"."""
    first = _LEET_CHARS.search(text)
    if first is None:
        return text
    parts: list[str] = []
    done = 0  # text[:done] is in `parts`
    for hit in _LEET_CHARS.finditer(text, first.start()):
        if hit.start() < done:
            continue  # inside a run already read
        start, end = _run_around(text, hit.start())
        run = text[start:end]
        token = run.rstrip("|!")
        if _LETTER.search(run) is not None:
            parts += [text[done:start], token.translate(_LEET_TABLE), run[len(token) :]]
        else:
            parts.append(text[done:end])
        done = end
    parts.append(text[done:])
    return "".join(parts)


def _run_around(text: str, position: int) -> tuple[int, int]:
    """The maximal run of `_LEET_RUN` characters around `position`."""
    start, end = position, position + 1
    while start > 0 and text[start - 1] in _LEET_RUN:
        start -= 1
    while end < len(text) and text[end] in _LEET_RUN:
        end += 1
    return start, end


def _rot13(text: str) -> str:
    """`codecs.encode(text, "rot13")`, read as bytes: the codec translates through a dict,
    slow for text outside ASCII, and only ASCII letters change (UTF-8 keeps them bytes of
    their own)."""
    return (
        text.encode("utf-8", "surrogatepass")
        .translate(_ROT13_BYTES)
        .decode("utf-8", "surrogatepass")
    )


def _collapse(text: str) -> str:
    """Whitespace runs made one space, none at either end. A printable text holds no
    whitespace but the space (Python counts every other separator as unprintable), so
    one without a double space or a space at an end is already collapsed."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def _join_spaced(text: str) -> str:
    if " " not in text or not _has_spaced_word(text):
        return text
    return _SPACED_WORD.sub(lambda m: m.group().replace(" ", ""), text)


def _has_spaced_word(text: str) -> bool:
    """Whether `_SPACED_WORD` matches `text`. A match at `s` holds a `_SPACED_HINT` at
    `s + 1`; the hint search may report the one at `s - 1` instead (they overlap), so
    both neighbours of every hint are tried."""
    for hint in _SPACED_HINT.finditer(text):
        at = hint.start()
        if _SPACED_WORD.match(text, at + 1) or (at and _SPACED_WORD.match(text, at - 1)):
            return True
    return False


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
