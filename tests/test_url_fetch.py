"""SafeFetcher against real loopback servers: refusals, pinning, redirects, size/time/type caps."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections.abc import AsyncIterator, Mapping, Sequence
from ipaddress import IPv4Address, ip_address

import pytest

from graphs.ingest.errors import (
    FetchFailedError,
    FileTooLargeError,
    IngestError,
    UnsupportedContentTypeError,
    UnsupportedSourceError,
    UrlRefusedError,
)
from graphs.ingest.url_fetch import FetchLimits, SafeFetcher
from graphs.ingest.url_safety import Address
from tests.fakes.http_server import Route, ScriptedServer, SeenRequest, Writer, answer, head

LOOPBACK = IPv4Address("127.0.0.1")
CAP = 64 * 1024
PAGE = b"<html><head><title>Hello</title></head><body>hi</body></html>"


class FakeResolver:
    """Answers from a fixed table and records every lookup; unknown names fail like DNS."""

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table = table
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[Address]:
        self.calls.append((host, port))
        if host not in self.table:
            raise OSError(f"no such host {host}")
        return [ip_address(a) for a in self.table[host]]


async def page(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    await answer(writer, "200 OK", PAGE, Content_Type='text/html; charset="UTF-8"')


async def chain(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    left = int(seen.path.rsplit("/", 1)[1])
    if left == 0:
        await page(seen, reader, writer)
    else:  # a relative Location: /chain/3 -> "2" -> /chain/2
        await answer(writer, "302 Found", Location=str(left - 1))


def redirect_to(location: str) -> Route:
    async def route(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
        await answer(writer, "302 Found", Location=location)

    return route


async def backslash_redirect(
    seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer
) -> None:
    # httpx reads the host as 127.0.0.1 (allowed here), a browser as 10.0.0.1: refuse both.
    await answer(writer, "302 Found", Location=f"http://10.0.0.1\\@{seen.headers['host']}/page")


async def slow_redirect(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    await asyncio.sleep(0.1)
    await answer(writer, "307 Temporary Redirect", Location="/slow-redirect")


async def declared_too_big(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    # Headers only, then silence: a fetcher that waited for the body would time out instead.
    writer.write(head("200 OK", {"Content-Type": "text/plain", "Content-Length": str(CAP + 1)}))
    await writer.drain()
    await reader.read(1)


async def endless(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    writer.write(head("200 OK", {"Content-Type": "text/plain", "Connection": "close"}))
    while True:  # stops when the client hangs up
        writer.write(b"x" * 4096)
        await writer.drain()


async def exactly_cap(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    writer.write(head("200 OK", {"Content-Type": "text/plain", "Connection": "close"}))
    writer.write(b"y" * CAP)
    await writer.drain()


async def gzip_bomb(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    body = gzip.compress(b"\0" * (CAP * 64))
    await answer(writer, "200 OK", body, Content_Type="text/plain", Content_Encoding="gzip")


async def trickle(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    writer.write(head("200 OK", {"Content-Type": "text/plain", "Connection": "close"}))
    while True:  # never idle long enough for a read timeout; only the total cap stops it
        writer.write(b".")
        await writer.drain()
        await asyncio.sleep(0.05)


async def etag(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    tag = '"v1"'
    if seen.headers.get("if-none-match") == tag:
        await answer(writer, "304 Not Modified", ETag=tag)
    else:
        await answer(
            writer,
            "200 OK",
            b"notes",
            Content_Type="text/markdown",
            ETag=tag,
            Last_Modified="Wed, 21 Oct 2015 07:28:00 GMT",
        )


async def set_cookie(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    await answer(writer, "200 OK", b"ok", Content_Type="text/plain", Set_Cookie="sid=abc; Path=/")


def status_page(status: str, content_type: str | None = "text/html") -> Route:
    async def route(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
        headers = {} if content_type is None else {"Content_Type": content_type}
        await answer(writer, status, b"body", **headers)

    return route


not_found = status_page("404 Not Found")

ROUTES: dict[str, Route] = {
    "/page": page,
    "/redirect/private": redirect_to("http://10.0.0.1/secret"),
    "/redirect/metadata": redirect_to("http://169.254.169.254/latest/meta-data/"),
    "/redirect/mapped-metadata": redirect_to("http://[::ffff:169.254.169.254]/"),
    "/redirect/internal-name": redirect_to("http://intranet.example.test/"),
    "/redirect/file": redirect_to("file:///etc/passwd"),
    "/redirect/backslash": backslash_redirect,
    "/slow-redirect": slow_redirect,
    "/big/declared": declared_too_big,
    "/big/endless": endless,
    "/big/exact": exactly_cap,
    "/big/gzip": gzip_bomb,
    "/slow": trickle,
    "/etag": etag,
    "/set-cookie": set_cookie,
    "/octet": status_page("200 OK", "application/octet-stream"),
    "/untyped": status_page("200 OK", None),
    "/error": status_page("500 Internal Server Error"),
}


@pytest.fixture
async def server() -> AsyncIterator[ScriptedServer]:
    async with ScriptedServer(
        routes=ROUTES, prefixes={"/chain/": chain}, fallback=not_found
    ) as running:
        yield running


def fetcher(
    *,
    resolver: FakeResolver | None = None,
    allowed: frozenset[Address] = frozenset({LOOPBACK}),
    timeout: float = 5.0,
    max_redirects: int = 5,
) -> SafeFetcher:
    limits = FetchLimits(max_bytes=CAP, max_redirects=max_redirects, timeout_seconds=timeout)
    return SafeFetcher(limits, resolver=resolver or FakeResolver({}), allowed_addresses=allowed)


DNS = {
    "private.example.test": ["10.0.0.7"],
    "rebind.example.test": ["93.184.215.14", "169.254.169.254"],
    "v6-private.example.test": ["fd12::1"],
    "mapped.example.test": ["::ffff:192.168.0.1"],
    "nat64.example.test": ["64:ff9b::a9fe:a9fe"],
    "cgnat.example.test": ["100.64.1.1"],
    "loopback.example.test": ["127.0.0.1"],
    "intranet.example.test": ["172.20.1.1"],
}

REFUSED_URLS: list[tuple[str, type[IngestError]]] = [
    # schemes
    ("file:///etc/passwd", UnsupportedSourceError),
    ("gopher://example.com:70/_GET%20/", UnsupportedSourceError),
    ("ftp://example.com/file.txt", UnsupportedSourceError),
    ("javascript:alert(1)", UnsupportedSourceError),
    ("dict://example.com:11211/stats", UnsupportedSourceError),
    ("jar:http://example.com!/", UnsupportedSourceError),
    ("data:text/html,hello", UnsupportedSourceError),
    # loopback, every spelling
    ("http://127.0.0.1/", UrlRefusedError),
    ("http://127.255.255.254:8080/", UrlRefusedError),
    ("http://2130706433/", UrlRefusedError),
    ("http://0x7f000001/", UrlRefusedError),
    ("http://0x7f.0.0.1/", UrlRefusedError),
    ("http://0177.0.0.1/", UrlRefusedError),
    ("http://017700000001/", UrlRefusedError),
    ("http://127.1/", UrlRefusedError),
    ("http://[::1]/", UrlRefusedError),
    ("http://[0:0:0:0:0:0:0:1]:80/", UrlRefusedError),
    ("http://[::ffff:127.0.0.1]/", UrlRefusedError),
    ("http://[::ffff:7f00:1]/", UrlRefusedError),
    ("http://localhost/", UrlRefusedError),
    ("http://LOCALHOST./admin", UrlRefusedError),
    ("http://app.localhost/", UrlRefusedError),
    ("http://ip6-localhost/", UrlRefusedError),
    # unspecified
    ("http://0.0.0.0:8000/", UrlRefusedError),
    ("http://0/", UrlRefusedError),
    ("http://[::]/", UrlRefusedError),
    # private, CGNAT, benchmark, documentation, multicast, reserved
    ("http://10.0.0.1/", UrlRefusedError),
    ("http://172.16.5.4/", UrlRefusedError),
    ("http://192.168.1.1/", UrlRefusedError),
    ("http://3232235777/", UrlRefusedError),
    ("http://100.64.0.1/", UrlRefusedError),
    ("http://198.18.0.1/", UrlRefusedError),
    ("http://192.0.2.10/", UrlRefusedError),
    ("http://224.0.0.1/", UrlRefusedError),
    ("http://240.0.0.1/", UrlRefusedError),
    ("http://255.255.255.255/", UrlRefusedError),
    # link-local and cloud metadata
    ("http://169.254.169.254/latest/meta-data/", UrlRefusedError),
    ("http://0xa9fea9fe/", UrlRefusedError),
    ("http://2852039166/", UrlRefusedError),
    ("http://[::ffff:169.254.169.254]/", UrlRefusedError),
    ("http://[::ffff:a9fe:a9fe]/", UrlRefusedError),
    ("http://[fd00:ec2::254]/latest/meta-data/", UrlRefusedError),
    ("http://100.100.100.200/latest/meta-data/", UrlRefusedError),
    ("http://192.0.0.192/latest/", UrlRefusedError),
    ("http://metadata.google.internal/computeMetadata/v1/", UrlRefusedError),
    ("http://metadata/computeMetadata/v1/", UrlRefusedError),
    ("http://instance-data/latest/", UrlRefusedError),
    ("http://[fe80::1]/", UrlRefusedError),
    ("http://[fe80::1%25eth0]/", UrlRefusedError),
    # IPv6 special ranges and IPv4 carried inside IPv6
    ("http://[fc00::1]/", UrlRefusedError),
    ("http://[fec0::1]/", UrlRefusedError),
    ("http://[ff02::1]/", UrlRefusedError),
    ("http://[2001:db8::1]/", UrlRefusedError),
    ("http://[2002:a00:1::1]/", UrlRefusedError),
    ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", UrlRefusedError),
    ("http://[64:ff9b::a9fe:a9fe]/", UrlRefusedError),
    ("http://[64:ff9b::7f00:1]/", UrlRefusedError),
    # names that resolve somewhere private
    ("http://private.example.test/", UrlRefusedError),
    ("https://private.example.test/", UrlRefusedError),
    ("http://rebind.example.test/", UrlRefusedError),
    ("http://v6-private.example.test/", UrlRefusedError),
    ("http://mapped.example.test/", UrlRefusedError),
    ("http://nat64.example.test/", UrlRefusedError),
    ("http://cgnat.example.test/", UrlRefusedError),
    ("http://loopback.example.test/", UrlRefusedError),
    ("http://db.internal/", UrlRefusedError),
    ("http://printer.local/", UrlRefusedError),
    ("http://intranet/", UrlRefusedError),
    # userinfo and parser confusion
    ("http://alice:hunter2@private.example.test/", UrlRefusedError),
    ("http://example.com@127.0.0.1/", UrlRefusedError),
    ("http://public.example.test:80@10.0.0.1/", UrlRefusedError),
    ("http://127.1.1.1:80\\@127.2.2.2:80/", UrlRefusedError),
    ("http://1.1.1.1 &@2.2.2.2# @3.3.3.3/", UrlRefusedError),
    ("http:127.0.0.1/", UrlRefusedError),
    ("http:///etc/passwd", UrlRefusedError),
    # malformed addresses fail closed
    ("http://256.256.256.256/", UrlRefusedError),
    ("http://7147006462/", UrlRefusedError),
    ("http://0x41414141A9FEA9FE/", UrlRefusedError),
    ("http://o177.0.0.1/", UrlRefusedError),
    ("http://exa%6dple.com/", UrlRefusedError),
]


@pytest.mark.parametrize(("url", "error"), REFUSED_URLS)
async def test_invariant_8_untrusted_input_stays_bounded_refuses_unsafe_urls(
    url: str, error: type[IngestError]
) -> None:
    # No allowance here: even loopback is refused. Nothing is connected to, so a URL that
    # slipped through would fail with a socket error from pytest-socket, not an IngestError.
    resolver = FakeResolver(DNS)
    async with fetcher(resolver=resolver, allowed=frozenset()) as safe:
        with pytest.raises(error) as caught:
            await safe.fetch(url)
    assert type(caught.value) is error
    assert "hunter2" not in str(caught.value)
    assert len(REFUSED_URLS) >= 40


async def test_invariant_8_untrusted_input_stays_bounded_redirects_are_rechecked(
    server: ScriptedServer,
) -> None:
    resolver = FakeResolver(DNS)
    async with fetcher(resolver=resolver) as safe:
        for path in (
            "/redirect/private",
            "/redirect/metadata",
            "/redirect/mapped-metadata",
            "/redirect/internal-name",
            "/redirect/backslash",
        ):
            with pytest.raises(UrlRefusedError):
                await safe.fetch(server.url(path))
        with pytest.raises(UnsupportedSourceError):
            await safe.fetch(server.url("/redirect/file"))
    # 127.0.0.1 was allowed, yet each redirect stopped at the first hop.
    assert [r.path for r in server.requests] == [
        "/redirect/private",
        "/redirect/metadata",
        "/redirect/mapped-metadata",
        "/redirect/internal-name",
        "/redirect/backslash",
        "/redirect/file",
    ]
    assert resolver.calls == [("intranet.example.test", 80)]


async def test_loopback_server_is_refused_without_the_test_allowance(
    server: ScriptedServer,
) -> None:
    async with fetcher(allowed=frozenset()) as safe:
        with pytest.raises(UrlRefusedError, match="loopback"):
            await safe.fetch(server.url("/page"))
    assert server.requests == []


async def test_page_is_fetched_with_type_and_charset(server: ScriptedServer) -> None:
    async with fetcher() as safe:
        got = await safe.fetch(server.url("/page") + "#section")
    assert got.status == 200
    assert got.body == PAGE
    assert (got.content_type, got.charset) == ("text/html", "UTF-8")
    assert got.url == server.url("/page") + "#section"
    assert got.final_url == server.url("/page")
    assert server.requests[0].headers["user-agent"].startswith("LoreBot/")


async def test_connection_is_pinned_to_the_checked_ip_with_the_original_host(
    server: ScriptedServer,
) -> None:
    resolver = FakeResolver({"example.test": ["127.0.0.1"]})
    async with fetcher(resolver=resolver) as safe:
        got = await safe.fetch(server.url("/page", host="alice:hunter2@example.test"))
    assert got.body == PAGE
    assert got.final_url == server.url("/page", host="example.test")
    assert resolver.calls == [("example.test", server.port)]  # one lookup, then the IP
    seen = server.requests[0].headers
    assert seen["host"] == f"example.test:{server.port}"
    assert "authorization" not in seen  # userinfo is never sent


async def test_redirect_chain_within_the_cap_is_followed_relative_locations_too(
    server: ScriptedServer,
) -> None:
    async with fetcher(max_redirects=5) as safe:
        got = await safe.fetch(server.url("/chain/5"))
    assert got.body == PAGE
    assert got.final_url == server.url("/chain/0")
    assert len(server.requests) == 6


async def test_redirect_chain_longer_than_the_cap_fails(server: ScriptedServer) -> None:
    async with fetcher(max_redirects=5) as safe:
        with pytest.raises(FetchFailedError, match="more than 5 times"):
            await safe.fetch(server.url("/chain/6"))
    assert len(server.requests) == 6  # the sixth Location was never requested


async def test_declared_length_over_the_cap_is_refused_before_reading(
    server: ScriptedServer,
) -> None:
    async with fetcher(timeout=5.0) as safe:
        with pytest.raises(FileTooLargeError, match="64 KB"):
            await safe.fetch(server.url("/big/declared"))


async def test_undeclared_endless_body_is_cut_at_the_cap(server: ScriptedServer) -> None:
    async with fetcher(timeout=5.0) as safe:
        with pytest.raises(FileTooLargeError):
            await safe.fetch(server.url("/big/endless"))
        exact = await safe.fetch(server.url("/big/exact"))
    assert len(exact.body) == CAP


async def test_decompressed_size_counts_against_the_cap(server: ScriptedServer) -> None:
    async with fetcher() as safe:
        with pytest.raises(FileTooLargeError):
            await safe.fetch(server.url("/big/gzip"))


async def test_total_time_cap_stops_a_trickling_response(server: ScriptedServer) -> None:
    async with fetcher(timeout=0.5) as safe:
        with pytest.raises(FetchFailedError, match=r"longer than 0\.5 seconds"):
            await safe.fetch(server.url("/slow"))


async def test_total_time_cap_spans_redirects(server: ScriptedServer) -> None:
    async with fetcher(timeout=0.5, max_redirects=50) as safe:
        with pytest.raises(FetchFailedError, match=r"longer than 0\.5 seconds"):
            await safe.fetch(server.url("/slow-redirect"))
    assert 2 <= len(server.requests) <= 6  # each hop was fast enough on its own


@pytest.mark.parametrize(
    ("path", "error", "words"),
    [
        ("/octet", UnsupportedContentTypeError, "application/octet-stream"),
        ("/untyped", UnsupportedContentTypeError, "no content type"),
        ("/missing", FetchFailedError, "HTTP 404"),
        ("/error", FetchFailedError, "HTTP 500"),
    ],
)
async def test_bad_types_and_error_statuses_are_refused_politely(
    server: ScriptedServer, path: str, error: type[IngestError], words: str
) -> None:
    async with fetcher() as safe:
        with pytest.raises(error, match=words):
            await safe.fetch(server.url(path))


async def test_conditional_fetch_returns_304_with_empty_body(server: ScriptedServer) -> None:
    async with fetcher() as safe:
        first = await safe.fetch(server.url("/etag"))
        assert first.etag is not None
        second = await safe.fetch(server.url("/etag"), extra_headers={"If-None-Match": first.etag})
    assert (first.status, first.body, first.content_type) == (200, b"notes", "text/markdown")
    assert first.last_modified == "Wed, 21 Oct 2015 07:28:00 GMT"
    assert (second.status, second.body, second.etag) == (304, b"", '"v1"')
    assert server.requests[1].headers["if-none-match"] == '"v1"'


async def test_no_cookies_carry_over_between_fetches(server: ScriptedServer) -> None:
    async with fetcher() as safe:
        await safe.fetch(server.url("/set-cookie"))
        await safe.fetch(server.url("/page"))
    assert "cookie" not in server.requests[1].headers


async def test_extra_headers_cannot_override_host(server: ScriptedServer) -> None:
    async with fetcher() as safe:
        with pytest.raises(ValueError, match="Host"):
            await safe.fetch(server.url("/page"), extra_headers={"host": "evil.test"})
    assert server.requests == []


class ClientHelloRecorder:
    """A TCP server on 127.0.0.1:0 that reads a TLS ClientHello, records its SNI, hangs up."""

    def __init__(self) -> None:
        self.server_names: list[str | None] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ClientHelloRecorder:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        try:
            record = await reader.readexactly(5)
            hello = await reader.readexactly(int.from_bytes(record[3:5], "big"))
            self.server_names.append(sni_of(hello))
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


def sni_of(hello: bytes) -> str | None:
    """The server_name extension of a ClientHello handshake message (RFC 8446 4.1.2)."""
    at = 4 + 2 + 32  # handshake header, legacy_version, random
    at += 1 + hello[at]  # session id
    at += 2 + int.from_bytes(hello[at : at + 2], "big")  # cipher suites
    at += 1 + hello[at]  # compression methods
    end = at + 2 + int.from_bytes(hello[at : at + 2], "big")
    at += 2
    while at < end:
        kind, size = (
            int.from_bytes(hello[at : at + 2], "big"),
            int.from_bytes(hello[at + 2 : at + 4], "big"),
        )
        if kind == 0:  # server_name: list length(2), name type(1), name length(2), name
            length = int.from_bytes(hello[at + 7 : at + 9], "big")
            return hello[at + 9 : at + 9 + length].decode("ascii")
        at += 4 + size
    return None


async def test_https_presents_the_original_host_as_sni_while_connecting_to_the_pinned_ip() -> None:
    resolver = FakeResolver({"secure.example.test": ["127.0.0.1"]})
    async with ClientHelloRecorder() as tls, fetcher(resolver=resolver) as safe:
        with pytest.raises(FetchFailedError, match=r"could not reach secure\.example\.test"):
            await safe.fetch(f"https://secure.example.test:{tls.port}/doc")
    assert tls.server_names == ["secure.example.test"]
    assert resolver.calls == [("secure.example.test", tls.port)]
