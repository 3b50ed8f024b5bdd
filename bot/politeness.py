"""Polite fetching of watched sources: per-host pacing, Retry-After, and exponential backoff."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

__all__ = [
    "RETRY_STATUSES",
    "HostPacer",
    "Sleep",
    "WatchPolicy",
    "failure_delay",
    "retry_after_delay",
]

Sleep = Callable[[float], Awaitable[None]]

# Statuses whose Retry-After says when to come back.
RETRY_STATUSES = frozenset({429, 503})
_MIN_RETRY_AFTER = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class WatchPolicy:
    """How often and how politely sources are checked."""

    check_interval: timedelta = timedelta(hours=1)
    host_pacing_seconds: float = 2.0
    max_entries_per_scan: int = 20
    max_sources_per_scan: int = 100
    max_backoff: timedelta = timedelta(days=1)
    max_retry_after: timedelta = timedelta(days=7)


class HostPacer:
    """Keeps at least `min_interval` seconds between two requests to one host."""

    def __init__(
        self,
        min_interval: float,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._interval = min_interval
        self._monotonic = monotonic
        self._sleep = sleep
        self._last: dict[str, float] = {}

    async def wait(self, url: str) -> None:
        """Wait until a request to `url`'s host is polite, then count it as made now."""
        host = (urlsplit(url).hostname or "").lower()
        last = self._last.get(host)
        if last is not None:
            delay = last + self._interval - self._monotonic()
            if delay > 0:
                await self._sleep(delay)
        self._last[host] = self._monotonic()


def retry_after_delay(value: str | None, now: datetime) -> timedelta | None:
    """A Retry-After header (seconds or an HTTP date) as a delay from `now`; None if unusable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return timedelta(seconds=int(text))
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        return None
    return max(moment - now, timedelta(0))


def failure_delay(
    policy: WatchPolicy, failures: int, retry_after: str | None, now: datetime
) -> timedelta:
    """When to check again after the `failures`-th failure in a row.

    A usable Retry-After wins (at least a minute, at most `max_retry_after`); otherwise
    `check_interval * 2**failures`, at most `max_backoff`.
    """
    asked = retry_after_delay(retry_after, now)
    if asked is not None:
        return min(max(asked, _MIN_RETRY_AFTER), policy.max_retry_after)
    backoff: timedelta = policy.check_interval * (1 << min(failures, 20))
    return min(backoff, policy.max_backoff)
