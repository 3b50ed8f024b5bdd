"""How moments are stored in SQLite: ISO-8601 UTC to the second, so text order is time order."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["now_iso", "stamp", "utc_iso"]


def utc_iso(moment: datetime) -> str:
    """A timezone-aware moment as stored in SQLite."""
    if moment.tzinfo is None:
        raise ValueError("Timestamps must be timezone-aware")
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def stamp(now: datetime | None = None) -> str:
    """`now` as stored in SQLite, or the current time when it is None."""
    return utc_iso(now if now is not None else datetime.now(UTC))


def now_iso() -> str:
    """The current UTC time as stored in SQLite."""
    return stamp()
