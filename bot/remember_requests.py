"""A message that asks Lore to remember something ("remember that the recycling goes out on
Tuesdays", "note: ...") is saved to the member's private notes instead of being answered,
whether it was typed or spoken. The rule lives here, once, for every edge.

Only the explicit forms count: "remember that", "remember:", "note that", "note:", "keep in
mind that", "make a note that" (with a leading "please" or "Lore,"), and the same in German,
French, Spanish, Italian, Portuguese and Dutch. "Do you remember …?" or "remember when …"
stay questions.
"""

from __future__ import annotations

import re

__all__ = ["remember_request"]

_LEAD = r"(?:(?:please|bitte|s'il te pla[iî]t|por favor|per favore|alsjeblieft)[,\s]+)?"
_NAME = r"(?:(?:hey\s+)?lore[,:]?\s+)?"
_ASK = (
    r"remember\s+that\b|remember\s*:|note\s+that\b|note\s*:|keep\s+in\s+mind\s+that\b"
    r"|make\s+a\s+note\s+that\b|make\s+a\s+note\s*:"
    r"|merk\s+dir[,:]?\s+dass\b|merk\s+dir\s*:|notiere?\s*:"  # German
    r"|souviens[- ]toi\s+que\b|retiens\s+que\b|note\s+que\b"  # French
    r"|recuerda\s+que\b|anota\s*:|anota\s+que\b"  # Spanish
    r"|ricorda\s+che\b|ricordati\s+che\b|annota\s*:"  # Italian
    r"|lembra(?:-te)?\s+(?:de\s+)?que\b|anota\s+que\b"  # Portuguese
    r"|onthoud\s+dat\b|noteer\s*:"  # Dutch
)
_REQUEST = re.compile(
    rf"^\s*{_NAME}{_LEAD}{_NAME}(?:{_ASK})[,\s]*(?P<note>\S.*)$", re.IGNORECASE | re.DOTALL
)


def remember_request(text: str) -> str | None:
    """What to remember, when `text` asks Lore to remember it; else None."""
    found = _REQUEST.match(text)
    if found is None:
        return None
    return found["note"].strip() or None
