"""Citations numbered 1..n in the order the answer first uses them, streamed text and final alike.

Tools number passages in the order they found them; an answer may cite them in any
order ("[3] ... [1]") or skip some ("[2] ... [4]"). The reader sees them renumbered by
first use, so the first citation is always [1] and the sources list in that order. The
final answer is renumbered in `graphs.agent.verify` after unsupported citations are
dropped; `StreamRenumberer` applies the same rule to the text while it streams, so what
was shown and the final answer agree whenever no citation was dropped.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

__all__ = ["CITATION", "StreamRenumberer", "first_use_order", "renumber"]

CITATION = re.compile(r"\[(\d{1,3})\]")
#: The end of a delta that may be the start of a citation split across deltas.
_PARTIAL = re.compile(r"\[\d{0,3}$")


def first_use_order(refs: Sequence[int]) -> dict[int, int]:
    """Each ref's new number: 1 for the first cited, 2 for the next new one, and so on."""
    order: dict[int, int] = {}
    for ref in refs:
        order.setdefault(ref, len(order) + 1)
    return order


def renumber(text: str, order: Mapping[int, int]) -> str:
    """`text` with every "[n]" in `order` replaced by "[order[n]]"; other brackets kept."""

    def swap(match: re.Match[str]) -> str:
        number = order.get(int(match.group(1)))
        return match.group(0) if number is None else f"[{number}]"

    return CITATION.sub(swap, text)


class StreamRenumberer:
    """Renumbers the citations of streamed text by first use, delta by delta.

    Only numbers in `known` (the passages the tools returned) are renumbered; anything
    else is passed on as written (and dropped later if it is a citation). A delta that
    ends in what may be half a citation ("[1") is held back until the next one.
    """

    def __init__(self, known: Collection[int]) -> None:
        self._known = frozenset(known)
        self._order: dict[int, int] = {}
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of `text` (after what was held back) that can be shown now."""
        text = self._held + text
        partial = _PARTIAL.search(text)
        cut = partial.start() if partial else len(text)
        self._held = text[cut:]
        return self._swap(text[:cut])

    def flush(self) -> str:
        """Whatever is still held back, at the end of the stream."""
        held, self._held = self._held, ""
        return self._swap(held)

    def _swap(self, text: str) -> str:
        for match in CITATION.finditer(text):
            number = int(match.group(1))
            if number in self._known:
                self._order.setdefault(number, len(self._order) + 1)
        return renumber(text, self._order)
