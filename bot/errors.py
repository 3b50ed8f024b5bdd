"""Outcomes a user sees as a polite message: one exception each, raised by the `Bot` service.

Edges show `str(error)` to the person; it never holds secrets or stack traces.
"""

from __future__ import annotations

__all__ = [
    "DigestError",
    "IngestRefusedError",
    "LoreError",
    "ShareRefusedError",
    "StartupError",
    "StoreBusyError",
    "WatchRefusedError",
]


class LoreError(Exception):
    """Base: something the user asked for cannot be done; the message says why."""


class IngestRefusedError(LoreError):
    """A source was not ingested (bad type, too big, empty, refused URL...); nothing was kept."""


class DigestError(LoreError):
    """A digest setting or request was refused (bad time, unknown timezone, group chat)."""


class StoreBusyError(LoreError):
    """Another Lore process (the running bot) holds the data directory."""


class StartupError(LoreError):
    """Lore cannot start: a model package is missing, the vector store or database is unusable."""


class WatchRefusedError(LoreError):
    """A source cannot be watched (not an owner, refused or unreadable URL); nothing was added."""


class ShareRefusedError(LoreError):
    """A private document was not published to the shared knowledge (not an owner, not theirs,
    original missing); nothing changed."""
