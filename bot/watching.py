"""Watched sources: owners follow feeds and pages; a scan saves what is new to the shared KB.

A scan checks each source that is due, politely:

- conditional requests from the stored ETag / Last-Modified (a 304 costs nothing more);
- at least `host_pacing_seconds` between two requests to one host within a scan;
- a 429 or 503 with Retry-After moves the source's next check to when the server asked;
- any other failure backs off exponentially (`check_interval * 2**failures`, capped);
- at most `max_entries_per_scan` entries are ingested per scan; the rest wait for the next
  one (the validators are then not kept, so the next fetch sees the whole feed again).

New feed entries (by guid or link) and changed pages go through the ingest graph into the
shared knowledge, so the graph's dedupe by URL and content hash applies; an entry already
taken is skipped by its key. A failing source is recorded on its row and never stops the scan.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from bot.errors import WatchRefusedError
from bot.politeness import RETRY_STATUSES, HostPacer, Sleep, WatchPolicy, failure_delay
from graphs.ingest.errors import FetchFailedError, IngestError
from graphs.ingest.feeds import Feed, FeedEntry, FeedReader, entry_request, looks_like_feed
from graphs.ingest.state import IngestOutcome, IngestRequest, IngestResult
from graphs.ingest.url_fetch import FetchedResource, FetchStatusError, SafeFetcher
from graphs.ingest.url_safety import parse_url, redact_url
from storage.users import Role, User
from storage.watched_sources import (
    CheckRecord,
    CheckStatus,
    SourceKind,
    WatchedSource,
    WatchedSourceRepository,
)

__all__ = [
    "EntryOutcome",
    "ScanReport",
    "SourceScan",
    "WatchAdded",
    "Watching",
]

logger = logging.getLogger(__name__)

Ingest = Callable[[IngestRequest], Awaitable[IngestResult]]

_TRANSIENT_STATUSES = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class WatchAdded:
    """The answer to /watch: the source, whether it is new, what it looked like."""

    source: WatchedSource
    created: bool
    entries: int | None = None


class EntryOutcome(StrEnum):
    """What became of one feed entry in a scan."""

    SAVED = "saved"
    DUPLICATE = "duplicate"
    SKIPPED = "skipped"
    RETRY = "retry"


@dataclass(frozen=True, slots=True)
class SourceScan:
    """One source's check in a scan: its status and what its entries became."""

    source_id: int
    url: str
    status: CheckStatus
    saved: int = 0
    duplicates: int = 0
    skipped: int = 0
    left: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ScanReport:
    """A whole scan."""

    sources: tuple[SourceScan, ...]

    @property
    def saved(self) -> int:
        """Documents saved or updated across every source."""
        return sum(scan.saved for scan in self.sources)

    @property
    def failed(self) -> int:
        """Sources whose check failed or was deferred by the server."""
        return sum(
            scan.status in (CheckStatus.FAILED, CheckStatus.RETRY_LATER) for scan in self.sources
        )


def _owner(user: User | None) -> User:
    if user is None or user.role is not Role.OWNER:
        raise WatchRefusedError("Only an owner can change the watched sources.")
    return user


def _normalised(url: str) -> str:
    try:
        return str(parse_url(url).url)
    except IngestError as exc:
        raise WatchRefusedError(str(exc)) from exc


