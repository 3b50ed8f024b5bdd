"""Watched sources (feeds and pages the owners follow) and the entries already taken from them.

One row per watched URL holds what polite fetching needs between scans: the
validators for conditional requests (ETag, Last-Modified), when it is next due,
and how many checks in a row have failed. `watched_entries` remembers every feed
entry (by guid or link) already handled, so a later scan never ingests it again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from storage.database import Database, Row
from storage.ids import DocumentId, UserId
from storage.timestamps import utc_iso

__all__ = [
    "CheckRecord",
    "CheckStatus",
    "SourceKind",
    "WatchedEntry",
    "WatchedSource",
    "WatchedSourceRepository",
]


class SourceKind(StrEnum):
    """What a watched URL answers with: a feed of entries, or one page."""

    FEED = "feed"
    PAGE = "page"


class CheckStatus(StrEnum):
    """How the last check of a source went."""

    OK = "ok"
    NOT_MODIFIED = "not_modified"
    FAILED = "failed"
    RETRY_LATER = "retry_later"


@dataclass(frozen=True, slots=True)
class WatchedSource:
    """One watched URL and its fetch state."""

    id: int
    url: str
    kind: SourceKind | None
    title: str | None
    added_by: UserId | None
    added_at: datetime
    etag: str | None
    last_modified: str | None
    last_checked_at: datetime | None
    last_status: CheckStatus | None
    last_error: str | None
    next_check_at: datetime
    failures: int


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """The outcome of one check, written back to the source's row as a whole."""

    checked_at: datetime
    status: CheckStatus
    next_check_at: datetime
    failures: int
    etag: str | None
    last_modified: str | None
    error: str | None = None
    kind: SourceKind | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class WatchedEntry:
    """An entry (or page version) taken from a source, and the document it became."""

    source_id: int
    entry_key: str
    document_id: DocumentId | None
    seen_at: datetime


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _source(row: Row) -> WatchedSource:
    added_at = _time(row["added_at"])
    next_check_at = _time(row["next_check_at"])
    assert added_at is not None  # noqa: S101 - NOT NULL columns
    assert next_check_at is not None  # noqa: S101
    return WatchedSource(
        id=int(row["id"]),
        url=row["url"],
        kind=SourceKind(row["kind"]) if row["kind"] is not None else None,
        title=row["title"],
        added_by=UserId(row["added_by"]) if row["added_by"] is not None else None,
        added_at=added_at,
        etag=row["etag"],
        last_modified=row["last_modified"],
        last_checked_at=_time(row["last_checked_at"]),
        last_status=CheckStatus(row["last_status"]) if row["last_status"] is not None else None,
        last_error=row["last_error"],
        next_check_at=next_check_at,
        failures=int(row["failures"]),
    )


def _entry(row: Row) -> WatchedEntry:
    seen_at = _time(row["seen_at"])
    assert seen_at is not None  # noqa: S101 - a NOT NULL column
    return WatchedEntry(
        source_id=int(row["source_id"]),
        entry_key=row["entry_key"],
        document_id=DocumentId(row["document_id"]) if row["document_id"] is not None else None,
        seen_at=seen_at,
    )


class WatchedSourceRepository:
    """Reads and writes watched sources and their seen entries."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add(
        self,
        url: str,
        *,
        kind: SourceKind | None,
        title: str | None,
        added_by: UserId | None,
        now: datetime,
    ) -> tuple[WatchedSource, bool]:
        """Watch `url` from `now` on (due at once); return the row and whether it is new."""
        async with self._db.transaction() as tx:
            try:
                await tx.execute(
                    "INSERT INTO watched_sources (url, kind, title, added_by, added_at,"
                    " next_check_at, failures) VALUES (?, ?, ?, ?, ?, ?, 0)",
                    (url, kind, title, added_by, utc_iso(now), utc_iso(now)),
                )
                created = True
            except sqlite3.IntegrityError:
                created = False
        source = await self.by_url(url)
        if source is None:
            raise LookupError(url)  # unwatched by someone else in between
        return source, created

    async def get(self, source_id: int) -> WatchedSource | None:
        """One source by id, or None."""
        row = await self._db.fetch_one("SELECT * FROM watched_sources WHERE id = ?", (source_id,))
        return _source(row) if row is not None else None

    async def by_url(self, url: str) -> WatchedSource | None:
        """One source by its (normalised) URL, or None."""
        row = await self._db.fetch_one("SELECT * FROM watched_sources WHERE url = ?", (url,))
        return _source(row) if row is not None else None

    async def remove(self, source_id: int) -> bool:
        """Stop watching; its seen entries go too (the documents stay). False if unknown."""
        async with self._db.transaction() as tx:
            cursor = await tx.execute("DELETE FROM watched_sources WHERE id = ?", (source_id,))
            return cursor.rowcount == 1

    async def list_all(self) -> list[WatchedSource]:
        """Every watched source, oldest first."""
        rows = await self._db.fetch_all("SELECT * FROM watched_sources ORDER BY id")
        return [_source(row) for row in rows]

    async def due(self, now: datetime, *, limit: int) -> list[WatchedSource]:
        """Sources whose next check is at or before `now`, longest waiting first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM watched_sources WHERE next_check_at <= ?"
            " ORDER BY next_check_at, id LIMIT ?",
            (utc_iso(now), limit),
        )
        return [_source(row) for row in rows]

    async def record_check(self, source_id: int, check: CheckRecord) -> None:
        """Write one check's outcome; kind and title change only when given."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "UPDATE watched_sources SET last_checked_at = ?, last_status = ?,"
                " next_check_at = ?, failures = ?, etag = ?, last_modified = ?, last_error = ?,"
                " kind = IFNULL(?, kind), title = IFNULL(?, title) WHERE id = ?",
                (
                    utc_iso(check.checked_at),
                    check.status.value,
                    utc_iso(check.next_check_at),
                    check.failures,
                    check.etag,
                    check.last_modified,
                    check.error,
                    check.kind,
                    check.title,
                    source_id,
                ),
            )

    async def seen_keys(self, source_id: int, keys: Sequence[str]) -> set[str]:
        """Which of these entry keys were already handled for this source."""
        rows = await self._db.fetch_all(
            "SELECT entry_key FROM watched_entries WHERE source_id = ?"
            " AND entry_key IN (SELECT value FROM json_each(?))",
            (source_id, json.dumps(list(keys))),
        )
        return {row[0] for row in rows}

    async def mark_seen(
        self, source_id: int, entry_key: str, document_id: DocumentId | None, seen_at: datetime
    ) -> None:
        """Remember an entry as handled (again: the newer document and time win)."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO watched_entries (source_id, entry_key, document_id, seen_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (source_id, entry_key) DO UPDATE SET"
                " document_id = excluded.document_id, seen_at = excluded.seen_at",
                (source_id, entry_key, document_id, utc_iso(seen_at)),
            )

    async def entries_since(self, since: datetime) -> list[WatchedEntry]:
        """Entries handled at or after `since` that became documents, oldest first (digests)."""
        rows = await self._db.fetch_all(
            "SELECT * FROM watched_entries WHERE seen_at >= ? AND document_id IS NOT NULL"
            " ORDER BY seen_at, source_id, entry_key",
            (utc_iso(since),),
        )
        return [_entry(row) for row in rows]
