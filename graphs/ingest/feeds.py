"""Feeds as the bot knows them: their entries, how to ingest one, and how a parsed feed
travels back from the extraction worker that parsed it.

Feeds are untrusted input (DESIGN.md invariant 8): they are parsed in the extraction
workers, under the same CPU and memory limits as every file (`graphs.ingest.feed_parsing`,
run through `ExtractionPool.parse_feed`), never in the bot's own process.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from graphs.ingest.errors import IngestError
from graphs.ingest.state import IngestRequest

__all__ = [
    "FEED_CONTENT_TYPES",
    "MIN_FULL_TEXT_CHARS",
    "Feed",
    "FeedEntry",
    "FeedError",
    "FeedReader",
    "entry_request",
    "feed_from_json",
    "feed_to_json",
    "looks_like_feed",
]

FEED_CONTENT_TYPES = frozenset(
    {"application/rss+xml", "application/atom+xml", "application/xml", "text/xml"}
)
# Feed content this long or longer counts as the full text (no need to fetch the link).
MIN_FULL_TEXT_CHARS = 500


class FeedError(IngestError):
    """The document is not an RSS or Atom feed Lore can read (or it declares entities)."""


@dataclass(frozen=True, slots=True)
class FeedEntry:
    """One feed item. `key` is its guid / id, else its link, else a hash of its text.

    `content` is the full text as HTML when the feed carries it; `summary` the short
    description, also as HTML. `link` is an absolute http(s) URL or None.
    """

    key: str
    link: str | None
    title: str | None
    content: str | None
    summary: str | None


@dataclass(frozen=True, slots=True)
class Feed:
    """A parsed feed: its title and its entries in document order (usually newest first)."""

    title: str | None
    entries: tuple[FeedEntry, ...]


class FeedReader(Protocol):
    """Parses a feed's bytes out of the bot's process (`ExtractionPool.parse_feed`)."""

    async def parse_feed(self, body: bytes, *, base_url: str) -> Feed:
        """The feed, or a `FeedError` (an `IngestError`) saying why not."""


def feed_to_json(feed: Feed) -> str:
    """A parsed feed as the worker sends it back."""
    return json.dumps(asdict(feed))


def feed_from_json(text: str) -> Feed:
    """A feed the worker sent back."""
    raw: dict[str, Any] = json.loads(text)
    entries = tuple(FeedEntry(**entry) for entry in raw["entries"])
    return Feed(title=raw["title"], entries=entries)


def looks_like_feed(content_type: str, body: bytes) -> bool:
    """True for an XML media type, or a body that starts like a feed whatever its type."""
    if content_type in FEED_CONTENT_TYPES:
        return True
    head = body[:512].lstrip().lower()
    return head.startswith((b"<?xml", b"<rss", b"<feed", b"<rdf:rdf"))


def entry_request(entry: FeedEntry) -> IngestRequest | None:
    """How to ingest an entry into the shared knowledge: its full text, else its link."""
    full_text = (
        entry.content if entry.content and len(entry.content) >= MIN_FULL_TEXT_CHARS else None
    )
    if full_text is None and entry.link is None:
        full_text = entry.content or entry.summary
    if full_text is not None:
        return IngestRequest(
            owner_id=None,
            data=_entry_document(entry.title, full_text),
            file_name=_entry_file_name(entry),
            title=entry.title,
        )
    if entry.link is not None:
        return IngestRequest(owner_id=None, url=entry.link, title=entry.title)
    return None


def _entry_document(title: str | None, body: str) -> bytes:
    heading = f"<h1>{html.escape(title)}</h1>" if title else ""
    head = f"<title>{html.escape(title)}</title>" if title else ""
    page = f"<html><head>{head}</head><body><article>{heading}{body}</article></body></html>"
    return page.encode()


def _entry_file_name(entry: FeedEntry) -> str:
    """A stable, distinct name per entry: the graph keys file sources by their name."""
    words = re.sub(r"[^a-z0-9]+", "-", (entry.title or "entry").lower()).strip("-")[:60]
    digest = hashlib.sha256(entry.key.encode()).hexdigest()[:10]
    return f"{words or 'entry'}-{digest}.html"
