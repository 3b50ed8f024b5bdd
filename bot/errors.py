"""Outcomes a user sees as a polite message: one exception each, raised by the `Bot` service.

Edges show `str(error)` to the person; it never holds secrets or stack traces.
"""

from __future__ import annotations

__all__ = ["IngestRefusedError", "LoreError", "StartupError", "StoreBusyError"]


class LoreError(Exception):
    """Base: something the user asked for cannot be done; the message says why."""


class IngestRefusedError(LoreError):
    """A source was not ingested (bad type, too big, empty, refused URL...); nothing was kept."""


class StoreBusyError(LoreError):
    """Another Lore process (the running bot) holds the data directory."""


class StartupError(LoreError):
    """Lore cannot start: a model package is missing, the vector store or database is unusable."""
