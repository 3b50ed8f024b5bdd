"""Fetch one untrusted http(s) URL: pinned to a checked address, every redirect re-checked, capped.

How a fetch stays bounded (DESIGN.md invariant 8):

- every hop is parsed, resolved and checked by `url_safety` before a byte is sent;
- the connection goes to the checked IP itself (no second DNS lookup that a rebinding
  server could answer differently); the original host travels in the `Host` header
  and, for https, as TLS SNI and certificate host name (httpx `sni_hostname`);
- connections are never reused (a pinned TLS connection must not serve another host)
  and no cookies are kept between requests;
- redirects are followed by hand, at most `FetchLimits.max_redirects`;
- the body is streamed and abandoned past `max_bytes`; a larger `Content-Length` is
  refused before reading; the whole fetch, redirects included, is under one deadline;
- compression (gzip, deflate, nested) is undone by `content_decoding.BoundedDecoder`,
  never by httpx: the decoded size is capped at `max_bytes` too, checked as it grows,
  so peak memory stays near the cap whatever the body (other encodings are refused);
- userinfo in a URL is never sent, and never appears in a message.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import httpx

from graphs.ingest.content_decoding import (
    BoundedDecoder,
    ContentDecodingError,
    DecodedTooLargeError,
    UnsupportedEncodingError,
)
from graphs.ingest.errors import (
    FetchFailedError,
    FileTooLargeError,
    UnsupportedContentTypeError,
    UrlRefusedError,
)
from graphs.ingest.url_safety import (
    Address,
    ParsedUrl,
    Resolver,
    parse_url,
    redact_url,
    resolve_checked,
    system_resolver,
)

__all__ = [
    "DEFAULT_CONTENT_TYPES",
    "FetchLimits",
    "FetchStatusError",
    "FetchedResource",
    "SafeFetcher",
]

logger = logging.getLogger(__name__)

DEFAULT_CONTENT_TYPES: frozenset[str] = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "text/plain",
        "text/markdown",
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/rss+xml",
        "application/atom+xml",
        "application/xml",
        "text/xml",
    }
)
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class FetchStatusError(FetchFailedError):
    """The server answered an HTTP error status; `retry_after` is its Retry-After header, if any.

    A `FetchFailedError` like any other (same polite message); watchers read `status`
    and `retry_after` to back off as the server asked (429, 503).
    """

    def __init__(self, message: str, *, status: int, retry_after: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Caps on one fetch: body bytes, redirect hops, and seconds (whole fetch, connect, read)."""

    max_bytes: int
    max_redirects: int = 5
    timeout_seconds: float = 20.0
    connect_timeout_seconds: float = 5.0
    read_timeout_seconds: float = 10.0


@dataclass(frozen=True, slots=True)
class FetchedResource:
    """What a URL answered. `status` 304 means "not modified": `body` is then empty."""

    url: str
    final_url: str
    content_type: str
    charset: str | None
    body: bytes
    etag: str | None
    last_modified: str | None
    status: int


