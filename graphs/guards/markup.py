"""Read text as a person sees it once HTML, Markdown and URL/HTML escapes are rendered.

`unmarked(text)` returns the text with HTML comments and tags removed (block-level tags
become a space, inline ones nothing, so `ign<!-- -->ore` and `<b>ign</b>ore` read
"ignore"), Markdown emphasis and code marks removed (`**ign**ore`), HTML entities decoded
(`&#105;gnore`, `&lt;`) and percent-encoding decoded (`ignore%20all`). Entities and
percent-escapes are decoded twice at most, so double encoding is undone too. It returns
None when the text holds none of these, so callers add a view only when it differs.

This is a view for matching, not a sanitiser: nothing here is ever shown or stored.
"""

from __future__ import annotations

import html
import re
from typing import Final
from urllib.parse import unquote

__all__ = ["unmarked"]

_COMMENT: Final = re.compile(r"<!--.*?(?:-->|$)|<!--|-->", re.DOTALL)
_BLOCK_TAG: Final = re.compile(
    r"</?(?:p|div|br|hr|li|ul|ol|tr|td|th|table|h[1-6]|section|article|header|footer|pre"
    r"|blockquote|title|body|html|head)\b[^<>]{0,200}>",
    re.IGNORECASE,
)
_TAG: Final = re.compile(r"</?[a-zA-Z][\w:-]{0,30}(?:\s[^<>]{0,200})?/?>")
# Marks touching a word: `(?<=\w)(?:\*{1,3}|_{1,3}|~~|`+)|(?:\*{1,3}|_{1,3}|~~|`+)(?=\w)`,
# written so that every branch starts with its mark (the look-behind moved after the
# first character), which lets `re` skip straight to the marks instead of trying the
# look-behind at every position: the same matches, in the same order.
_MARKDOWN_MARKS: Final = re.compile(
    r"\*(?<=\w\*)\*{0,2}|_(?<=\w_)_{0,2}|~~(?<=\w~~)|`(?<=\w`)`*"
    r"|\*{1,3}(?=\w)|_{1,3}(?=\w)|~~(?=\w)|`+(?=\w)"
)
_ENTITY: Final = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,31});?")
_PERCENT: Final = re.compile(r"%[0-9a-fA-F]{2}")
# Every branch starts with a literal, so `re` skips ahead to one of those characters.
_HAS_MARKUP: Final = re.compile(r"<[!/a-zA-Z]|-->|\*|_|~|`|&#?\w|%[0-9a-fA-F]{2}")
_MARKUP_CHARS: Final = ("<", "-->", "*", "_", "~", "`", "&", "%")


def unmarked(text: str) -> str | None:
    """`text` with markup removed and escapes decoded, or None when there is nothing to undo."""
    # Each branch of `_HAS_MARKUP` needs one of these characters: a few `in` tests (each a
    # memchr) spare most prose the regex.
    if not any(mark in text for mark in _MARKUP_CHARS) or _HAS_MARKUP.search(text) is None:
        return None
    view = _decode(text)
    # Each pattern needs a character of its own in the text; the cheap `in` tests spare
    # ordinary text the scans.
    if "<!--" in view or "-->" in view:
        view = _COMMENT.sub("", view)
    if "<" in view:
        view = _BLOCK_TAG.sub(" ", view)
        view = _TAG.sub("", view)
    if "*" in view or "_" in view or "~~" in view or "`" in view:
        view = _MARKDOWN_MARKS.sub("", view)
    view = _decode(view)
    return view if view != text else None


def _decode(text: str) -> str:
    if _ENTITY.search(text):
        text = html.unescape(text)
    if _PERCENT.search(text):
        text = unquote(text, errors="replace")
    return text
