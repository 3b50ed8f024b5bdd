"""Watched sources end to end: feeds and pages served on 127.0.0.1, scanned by the real core.

The site is a real HTTP server (tests/fakes/http_server.py) with ETag support; scans run
with an explicit `now`, so backoff and Retry-After are checked without waiting.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from ipaddress import IPv4Address
from zoneinfo import ZoneInfo

import pytest

from adapters.console import LOCAL_OWNER, ConsoleChat
from bot.app import Lore, open_lore
from bot.errors import WatchRefusedError
from bot.events import ChatRef, Identity
from bot.politeness import HostPacer, WatchPolicy, failure_delay, retry_after_delay
from graphs.ingest.feed_parsing import parse_feed
from graphs.ingest.feeds import FeedError, entry_request
from scheduler.jobs import send_digests
from storage.watched_sources import CheckStatus, SourceKind
from tests.chat_turns import RecordingNotifier
from tests.conftest import SettingsFactory
from tests.fakes.http_server import ScriptedServer, SeenRequest, Writer, answer
from tests.fakes.telegram_server import FakeTelegram
from tests.test_telegram import ALICE, OWNER, join, send, telegram

LOOPBACK = IPv4Address("127.0.0.1")
# Later than the real clock (sources are added "now" and due at once), whole seconds.
T0 = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
HOUR = timedelta(hours=1)
MEMBER = Identity("console", "bob", "Bob")

POSTS = {
    "/posts/tomatoes": (
        "Growing tomatoes",
        "Tomatoes need full sun, deep watering twice a week and a stake to climb on.",
    ),
    "/posts/compost": (
        "Compost heaps",
        "Turn the compost heap every two weeks so that it stays aerobic and warm inside.",
    ),
    "/posts/basil": (
        "Basil care",
        "Basil grows best beside tomatoes and should be pinched before it flowers in July.",
    ),
}
FULL_TEXT = "<p>" + " ".join(["Bees visit the lavender hedge every sunny morning."] * 14) + "</p>"


def article(title: str, text: str) -> bytes:
    return (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"<p>{text}</p><p>{text}</p></article></body></html>"
    ).encode()


@dataclass
class Site:
    """A small blog: an RSS feed (with ETag unless told otherwise), posts and one page."""

    feed_items: list[str] = field(default_factory=lambda: ["/posts/tomatoes", "/posts/compost"])
    full_text_item: bool = False
    etags: bool = True
    page_text: str = "The library opens at nine and closes at five on weekdays."
    feed_answer: tuple[str, dict[str, str]] | None = None  # a status to answer instead
    raw_feed: bytes | None = None

    def feed(self, base: str) -> bytes:
        items = [
            f"<item><title>{POSTS[path][0]}</title><link>{base}{path}</link>"
            f"<guid>{path}</guid><description>{POSTS[path][1][:40]}</description></item>"
            for path in self.feed_items
        ]
        if self.full_text_item:
            items.append(
                "<item><title>Bees and lavender</title><link>" + base + "/posts/bees</link>"
                "<guid>bees</guid><content:encoded><![CDATA[" + FULL_TEXT + "]]></content:encoded>"
                "</item>"
            )
        return (
            '<?xml version="1.0"?><rss version="2.0" '
            'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
            f"<title>Garden blog</title>{''.join(items)}</channel></rss>"
        ).encode()


def _etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:16] + '"'


def site_server(site: Site) -> ScriptedServer:
    server: ScriptedServer

    async def feed(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
        if site.feed_answer is not None:
            status, headers = site.feed_answer
            await answer(writer, status, b"busy", Content_Type="text/plain", **headers)
            return
        body = site.raw_feed or site.feed(server.url(""))
        await _conditional(seen, writer, body, "application/rss+xml", etags=site.etags)

    async def post(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
        title, text = POSTS.get(seen.path, ("Bees", "Bees again."))
        await answer(writer, "200 OK", article(title, text), Content_Type="text/html")

    async def page(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
        body = article("Library hours", site.page_text)
        await _conditional(seen, writer, body, "text/html; charset=utf-8", etags=site.etags)

    server = ScriptedServer(
        routes={"/feed.xml": feed, "/library": page}, prefixes={"/posts/": post}
    )
    return server


async def _conditional(
    seen: SeenRequest, writer: Writer, body: bytes, content_type: str, *, etags: bool
) -> None:
    if not etags:
        await answer(writer, "200 OK", body, Content_Type=content_type)
        return
    etag = _etag(body)
    if seen.headers.get("if-none-match") == etag:
        await answer(writer, "304 Not Modified", ETag=etag)
        return
    await answer(writer, "200 OK", body, Content_Type=content_type, ETag=etag)


@pytest.fixture
def site() -> Site:
    return Site()


@pytest.fixture
async def server(site: Site) -> AsyncIterator[ScriptedServer]:
    async with site_server(site) as running:
        yield running


@pytest.fixture
async def lore(make_settings: SettingsFactory) -> AsyncIterator[Lore]:
    """The real core; no pacing between requests (pacing has its own test below)."""
    settings = make_settings(watch_host_pacing_seconds=0, watch_interval_minutes=60)
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as core:
        yield core


def requests_to(server: ScriptedServer, prefix: str) -> list[SeenRequest]:
    return [seen for seen in server.requests if seen.path.startswith(prefix)]


async def shared_counts(lore: Lore) -> tuple[int, int]:
    stats = await lore.bot.maintenance.stats()
    return stats.shared_documents, stats.chunks


async def test_a_feed_is_ingested_once_and_a_304_costs_no_reingest(
    lore: Lore, server: ScriptedServer
) -> None:
    added = await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    assert added.created
    assert added.source.kind is SourceKind.FEED
    assert added.entries == 2

    first = await lore.bot.maintenance.scan_watched_sources(T0)
    assert first.saved == 2
    after_first = await shared_counts(lore)
    assert after_first[0] == 2
    hits = await lore.bot.search(LOCAL_OWNER, "how often to turn the compost heap", private=False)
    assert hits[0].passage.source_ref == server.url("/posts/compost")
    posts_fetched = len(requests_to(server, "/posts/"))
    assert posts_fetched == 2

    second = await lore.bot.maintenance.scan_watched_sources(T0 + 2 * HOUR)
    assert second.sources[0].status is CheckStatus.NOT_MODIFIED
    feed_requests = requests_to(server, "/feed.xml")
    assert feed_requests[-1].headers["if-none-match"] == _etag(Site().feed(server.url("")))
    assert await shared_counts(lore) == after_first
    assert len(requests_to(server, "/posts/")) == posts_fetched


async def test_without_etags_entries_seen_before_are_skipped_by_key(
    lore: Lore, site: Site, server: ScriptedServer
) -> None:
    site.etags = False
    await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    assert (await lore.bot.maintenance.scan_watched_sources(T0)).saved == 2
    counts = await shared_counts(lore)

    second = await lore.bot.maintenance.scan_watched_sources(T0 + 2 * HOUR)
    assert second.sources[0].status is CheckStatus.OK
    assert second.saved == 0
    assert await shared_counts(lore) == counts
    assert len(requests_to(server, "/posts/")) == 2


async def test_a_source_not_due_is_not_fetched(lore: Lore, server: ScriptedServer) -> None:
    await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    await lore.bot.maintenance.scan_watched_sources(T0)
    before = len(server.requests)
    report = await lore.bot.maintenance.scan_watched_sources(T0 + timedelta(minutes=30))
    assert report.sources == ()
    assert len(server.requests) == before


async def test_a_new_entry_is_ingested_on_the_next_scan_and_full_text_is_not_fetched(
    lore: Lore, site: Site, server: ScriptedServer
) -> None:
    await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    await lore.bot.maintenance.scan_watched_sources(T0)
    site.feed_items.insert(0, "/posts/basil")
    site.full_text_item = True

    report = await lore.bot.maintenance.scan_watched_sources(T0 + 2 * HOUR)
    assert report.saved == 2
    assert (await shared_counts(lore))[0] == 4
    assert [seen.path for seen in requests_to(server, "/posts/")] == [
        "/posts/tomatoes",
        "/posts/compost",
        "/posts/basil",
    ]  # the bees entry carried its full text: its link was never fetched
    hits = await lore.bot.search(LOCAL_OWNER, "which hedge do the bees visit?", private=False)
    assert "lavender" in hits[0].passage.text
    assert hits[0].passage.document_title == "Bees and lavender"


async def test_entries_over_the_per_scan_cap_wait_for_the_next_scan(
    make_settings: SettingsFactory, server: ScriptedServer
) -> None:
    settings = make_settings(watch_host_pacing_seconds=0, watch_max_entries_per_scan=1)
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore:
        await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
        first = await lore.bot.maintenance.scan_watched_sources(T0)
        assert (first.saved, first.sources[0].left) == (1, 1)
        second = await lore.bot.maintenance.scan_watched_sources(T0 + 2 * HOUR)
        assert second.saved == 1
        assert "if-none-match" not in requests_to(server, "/feed.xml")[-1].headers
        assert (await shared_counts(lore))[0] == 2


async def test_a_page_source_is_ingested_updated_when_changed_and_skipped_on_304(
    lore: Lore, site: Site, server: ScriptedServer
) -> None:
    added = await lore.bot.watch(LOCAL_OWNER, server.url("/library"))
    assert added.source.kind is SourceKind.PAGE
    assert (await lore.bot.maintenance.scan_watched_sources(T0)).saved == 1
    hits = await lore.bot.search(LOCAL_OWNER, "when does the library open", private=False)
    assert hits[0].passage.source_ref == server.url("/library")
    assert "nine" in hits[0].passage.text

    site.page_text = "The library opens at ten and closes at six on weekdays."
    changed = await lore.bot.maintenance.scan_watched_sources(T0 + 2 * HOUR)
    assert changed.saved == 1
    assert (await shared_counts(lore))[0] == 1  # updated in place, not a second document
    hits = await lore.bot.search(LOCAL_OWNER, "when does the library open", private=False)
    assert "ten" in hits[0].passage.text

    page_requests = len(requests_to(server, "/library"))
    unchanged = await lore.bot.maintenance.scan_watched_sources(T0 + 4 * HOUR)
    assert unchanged.sources[0].status is CheckStatus.NOT_MODIFIED
    assert len(requests_to(server, "/library")) == page_requests + 1
    [source] = await lore.bot.watches(LOCAL_OWNER)
    assert source.title == "Library hours"


REFUSED = {
    "http://10.0.0.1/feed.xml": "private, local or metadata",
    "http://169.254.169.254/latest/meta-data/": "private, local or metadata",
    "http://localhost/feed": "local or internal hosts",
    "ftp://example.com/feed": "http:// and https://",
    "not a link": "",
}


async def test_a_refused_url_is_refused_politely_at_watch(lore: Lore) -> None:
    for url, reason in REFUSED.items():
        with pytest.raises(WatchRefusedError) as refused:
            await lore.bot.watch(LOCAL_OWNER, url)
        assert reason in str(refused.value)
        assert str(refused.value)
    assert await lore.bot.watches(LOCAL_OWNER) == []


async def test_only_owners_can_watch_or_unwatch(lore: Lore, server: ScriptedServer) -> None:
    await lore.bot.local_member(LOCAL_OWNER, "bob", create=True)
    for who in (MEMBER, Identity("console", "stranger", "Sam")):
        with pytest.raises(WatchRefusedError, match="Only an owner"):
            await lore.bot.watch(who, server.url("/feed.xml"))
    assert await lore.bot.watches(LOCAL_OWNER) == []
    assert server.requests == []

    added = await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    with pytest.raises(WatchRefusedError, match="Only an owner"):
        await lore.bot.unwatch(MEMBER, str(added.source.id))
    removed = await lore.bot.unwatch(LOCAL_OWNER, server.url("/feed.xml"))
    assert removed is not None
    assert removed.id == added.source.id
    assert await lore.bot.watches(LOCAL_OWNER) == []
    assert await lore.bot.unwatch(LOCAL_OWNER, str(added.source.id)) is None


@pytest.mark.parametrize("http_date", [False, True])
async def test_retry_after_pushes_the_next_check(
    lore: Lore, site: Site, server: ScriptedServer, http_date: bool
) -> None:
    await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    later = T0 + timedelta(hours=5)
    retry_after = format_datetime(later, usegmt=True) if http_date else str(5 * 3600)
    status = "503 Service Unavailable" if http_date else "429 Too Many Requests"
    site.feed_answer = (status, {"Retry-After": retry_after})

    report = await lore.bot.maintenance.scan_watched_sources(T0)
    assert report.sources[0].status is CheckStatus.RETRY_LATER
    [source] = await lore.bot.watches(LOCAL_OWNER)
    assert source.next_check_at == later
    assert (source.failures, source.last_status) == (1, CheckStatus.RETRY_LATER)

    before = len(server.requests)
    assert (
        await lore.bot.maintenance.scan_watched_sources(later - timedelta(minutes=1))
    ).sources == ()
    assert len(server.requests) == before
    site.feed_answer = None
    assert (await lore.bot.maintenance.scan_watched_sources(later)).saved == 2


async def test_a_malformed_feed_does_not_crash_the_scan_and_backs_off(
    lore: Lore, site: Site, server: ScriptedServer
) -> None:
    await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    await lore.bot.watch(LOCAL_OWNER, server.url("/library"))
    site.raw_feed = b'<?xml version="1.0"?><rss><channel><item><title>Broken'

    report = await lore.bot.maintenance.scan_watched_sources(T0)
    by_url = {scan.url: scan for scan in report.sources}
    broken = by_url[server.url("/feed.xml")]
    assert broken.status is CheckStatus.FAILED
    assert "not well-formed" in (broken.error or "")
    assert by_url[server.url("/library")].saved == 1  # the other source still ran

    feed = next(s for s in await lore.bot.watches(LOCAL_OWNER) if s.kind is SourceKind.FEED)
    assert (feed.failures, feed.next_check_at) == (1, T0 + 2 * HOUR)
    await lore.bot.maintenance.scan_watched_sources(T0 + 2 * HOUR)
    feed = next(s for s in await lore.bot.watches(LOCAL_OWNER) if s.kind is SourceKind.FEED)
    assert (feed.failures, feed.next_check_at) == (2, T0 + 2 * HOUR + 4 * HOUR)


async def test_an_entity_declaring_feed_is_refused_at_watch(
    lore: Lore, site: Site, server: ScriptedServer
) -> None:
    site.raw_feed = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>'
        b"<rss><channel><title>&b;</title></channel></rss>"
    )
    with pytest.raises(WatchRefusedError, match="declares a document type"):
        await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))


async def test_row_e_a_feed_is_parsed_in_the_extraction_workers_under_their_limits(
    make_settings: SettingsFactory, site: Site, server: ScriptedServer
) -> None:
    # 200,000 items (~18 MB) need about 150 MB more to parse: more than a worker of 128 MB
    # holds; parsed in the bot's own process, nothing would stop them.
    items = "".join(
        f"<item><title>Post {n}</title><guid>g{n}</guid><description>d{n}</description></item>"
        for n in range(200_000)
    )
    site.raw_feed = f'<?xml version="1.0"?><rss><channel>{items}</channel></rss>'.encode()
    settings = make_settings(
        watch_host_pacing_seconds=0, extract_memory_mb=128, fetch_max_bytes=24 * 1024 * 1024
    )
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore:
        with pytest.raises(WatchRefusedError, match="more work to read than Lore allows"):
            await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
        # A feed of ordinary size is read by the same workers.
        site.raw_feed = None
        added = await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
        assert added.source.kind is SourceKind.FEED
        assert await lore.bot.watches(LOCAL_OWNER) == [added.source]


def test_feed_parsing_reads_atom_and_refuses_declarations() -> None:
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>'
        b'<entry><id>urn:1</id><title>One</title><link rel="alternate" href="/one"/>'
        b'<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Hi</p></div>'
        b"</content></entry>"
        b'<entry><title>Two</title><link href="javascript:alert(1)"/></entry></feed>'
    )
    feed = parse_feed(atom, base_url="https://blog.example/feed")
    assert feed.title == "A"
    one, two = feed.entries
    assert (one.key, one.link, one.content) == (
        "urn:1",
        "https://blog.example/one",
        "<div><p>Hi</p></div>",
    )
    assert two.link is None
    assert two.key.startswith("sha256:")
    request = entry_request(one)
    assert request is not None
    assert request.url is not None  # short content: the link is fetched
    with pytest.raises(FeedError):
        parse_feed(b'<!DOCTYPE x SYSTEM "file:///etc/passwd"><rss/>', base_url="https://b.example/")


async def test_host_pacing_waits_between_requests_to_one_host() -> None:
    clock = [100.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    pacer = HostPacer(2.0, monotonic=lambda: clock[0], sleep=sleep)
    await pacer.wait("https://a.example/feed")
    await pacer.wait("https://b.example/feed")
    clock[0] += 0.5
    await pacer.wait("https://A.example/post/1")
    assert slept == [1.5]
    clock[0] += 5
    await pacer.wait("https://a.example/post/2")
    assert slept == [1.5]


def test_backoff_doubles_and_retry_after_is_bounded() -> None:
    policy = WatchPolicy(check_interval=HOUR, max_backoff=timedelta(hours=10))
    assert [failure_delay(policy, n, None, T0) for n in (1, 2, 3, 4)] == [
        2 * HOUR,
        4 * HOUR,
        8 * HOUR,
        10 * HOUR,
    ]
    assert failure_delay(policy, 1, "0", T0) == timedelta(minutes=1)
    assert failure_delay(policy, 1, "99999999", T0) == policy.max_retry_after
    assert retry_after_delay("soon", T0) is None


async def test_console_watch_commands(lore: Lore, server: ScriptedServer) -> None:
    out: list[str] = []

    async def no_input(_prompt: str) -> str | None:
        return None

    chat = ConsoleChat(lore.bot, read_line=no_input, write=out.append, interactive=False)
    await chat.handle(f"/watch {server.url('/feed.xml')}")
    await chat.handle("/watch http://192.168.1.1/feed")
    await chat.handle("/watches")
    text = "".join(out)
    # The same words as on every edge (the replies come from the bot/ registry).
    assert "Watching the feed 'Garden blog' (2 entries now), number 1." in text
    assert "private, local or metadata" in text
    assert f"Garden blog <{server.url('/feed.xml')}> (feed; not checked yet;" in text
    await chat.handle("/unwatch 1")
    assert out[-1].startswith(f"Stopped watching {server.url('/feed.xml')}.")


async def test_telegram_watch_commands_are_for_owners(
    make_settings: SettingsFactory, server: ScriptedServer
) -> None:
    settings = make_settings(owners="telegram:1001,console:owner", watch_host_pacing_seconds=0)
    async with FakeTelegram() as fake, telegram(settings, fake) as (lore, _):
        owner_menu = await fake.wait_for("setMyCommands", count=2)
        assert {"watch", "watches", "unwatch"} <= {
            c["command"] for c in owner_menu.params["commands"]
        }
        await join(fake, ALICE)
        await send(fake, ALICE, f"/watch {server.url('/feed.xml')}")
        await fake.wait_until_call(lambda c: c.chat_id == ALICE.id and "Only an owner" in c.text)

        await send(fake, OWNER, "/watch http://192.168.0.10/feed.xml")
        await fake.wait_until_call(
            lambda c: c.chat_id == OWNER.id and "private, local or metadata" in c.text
        )
        await send(fake, OWNER, f"/watch {server.url('/feed.xml')}")
        await fake.wait_until_call(
            lambda c: c.chat_id == OWNER.id and "Watching the feed 'Garden blog'" in c.text
        )
        await lore.bot.maintenance.scan_watched_sources(T0)
        await send(fake, OWNER, "/watches")
        listed = await fake.wait_until_call(lambda c: "Watched sources" in c.text)
        assert "Garden blog" in listed.text
        assert "ok;" in listed.text
        await send(fake, OWNER, "/unwatch 1")
        await fake.wait_until_call(lambda c: "Stopped watching" in c.text)
        assert await lore.bot.watches(LOCAL_OWNER) == []


async def test_the_digest_job_scans_due_sources_first_so_the_digest_carries_new_entries(
    lore: Lore, server: ScriptedServer
) -> None:
    box = RecordingNotifier()
    lore.bot.register_notifier("console", box)
    await lore.bot.watch(LOCAL_OWNER, server.url("/feed.xml"))
    local = T0.astimezone(ZoneInfo("Europe/Berlin"))
    owner_chat = ChatRef("console", "owner")
    await lore.bot.set_digest(LOCAL_OWNER, owner_chat, f"{local:%H:%M}", "Europe/Berlin")

    summary = await send_digests(lore.bot, T0)

    assert "2 documents saved" in summary
    [(chat, text)] = box.texts
    assert chat == "owner"
    assert "Growing tomatoes" in text
    assert "Compost heaps" in text