class SafeFetcher:
    """Fetches untrusted URLs without reaching private, local or metadata addresses.

    Use as an async context manager; it owns one `httpx.AsyncClient`.

    `allowed_addresses` is a TEST-ONLY allowance: an address in it is fetched even if
    it is loopback or private, so that tests can reach a server on 127.0.0.1.
    Production code never sets it. Redirects to any other refused address are still
    refused.
    """

    def __init__(
        self,
        limits: FetchLimits,
        *,
        resolver: Resolver | None = None,
        allowed_addresses: frozenset[Address] = frozenset(),
        user_agent: str = "LoreBot/0.1 (+self-hosted knowledge bot)",
        content_types: frozenset[str] = DEFAULT_CONTENT_TYPES,
    ) -> None:
        self._limits = limits
        self._resolver: Resolver = resolver if resolver is not None else system_resolver
        self._allowed = allowed_addresses
        self._user_agent = user_agent
        self._content_types = content_types
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Self:
        no_cookies = http.cookiejar.CookieJar(
            policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[])
        )
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            cookies=no_cookies,
            limits=httpx.Limits(max_keepalive_connections=0),
            timeout=httpx.Timeout(
                self._limits.read_timeout_seconds,
                connect=self._limits.connect_timeout_seconds,
            ),
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def fetch(
        self, url: str, *, extra_headers: Mapping[str, str] | None = None
    ) -> FetchedResource:
        """Fetch `url`; raise an `IngestError` subclass with a polite message if that is unsafe.

        `extra_headers` (e.g. If-None-Match, If-Modified-Since) are sent on every hop, so
        they must not carry credentials; `Host` cannot be overridden.
        """
        headers = dict(extra_headers or {})
        if any(name.lower() == "host" for name in headers):
            raise ValueError("extra_headers must not set Host")
        try:
            async with asyncio.timeout(self._limits.timeout_seconds):
                return await self._follow(url, headers)
        except TimeoutError as exc:
            raise FetchFailedError(
                f"Fetching {redact_url(url)} took longer than "
                f"{self._limits.timeout_seconds:g} seconds, so I gave up."
            ) from exc

    async def _follow(self, url: str, headers: dict[str, str]) -> FetchedResource:
        parsed = parse_url(url)
        for hop in range(self._limits.max_redirects + 1):
            response = await self._send(parsed, headers)
            try:
                location = response.headers.get("location")
                if response.status_code not in _REDIRECT_STATUSES or location is None:
                    return await self._read(url, parsed, response)
            finally:
                await response.aclose()
            logger.debug("fetch hop %d: %s redirects", hop, redact_url(parsed.url))
            parsed = _redirect_target(parsed, location)
        raise FetchFailedError(
            f"{redact_url(url)} redirected more than {self._limits.max_redirects} times, "
            "so I stopped following it."
        )

    async def _send(self, parsed: ParsedUrl, headers: dict[str, str]) -> httpx.Response:
        if self._client is None:
            raise RuntimeError("use SafeFetcher as an async context manager")
        address = await resolve_checked(parsed, self._resolver, self._allowed)
        request = self._client.build_request(
            "GET",
            parsed.url.copy_with(host=str(address)),
            headers={
                **headers,
                "Host": _host_header(parsed),
                "User-Agent": self._user_agent,
                "Accept-Encoding": "gzip, deflate",
            },
            extensions=_tls_extensions(parsed),
        )
        try:
            return await self._client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise FetchFailedError(f"{parsed.host} did not answer in time.") from exc
        except httpx.HTTPError as exc:
            raise FetchFailedError(f"I could not reach {parsed.host}.") from exc

    async def _read(self, url: str, parsed: ParsedUrl, response: httpx.Response) -> FetchedResource:
        status = response.status_code
        media_type, charset = _content_type(response.headers.get("content-type"))
        if status != 304:
            _check_status(status, parsed, response.headers.get("retry-after"))
            if media_type not in self._content_types:
                shown = media_type or "no content type"
                raise UnsupportedContentTypeError(
                    f"{redact_url(parsed.url)} is {shown}, which I cannot read."
                )
        body = b"" if status == 304 else await self._read_body(response, parsed)
        return FetchedResource(
            url=url,
            final_url=str(parsed.url),
            content_type=media_type,
            charset=charset,
            body=body,
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
            status=status,
        )

    async def _read_body(self, response: httpx.Response, parsed: ParsedUrl) -> bytes:
        """The body, decoded by hand: raw bytes and decoded bytes each stay under the cap."""
        cap = self._limits.max_bytes
        too_large = FileTooLargeError(
            f"{redact_url(parsed.url)} is larger than the {_size(cap)} limit, so I did not save it."
        )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise too_large
        encoding = response.headers.get("content-encoding")
        body = bytearray()
        received = 0
        try:
            decoder = BoundedDecoder(encoding, cap)
            async for chunk in response.aiter_raw():
                received += len(chunk)
                if received > cap:
                    raise too_large
                body += decoder.feed(chunk)
            body += decoder.close()
        except DecodedTooLargeError as exc:
            raise too_large from exc
        except UnsupportedEncodingError as exc:
            raise UnsupportedContentTypeError(
                f"{redact_url(parsed.url)} is compressed in a way I cannot read "
                f"({_shown(encoding)}), so I did not save it."
            ) from exc
        except ContentDecodingError as exc:
            raise FetchFailedError(
                f"The download from {parsed.host} arrived damaged, so I did not save it."
            ) from exc
        except httpx.TimeoutException as exc:
            raise FetchFailedError(f"{parsed.host} stopped sending in the middle.") from exc
        except httpx.HTTPError as exc:
            raise FetchFailedError(f"The download from {parsed.host} broke off.") from exc
        return bytes(body)


def _redirect_target(current: ParsedUrl, location: str) -> ParsedUrl:
    """Resolve a (possibly relative) Location against the current URL and re-parse it."""
    if any(ch <= " " or ch in "\x7f\\" for ch in location.strip()):
        raise UrlRefusedError("The site redirected to a malformed link, so I stopped.")
    try:
        joined = current.url.join(location.strip())
    except httpx.InvalidURL as exc:
        raise UrlRefusedError("The site redirected to a malformed link, so I stopped.") from exc
    return parse_url(str(joined))


def _host_header(parsed: ParsedUrl) -> str:
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    if parsed.port == _DEFAULT_PORTS[parsed.scheme]:
        return host
    return f"{host}:{parsed.port}"


def _tls_extensions(parsed: ParsedUrl) -> dict[str, str]:
    """For https to a name, present and verify that name although we connect to an IP."""
    if parsed.scheme == "https" and parsed.literal is None:
        return {"sni_hostname": parsed.host}
    return {}


def _check_status(status: int, parsed: ParsedUrl, retry_after: str | None) -> None:
    if 200 <= status < 300:
        return
    raise FetchStatusError(
        f"{redact_url(parsed.url)} answered HTTP {status}, so I saved nothing.",
        status=status,
        retry_after=retry_after,
    )


def _content_type(header: str | None) -> tuple[str, str | None]:
    """Split a Content-Type header into a lower-case media type and its charset, if any."""
    if not header:
        return "", None
    media_type, *params = header.split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip('"').strip() or None
    return media_type.strip().lower(), charset


def _shown(header: str | None) -> str:
    """A Content-Encoding header as it may appear in a message: short and printable."""
    text = "".join(c for c in (header or "") if c.isprintable())
    return text[:40] or "unknown"


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):g} MB"
    if count >= 1024:
        return f"{count / 1024:g} KB"
    return f"{count} bytes"
