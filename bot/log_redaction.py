"""Set up logging so that no configured secret and no library's dump of members' data is logged.

`configure_logging(level, third_party_level, secrets)` is the one call (from `bot.cli`):

- every log record, from any logger at any level, is redacted as it is created (a record
  factory, so a library logger with its own handler is covered too) and again by a filter
  on the root handlers: each secret, and its URL-encoded forms, becomes `[REDACTED]` in the
  message (arguments merged in first), the exception text and the stack text;
- `level` (LOG_LEVEL) applies to Lore's own loggers only (`bot`, `graphs`, `storage`,
  `adapters`, `scheduler`, `evals`);
- every other logger, and by name the libraries known to log SQL parameters, request URLs
  with tokens or request bodies at DEBUG (aiosqlite, httpx, httpcore, telegram, slack,
  discord, urllib3, apscheduler...), stays at `third_party_level` (LOG_LEVEL_THIRD_PARTY,
  default WARNING) unless an operator raises it on purpose.

Secrets shorter than `MIN_SECRET_CHARS` are not redacted (they would blank out ordinary
words: a key "x" turned "json.exception" into "json.e***ception"); settings refuse such a
secret at start, so none is ever configured.
"""

from __future__ import annotations

import logging
import re
import sys
import traceback
from collections.abc import Iterable
from typing import Any, Final
from urllib.parse import quote, quote_plus

__all__ = [
    "MIN_SECRET_CHARS",
    "OWN_LOGGERS",
    "REDACTED",
    "THIRD_PARTY_LOGGERS",
    "SecretRedactor",
    "configure_logging",
]

REDACTED: Final = "[REDACTED]"
MIN_SECRET_CHARS: Final = 8
OWN_LOGGERS: Final = ("bot", "graphs", "storage", "adapters", "scheduler", "evals")
THIRD_PARTY_LOGGERS: Final = (
    "aiosqlite",
    "httpx",
    "httpcore",
    "h11",
    "h2",
    "hpack",
    "telegram",
    "slack_sdk",
    "slack_bolt",
    "discord",
    "websockets",
    "aiohttp",
    "urllib3",
    "apscheduler",
    "qdrant_client",
    "langgraph",
    "fastembed",
)
_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class SecretRedactor(logging.Filter):
    """Replaces every secret in a log record; usable as a filter and by the record factory."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        forms = {
            form
            for secret in secrets
            if len(secret) >= MIN_SECRET_CHARS
            for form in (secret, quote(secret, safe=""), quote_plus(secret))
        }
        ordered = sorted(forms, key=len, reverse=True)  # longest first: no partial leftovers
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def redact(self, text: str) -> str:
        """`text` with every secret replaced by `[REDACTED]`."""
        if self._pattern is None:
            return text
        return self._pattern.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact `record` in place (message with its arguments, exception and stack text)."""
        if self._pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not hide a secret either
            message = f"{record.msg} {record.args}"
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class _RedactingFactory:
    """A log record factory that redacts each record it makes (wrapping the previous one)."""

    def __init__(self, inner: Any, redactor: SecretRedactor) -> None:
        self.inner = inner
        self._redactor = redactor

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record: logging.LogRecord = self.inner(*args, **kwargs)
        self._redactor.filter(record)
        return record


def configure_logging(level: str, third_party_level: str, secrets: Iterable[str]) -> None:
    """Log to stderr: Lore's loggers at `level`, libraries at `third_party_level`, secrets
    redacted everywhere. Calling it again replaces the previous configuration's redaction."""
    redactor = SecretRedactor(secrets)
    factory = logging.getLogRecordFactory()
    while isinstance(factory, _RedactingFactory):
        factory = factory.inner
    logging.setLogRecordFactory(_RedactingFactory(factory, redactor))

    root = logging.getLogger()
    if not root.handlers:
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(stderr)
    for handler in root.handlers:
        for old in [f for f in handler.filters if isinstance(f, SecretRedactor)]:
            handler.removeFilter(old)
        handler.addFilter(redactor)
    root.setLevel(third_party_level)
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(third_party_level)
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(level)