class Watching:
    """Owners' watched sources and the scan that reads them."""

    def __init__(
        self,
        *,
        sources: WatchedSourceRepository,
        fetcher: SafeFetcher,
        feeds: FeedReader,
        ingest: Ingest,
        clock: Callable[[], datetime],
        policy: WatchPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sources = sources
        self._fetcher = fetcher
        self._feeds = feeds
        self._ingest = ingest
        self._clock = clock
        self._policy = policy or WatchPolicy()
        self._sleep = sleep
        self._monotonic = monotonic

    async def watch(self, user: User | None, url: str) -> WatchAdded:
        """An owner starts watching `url`, fetched once first; raises `WatchRefusedError`."""
        owner = _owner(user)
        if not url.strip():
            raise WatchRefusedError("Usage: /watch URL (an RSS or Atom feed, or a page).")
        normalised = _normalised(url)
        existing = await self._sources.by_url(normalised)
        if existing is not None:
            return WatchAdded(existing, created=False)
        try:
            resource = await self._fetcher.fetch(normalised)
            feed = await self._feed_of(resource)
        except IngestError as exc:
            raise WatchRefusedError(f"{exc} I am not watching it.") from exc
        kind = SourceKind.FEED if feed is not None else SourceKind.PAGE
        title = feed.title if feed is not None else None
        source, created = await self._sources.add(
            normalised, kind=kind, title=title, added_by=owner.id, now=self._clock()
        )
        logger.info("Watching source %d (%s)", source.id, kind.value)
        return WatchAdded(source, created, len(feed.entries) if feed is not None else None)

    async def unwatch(self, user: User | None, url_or_id: str) -> WatchedSource | None:
        """An owner stops watching a source given by its number or URL; None if there is none.

        Documents already taken from it stay in the shared knowledge.
        """
        _owner(user)
        text = url_or_id.strip()
        if not text:
            raise WatchRefusedError("Usage: /unwatch URL or /unwatch NUMBER (see /watches).")
        if text.isdigit():
            source = await self._sources.get(int(text))
        else:
            source = await self._sources.by_url(text) or await self._sources.by_url(
                _normalised(text)
            )
        if source is None or not await self._sources.remove(source.id):
            return None
        logger.info("Stopped watching source %d", source.id)
        return source

    async def watches(self, user: User | None) -> list[WatchedSource]:
        """Every watched source, oldest first (owners only)."""
        _owner(user)
        return await self._sources.list_all()

    async def scan(self, now: datetime) -> ScanReport:
        """Check every due source once; never raises for one source's failure."""
        policy = self._policy
        pacer = HostPacer(policy.host_pacing_seconds, monotonic=self._monotonic, sleep=self._sleep)
        budget = [policy.max_entries_per_scan]
        due = await self._sources.due(now, limit=policy.max_sources_per_scan)
        report = ScanReport(tuple([await self._scan_one(s, now, pacer, budget) for s in due]))
        logger.info(
            "Watched sources scanned: %d checked, %d documents saved, %d failed",
            len(report.sources),
            report.saved,
            report.failed,
        )
        return report

    async def _scan_one(
        self, source: WatchedSource, now: datetime, pacer: HostPacer, budget: list[int]
    ) -> SourceScan:
        try:
            return await self._check(source, now, pacer, budget)
        except IngestError as exc:
            logger.info("Watched source %d failed: %s", source.id, type(exc).__name__)
            return await self._record_failure(source, now, exc, str(exc))
        except Exception as exc:  # a job boundary: one source never stops the scan
            logger.exception("Watched source %d: unexpected error", source.id)
            return await self._record_failure(
                source, now, exc, "Something went wrong while checking this source."
            )

    async def _check(
        self, source: WatchedSource, now: datetime, pacer: HostPacer, budget: list[int]
    ) -> SourceScan:
        headers = {}
        if source.etag:
            headers["If-None-Match"] = source.etag
        if source.last_modified:
            headers["If-Modified-Since"] = source.last_modified
        await pacer.wait(source.url)
        resource = await self._fetcher.fetch(source.url, extra_headers=headers)
        if resource.status == 304:
            await self._record(
                source, now, CheckStatus.NOT_MODIFIED, source.etag, source.last_modified
            )
            return SourceScan(source.id, source.url, CheckStatus.NOT_MODIFIED)
        feed = await self._feed_of(resource)
        if feed is None:
            return await self._check_page(source, resource, now, pacer)
        outcomes, left = await self._take_entries(source, feed, now, pacer, budget)
        complete = left == 0 and EntryOutcome.RETRY not in outcomes
        etag, modified = (resource.etag, resource.last_modified) if complete else (None, None)
        await self._record(
            source, now, CheckStatus.OK, etag, modified, kind=SourceKind.FEED, title=feed.title
        )
        return SourceScan(
            source.id,
            source.url,
            CheckStatus.OK,
            saved=outcomes.count(EntryOutcome.SAVED),
            duplicates=outcomes.count(EntryOutcome.DUPLICATE),
            skipped=outcomes.count(EntryOutcome.SKIPPED),
            left=left + outcomes.count(EntryOutcome.RETRY),
        )

    async def _check_page(
        self, source: WatchedSource, resource: FetchedResource, now: datetime, pacer: HostPacer
    ) -> SourceScan:
        """A page that changed (or has no validators) is ingested again by URL."""
        await pacer.wait(source.url)
        result = await self._ingest(IngestRequest(owner_id=None, url=source.url))
        changed = result.outcome is not IngestOutcome.DUPLICATE
        if changed:
            await self._sources.mark_seen(source.id, source.url, result.document_id, now)
        await self._record(
            source,
            now,
            CheckStatus.OK,
            resource.etag,
            resource.last_modified,
            kind=SourceKind.PAGE,
            title=result.title,
        )
        return SourceScan(
            source.id, source.url, CheckStatus.OK, saved=int(changed), duplicates=int(not changed)
        )

    async def _feed_of(self, resource: FetchedResource) -> Feed | None:
        if not looks_like_feed(resource.content_type, resource.body):
            return None
        return await self._feeds.parse_feed(resource.body, base_url=resource.final_url)

    async def _take_entries(
        self,
        source: WatchedSource,
        feed: Feed,
        now: datetime,
        pacer: HostPacer,
        budget: list[int],
    ) -> tuple[list[EntryOutcome], int]:
        """Ingest the entries not seen before, within the scan's budget; return what happened."""
        seen = await self._sources.seen_keys(source.id, [entry.key for entry in feed.entries])
        new = [entry for entry in feed.entries if entry.key not in seen]
        taken = new[: max(budget[0], 0)]
        budget[0] -= len(taken)
        outcomes = [await self._take_entry(source, entry, now, pacer) for entry in taken]
        return outcomes, len(new) - len(taken)

    async def _take_entry(
        self, source: WatchedSource, entry: FeedEntry, now: datetime, pacer: HostPacer
    ) -> EntryOutcome:
        request = entry_request(entry)
        if request is None:
            await self._sources.mark_seen(source.id, entry.key, None, now)
            return EntryOutcome.SKIPPED
        if request.url is not None:
            await pacer.wait(request.url)
        try:
            result = await self._ingest(request)
        except FetchFailedError as exc:
            if not isinstance(exc, FetchStatusError) or exc.status in _TRANSIENT_STATUSES:
                logger.info("Feed entry of source %d: will retry (%s)", source.id, exc)
                return EntryOutcome.RETRY
            await self._sources.mark_seen(source.id, entry.key, None, now)
            return EntryOutcome.SKIPPED
        except IngestError as exc:  # refused for good: never asked again
            logger.info("Feed entry of source %d skipped: %s", source.id, type(exc).__name__)
            await self._sources.mark_seen(source.id, entry.key, None, now)
            return EntryOutcome.SKIPPED
        await self._sources.mark_seen(source.id, entry.key, result.document_id, now)
        if result.outcome is IngestOutcome.DUPLICATE:
            return EntryOutcome.DUPLICATE
        return EntryOutcome.SAVED

    async def _record(
        self,
        source: WatchedSource,
        now: datetime,
        status: CheckStatus,
        etag: str | None,
        last_modified: str | None,
        *,
        kind: SourceKind | None = None,
        title: str | None = None,
    ) -> None:
        check = CheckRecord(
            checked_at=now,
            status=status,
            next_check_at=now + self._policy.check_interval,
            failures=0,
            etag=etag,
            last_modified=last_modified,
            kind=kind,
            title=title,
        )
        await self._sources.record_check(source.id, check)

    async def _record_failure(
        self, source: WatchedSource, now: datetime, exc: BaseException, message: str
    ) -> SourceScan:
        """Back off: to when the server asked (429/503 + Retry-After), else exponentially."""
        failures = source.failures + 1
        status, retry_after = CheckStatus.FAILED, None
        if isinstance(exc, FetchStatusError) and exc.status in RETRY_STATUSES:
            status, retry_after = CheckStatus.RETRY_LATER, exc.retry_after
        delay = failure_delay(self._policy, failures, retry_after, now)
        check = CheckRecord(
            checked_at=now,
            status=status,
            next_check_at=now + delay,
            failures=failures,
            etag=source.etag,
            last_modified=source.last_modified,
            error=message,
        )
        await self._sources.record_check(source.id, check)
        logger.info(
            "Watched source %d (%s): next check in %s", source.id, redact_url(source.url), delay
        )
        return SourceScan(source.id, source.url, status, error=message)
