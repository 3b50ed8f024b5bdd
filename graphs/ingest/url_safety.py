"""Decide whether a URL may be fetched: normalise it, resolve its host, refuse unsafe addresses.

This is the address policy behind DESIGN.md invariant 8 ("untrusted input stays bounded").
It never opens a connection; `url_fetch.SafeFetcher` uses it before every hop.

Policy, in order:

1. Only `http` and `https` (anything else raises `UnsupportedSourceError`).
2. The URL is parsed once with httpx's parser (the one the client uses); a URL with
   whitespace, control characters or backslashes is refused rather than guessed at.
3. Numeric hosts are read as IPv4 the way browsers and `inet_aton` do (`2130706433`,
   `0x7f000001`, `0177.0.0.1`, `127.1`); a host that ends in a number but is not a
   valid address is refused.
4. Names such as `localhost`, `*.localhost`, `*.internal`, `*.local`, single-label names
   and known metadata names are refused without asking DNS.
5. Every address the resolver returns must pass `refusal_reason`; one bad address
   refuses the whole URL. The caller then connects to the checked address only.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network
from typing import TypeAlias

import httpx

from graphs.ingest.errors import FetchFailedError, UnsupportedSourceError, UrlRefusedError

__all__ = [
    "Address",
    "ParsedUrl",
    "Resolver",
    "check_address",
    "is_refused_address",
    "parse_url",
    "redact_url",
    "refusal_reason",
    "resolve_checked",
    "system_resolver",
]

Address: TypeAlias = IPv4Address | IPv6Address
Resolver: TypeAlias = Callable[[str, int], Awaitable[Sequence[IPv4Address | IPv6Address]]]

_SCHEMES = {"http": 80, "https": 443}
_MAX_URL_CHARS = 8192
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")

_BLOCKED_NAMES = frozenset(
    {
        "localhost",
        "ip6-localhost",
        "ip6-loopback",
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
        "kubernetes.default",
        "kubernetes.default.svc",
    }
)
_BLOCKED_SUFFIXES = (
    ".localhost",
    ".internal",
    ".local",
    ".localdomain",
    ".home.arpa",
    ".intranet",
    ".corp",
    ".lan",
)

_METADATA_ADDRESSES: frozenset[Address] = frozenset(
    {
        IPv4Address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack, Hetzner, DigitalOcean
        IPv4Address("169.254.170.2"),  # AWS ECS task metadata
        IPv4Address("100.100.100.200"),  # Alibaba Cloud (is_private is False!)
        IPv4Address("192.0.0.192"),  # Oracle Cloud (is_global is True!)
        IPv6Address("fd00:ec2::254"),  # AWS IMDS over IPv6
        IPv6Address("fd00:ec2::23"),  # AWS DNS over IPv6
    }
)

# Explicit deny list, kept in addition to the `ipaddress` flags so that a change in a
# Python version's idea of "global" cannot open a hole.
_DENIED_V4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), why)
    for net, why in (
        ("0.0.0.0/8", "unspecified / this network"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
    )
)
_DENIED_V6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), why)
    for net, why in (
        ("::/96", "IPv4-compatible / unspecified / loopback"),
        ("::ffff:0:0/96", "IPv4-mapped"),
        ("::ffff:0:0:0/96", "IPv4-translated"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/23", "IETF protocol assignments (Teredo, ORCHID...)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "unique-local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = IPv6Network("64:ff9b::/96")


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """A syntactically acceptable http(s) URL, normalised; not yet resolved or checked.

    `url` has no userinfo and no fragment, and a numeric host written in a legacy form
    is rewritten to its dotted address. `host` is ASCII (IDNA), lower case, without a
    trailing dot or IPv6 brackets. `literal` is set when the host is an IP address.
    """

    url: httpx.URL
    scheme: str
    host: str
    port: int
    literal: Address | None


def redact_url(url: str | httpx.URL) -> str:
    """Return `scheme://host[:port]/path` without userinfo, query or fragment, safe for messages."""
    try:
        parsed = httpx.URL(url) if isinstance(url, str) else url
        clean = parsed.copy_with(username=None, password=None, query=None, fragment=None)
    except (httpx.InvalidURL, TypeError, ValueError):
        return "(unreadable link)"
    return str(clean)


def parse_url(url: str) -> ParsedUrl:
    """Parse and normalise `url`; raise `UnsupportedSourceError` or `UrlRefusedError` if unfit."""
    text = url.strip()
    if len(text) > _MAX_URL_CHARS:
        raise UrlRefusedError("That link is too long for me to fetch.")
    if any(ch <= " " or ch in "\x7f\\" for ch in text):
        raise UrlRefusedError("That link is malformed (it contains spaces or odd characters).")
    try:
        parsed = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise UrlRefusedError("That link is malformed, so I did not fetch it.") from exc
    scheme = parsed.scheme.lower()
    if scheme not in _SCHEMES:
        raise UnsupportedSourceError("I can only fetch http:// and https:// links.")
    host = parsed.raw_host.decode("ascii").lower()
    if not host:
        raise UrlRefusedError("That link has no host name, so I did not fetch it.")
    port = parsed.port if parsed.port is not None else _SCHEMES[scheme]
    if not 0 < port < 65536:
        raise UrlRefusedError("That link has an impossible port number.")
    literal = _parse_host(host)
    if literal is not None:
        host = str(literal)
    else:
        host = host.removesuffix(".")
        _check_host_name(host)
    clean = parsed.copy_with(username=None, password=None, fragment=None, host=host)
    return ParsedUrl(url=clean, scheme=scheme, host=host, port=port, literal=literal)


def _parse_host(host: str) -> Address | None:
    """Return the address a host denotes, None for a name; refuse malformed numeric hosts."""
    if ":" in host:
        if "%" in host:
            raise UrlRefusedError("That link names a local network interface; I do not fetch it.")
        try:
            return IPv6Address(host)
        except ValueError as exc:
            raise UrlRefusedError("That link has a malformed IPv6 address.") from exc
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()
    if not _ends_in_number(labels[-1]):
        return None
    numbers = [_ipv4_number(label) for label in labels]
    if len(labels) > 4 or None in numbers:
        raise UrlRefusedError("That link has a malformed IP address.")
    values = [n for n in numbers if n is not None]
    if any(n > 255 for n in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise UrlRefusedError("That link has a malformed IP address.")
    value = values[-1]
    for index, number in enumerate(values[:-1]):
        value += number * 256 ** (3 - index)
    return IPv4Address(value)


def _ends_in_number(label: str) -> bool:
    """WHATWG "ends in a number": the last label is all digits or a valid IPv4 number."""
    if label.isascii() and label.isdigit():
        return True
    return bool(label) and _ipv4_number(label) is not None


def _ipv4_number(part: str) -> int | None:
    """Parse one dotted part as `inet_aton` does: 0x-hex, 0-octal or decimal; None if invalid."""
    if not part or not part.isascii():
        return None
    digits, base = part, 10
    if part[:2] in ("0x", "0X"):
        digits, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        digits, base = part[1:], 8
    if digits == "":
        return 0
    try:
        return int(digits, base) if digits.isalnum() else None
    except ValueError:
        return None


def _check_host_name(host: str) -> None:
    """Refuse names that only ever point inside the machine or its network."""
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise UrlRefusedError("That link has a malformed host name.")
    if host in _BLOCKED_NAMES or host.endswith(_BLOCKED_SUFFIXES):
        raise UrlRefusedError(f"I do not fetch links to local or internal hosts ({host}).")
    if len(labels) == 1:
        raise UrlRefusedError(f"I do not fetch links to single-label host names ({host}).")


def _embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address carried inside an IPv4-mapped, NAT64 or 6to4 IPv6 address."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def refusal_reason(address: Address) -> str | None:
    """Why `address` must not be fetched from, or None when it is a public unicast address."""
    if isinstance(address, IPv6Address):
        if address.scope_id:
            return "scoped IPv6 address"
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            inner = refusal_reason(embedded)
            if inner is not None or address in _NAT64:
                # NAT64 is public exactly when the IPv4 address it carries is.
                return None if inner is None else f"{inner} (inside an IPv6 address)"
    return _plain_reason(address)


def _plain_reason(address: Address) -> str | None:
    if address in _METADATA_ADDRESSES:
        return "cloud metadata service"
    denied = _DENIED_V4 if isinstance(address, IPv4Address) else _DENIED_V6
    for network, why in denied:
        if address in network:
            return why
    flags = (
        ("loopback", address.is_loopback),
        ("private", address.is_private),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("unspecified", address.is_unspecified),
        ("site-local", isinstance(address, IPv6Address) and address.is_site_local),
        ("not globally routable", not address.is_global),
    )
    return next((why for why, flagged in flags if flagged), None)


def is_refused_address(address: Address) -> bool:
    """True when `address` is loopback, private, link-local, metadata or otherwise not public."""
    return refusal_reason(address) is not None


def check_address(address: Address, allowed: frozenset[Address] = frozenset()) -> Address:
    """Return the address to connect to (IPv4-mapped unwrapped), or raise `UrlRefusedError`.

    `allowed` is a test-only allowance: an address in it passes even if it is loopback.
    Production code never sets it.
    """
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in allowed:
        return address
    reason = refusal_reason(address)
    if reason is not None:
        raise UrlRefusedError(
            f"I do not fetch links to private, local or metadata addresses ({reason})."
        )
    return address


async def system_resolver(host: str, port: int) -> list[Address]:
    """Resolve `host` with the operating system (`getaddrinfo`), as the default resolver."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[Address] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0])
        if address not in found:
            found.append(address)
    return found


async def resolve_checked(
    parsed: ParsedUrl, resolver: Resolver, allowed: frozenset[Address] = frozenset()
) -> Address:
    """Resolve the URL's host and check every address; return the one to connect to."""
    if parsed.literal is not None:
        return check_address(parsed.literal, allowed)
    try:
        addresses = list(await resolver(parsed.host, parsed.port))
    except (OSError, UnicodeError) as exc:
        raise FetchFailedError(f"I could not find the host {parsed.host}.") from exc
    if not addresses:
        raise FetchFailedError(f"I could not find the host {parsed.host}.")
    checked = [check_address(address, allowed) for address in addresses]
    return checked[0]
