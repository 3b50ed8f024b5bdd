"""Limits on attempts that cost money or guess secrets: wrong link and invite codes per
account, digests on demand per member. Counted in SQLite (`storage.attempts`), so they hold
across restarts and across processes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.errors import RateLimitedError
from bot.events import Identity
from storage.attempts import AttemptLog

__all__ = ["DIGESTS_ON_DEMAND", "WRONG_CODES", "Limit", "Limits", "account_key"]


@dataclass(frozen=True, slots=True)
class Limit:
    """At most `limit` attempts per `window`; `message` tells the person what to do."""

    name: str
    limit: int
    window: timedelta
    message: str


WRONG_CODES = Limit(
    "wrong-code",
    5,
    timedelta(minutes=15),
    "Too many wrong codes from this account. Please wait 15 minutes, then try again.",
)
DIGESTS_ON_DEMAND = Limit(
    "digest-now",
    3,
    timedelta(hours=1),
    "You have asked for three digests in the last hour. The next one comes at your digest "
    "time, or ask again later.",
)
KEPT = timedelta(days=1)  # longer than any window


def account_key(identity: Identity) -> str:
    """One chat account, across the users it may belong to."""
    return f"{identity.platform}:{identity.platform_user_id}"


class Limits:
    """Takes and checks attempts against a `Limit`."""

    def __init__(self, attempts: AttemptLog, clock: Callable[[], datetime]) -> None:
        self._attempts = attempts
        self._clock = clock

    async def take(self, limit: Limit, who: str) -> None:
        """Count an attempt, or raise `RateLimitedError` when the limit is reached."""
        key = f"{limit.name}:{who}"
        if not await self._attempts.take(
            key, limit=limit.limit, window=limit.window, now=self._clock()
        ):
            raise RateLimitedError(limit.message)

    async def check(self, limit: Limit, who: str) -> None:
        """Raise `RateLimitedError` if `who` already reached the limit (nothing counted)."""
        key = f"{limit.name}:{who}"
        if await self._attempts.count(key, window=limit.window, now=self._clock()) >= limit.limit:
            raise RateLimitedError(limit.message)

    async def failed(self, limit: Limit, who: str) -> None:
        """Count a failed attempt (a wrong code)."""
        await self._attempts.record(f"{limit.name}:{who}", self._clock())

    async def prune(self, now: datetime) -> int:
        """Forget attempts older than any window."""
        return await self._attempts.prune(now - KEPT)
