"""Keep third-party warnings and log chatter off the user's terminal; they belong in the log.

Libraries talk on their own: pypdf logs "incorrect startxref pointer" for a slightly broken
PDF, others call `warnings.warn`, APScheduler reports every job run. On a terminal that
chatter lands in the middle of a progress bar or an answer. `route_library_output`, called
once at start-up after logging is configured, sends Python warnings through logging
(`logging.captureWarnings`) and puts `LibraryChatterFilter` on every handler that writes to
a terminal: it lets through Lore's own records, and errors from anyone. Handlers that
write elsewhere (a log file, or stderr of a service whose output is collected) still get
everything. At LOG_LEVEL=DEBUG nothing is filtered.

Extraction will move into a worker process: a process that logs on its own calls this
again there (with no handler, a library warning would reach stderr through logging's
last-resort handler).
"""

from __future__ import annotations

import logging

__all__ = ["OWN_PACKAGES", "LibraryChatterFilter", "route_library_output"]

#: Loggers under these top-level names are Lore's own.
OWN_PACKAGES = frozenset({"bot", "adapters", "graphs", "scheduler", "storage", "evals"})


class LibraryChatterFilter(logging.Filter):
    """Passes Lore's own records and errors of anyone; drops other libraries' chatter."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether `record` may reach the terminal."""
        own = record.name.split(".", 1)[0] in OWN_PACKAGES
        return own or record.levelno >= logging.ERROR


def route_library_output(*, level: str) -> None:
    """Route warnings into logging and keep library chatter off terminal handlers.

    `level` is LOG_LEVEL: at DEBUG everything stays visible. Without any handler
    configured, a quiet one is installed, so nothing falls back to logging's
    last-resort printing on stderr.
    """
    logging.captureWarnings(True)
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.NullHandler())
    if level == "DEBUG":
        return
    for handler in root.handlers:
        if _writes_to_terminal(handler) and not any(
            isinstance(existing, LibraryChatterFilter) for existing in handler.filters
        ):
            handler.addFilter(LibraryChatterFilter())


def _writes_to_terminal(handler: logging.Handler) -> bool:
    if not isinstance(handler, logging.StreamHandler) or isinstance(handler, logging.FileHandler):
        return False
    isatty = getattr(handler.stream, "isatty", None)
    return bool(isatty and isatty())
