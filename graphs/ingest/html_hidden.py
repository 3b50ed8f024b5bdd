"""Drop the elements of a parsed HTML page that a reader does not see, before its text is read.

Text a reader does not see is a quiet channel for instructions aimed at the model, so
it is removed: elements with the `hidden` attribute or `aria-hidden="true"`, and
elements whose inline style says `display:none`, `visibility:hidden` (or `collapse`),
`font-size:0` or `opacity:0` (spaces, case and `!important` do not matter). The tail
text after a dropped element stays. `html`, `head` and `body` are never dropped.

Limits: hiding done by a style sheet (`.x {display:none}` in a `<style>` block or a
linked file), by colours, by positioning off-screen or by clipping is not recognised.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["drop_hidden_elements"]

# Inline style declarations (spaces removed, lower case) that hide an element.
_HIDING_STYLE: Final = re.compile(
    r"(?:display:none|visibility:(?:hidden|collapse)|font-size:0(?:\.0*)?(?:px|pt|em|rem|%)?"
    r"|opacity:0(?:\.0*)?)(?:!important)?"
)
_NEVER_DROPPED: Final = frozenset({"html", "head", "body"})


def drop_hidden_elements(tree: Any) -> None:
    """Remove every hidden element (and what it holds) from the lxml.html `tree`, in place."""
    for element in list(tree.iter()):
        tag = element.tag
        if not isinstance(tag, str) or tag.lower() in _NEVER_DROPPED:
            continue
        if element.getparent() is not None and _is_hidden(element):
            element.drop_tree()


def _is_hidden(element: Any) -> bool:
    if element.get("hidden") is not None:
        return True
    if (element.get("aria-hidden") or "").strip().lower() == "true":
        return True
    style = "".join((element.get("style") or "").lower().split())
    return any(_HIDING_STYLE.fullmatch(rule) for rule in style.split(";"))
