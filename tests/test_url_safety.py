"""Unit tests of the URL address policy: address classifier, URL normaliser, checked resolution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from ipaddress import IPv4Address, IPv6Address, ip_address

import pytest

from graphs.ingest.errors import FetchFailedError, UnsupportedSourceError, UrlRefusedError
from graphs.ingest.url_safety import (
    Address,
    check_address,
    is_refused_address,
    parse_url,
    redact_url,
    refusal_reason,
    resolve_checked,
    system_resolver,
)


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


REFUSED_ADDRESSES = [
    ("0.0.0.0", "unspecified"),  # noqa: S104
    ("0.1.2.3", "this network"),
    ("10.0.0.1", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("100.100.100.200", "metadata"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.0.1", "link-local"),
    ("169.254.169.254", "metadata"),
    ("169.254.170.2", "metadata"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.0.0.1", "IETF"),
    ("192.0.0.192", "metadata"),
    ("192.0.2.33", "documentation"),
    ("192.88.99.1", "6to4 relay"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("224.0.0.251", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:169.254.169.254", "metadata"),
    ("::ffff:10.1.1.1", "private"),
    ("::127.0.0.1", "IPv4-compatible"),
    ("64:ff9b::a9fe:a9fe", "metadata"),
    ("64:ff9b::7f00:1", "loopback"),
    ("64:ff9b:1::1", "NAT64"),
    ("2002:a00:1::1", "private"),
    ("2002:7f00:1::1", "loopback"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("2001:db8::1", "documentation"),
    ("100::1", "discard"),
    ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"),
    ("fd00:ec2::254", "metadata"),
    ("fe80::1", "link-local"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("fe80::1%eth0", "scoped"),
]

PUBLIC_ADDRESSES = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "172.32.0.1",
    "100.128.0.1",
    "198.20.0.1",
    "192.0.1.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
    "64:ff9b::808:808",  # NAT64 of a public address is public
    "2002:808:808::1",  # 6to4 of a public address is public
]


@pytest.mark.parametrize(("address", "why"), REFUSED_ADDRESSES)
def test_classifier_refuses_non_public_addresses(address: str, why: str) -> None:
    reason = refusal_reason(ip_address(address))
    assert reason is not None
    assert why.lower() in reason.lower()
    assert is_refused_address(ip_address(address))


@pytest.mark.parametrize("address", PUBLIC_ADDRESSES)
def test_classifier_allows_public_unicast_addresses(address: str) -> None:
    assert refusal_reason(ip_address(address)) is None
    assert not is_refused_address(ip_address(address))


def test_metadata_addresses_that_python_calls_public_are_still_refused() -> None:
    assert IPv4Address("192.0.0.192").is_global  # the reason for the explicit deny list
    assert not IPv4Address("100.100.100.200").is_private
    assert refusal_reason(IPv4Address("192.0.0.192")) == "cloud metadata service"
    assert refusal_reason(IPv4Address("100.100.100.200")) == "cloud metadata service"


def test_check_address_unwraps_ipv4_mapped_and_honours_the_test_allowance() -> None:
    assert check_address(IPv6Address("::ffff:8.8.8.8")) == IPv4Address("8.8.8.8")
    loopback = IPv4Address("127.0.0.1")
    assert check_address(loopback, frozenset({loopback})) == loopback
    assert check_address(IPv6Address("::ffff:127.0.0.1"), frozenset({loopback})) == loopback
    with pytest.raises(UrlRefusedError, match="loopback"):
        check_address(loopback)
    with pytest.raises(UrlRefusedError, match="private"):
        check_address(IPv4Address("10.0.0.1"), frozenset({loopback}))


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0X7F.0.0.1/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.1/", "127.0.0.1"),
        ("http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254"),
        ("http://3232235777/", "192.168.1.1"),
        ("http://0/", "0.0.0.0"),  # noqa: S104
        ("http://0177.1/", "127.0.0.1"),
        ("http://8.8.8.8./", "8.8.8.8"),
    ],
)
def test_legacy_numeric_hosts_are_read_as_ipv4(url: str, host: str) -> None:
    parsed = parse_url(url)
    assert parsed.literal == IPv4Address(host)
    assert parsed.host == host
    assert parsed.url.host == host


@pytest.mark.parametrize(
    "host", ["2130706433", "0x7f000001", "0177.1", "127.1", "0x7f.1", "3232235777"]
)
async def test_numeric_host_parsing_agrees_with_the_operating_system(host: str) -> None:
    from_os = await system_resolver(host, 80)
    assert from_os == [parse_url(f"http://{host}/").literal]


@pytest.mark.parametrize(
    "url",
    [
        "http://256.0.0.1/",
        "http://0177.0.0.1/",  # httpx rejects a zero-padded dotted quad: refused, not guessed
        "http://0251.00376.000251.0000376/",
        "http://1.2.3.4.5/",
        "http://7147006462/",
        "http://0x41414141A9FEA9FE/",
        "http://08.0.0.1/",
        "http://o177.0.0.1/",
        "http://0o177.0.0.1/",
        "http://0x1g.0.0.1/",
        "http://example.123/",
        "http://[::1/",
        "http://[fe80::1%25eth0]/",
    ],
)
def test_malformed_or_ambiguous_numeric_hosts_fail_closed(url: str) -> None:
    with pytest.raises(UrlRefusedError):
        parse_url(url)


def test_parse_url_normalises_names_and_drops_userinfo_and_fragment() -> None:
    parsed = parse_url("  HTTP://alice:s3cret@Example.COM./a/b?q=1#frag\n")
    assert parsed.scheme == "http"
    assert parsed.host == "example.com"
    assert parsed.port == 80
    assert parsed.literal is None
    assert str(parsed.url) == "http://example.com/a/b?q=1"
    idn = parse_url("https://münchen.de:8443/")
    assert (idn.host, idn.port) == ("xn--mnchen-3ya.de", 8443)


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/", "javascript:alert(1)", "gopher://a.b/"]
)
def test_non_http_schemes_are_unsupported(url: str) -> None:
    with pytest.raises(UnsupportedSourceError, match="http"):
        parse_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost/",
        "http://LocalHost./",
        "http://api.localhost/",
        "http://metadata.google.internal/",
        "http://db.internal/",
        "http://printer.local/",
        "http://metadata/",
        "http://intranet/",
        "http://exa%6dple.com/",
        "http://example.com:0/",
        "http://example.com:70000/",
    ],
)
def test_local_names_and_bad_authorities_are_refused_without_dns(url: str) -> None:
    with pytest.raises(UrlRefusedError):
        parse_url(url)


async def test_one_bad_address_among_many_refuses_the_host() -> None:
    resolver = FakeResolver({"mixed.example.test": ["93.184.215.14", "10.0.0.5"]})
    with pytest.raises(UrlRefusedError, match="private"):
        await resolve_checked(parse_url("http://mixed.example.test/"), resolver)
    assert resolver.calls == [("mixed.example.test", 80)]


async def test_resolution_returns_the_checked_address_to_pin() -> None:
    resolver = FakeResolver({"ok.example.test": ["::ffff:93.184.215.14", "2606:4700::1"]})
    pinned = await resolve_checked(parse_url("https://ok.example.test/x"), resolver)
    assert pinned == IPv4Address("93.184.215.14")
    assert resolver.calls == [("ok.example.test", 443)]


async def test_literal_addresses_never_reach_the_resolver() -> None:
    resolver = FakeResolver({})
    pinned = await resolve_checked(parse_url("http://8.8.8.8:8080/"), resolver)
    assert pinned == IPv4Address("8.8.8.8")
    assert resolver.calls == []


async def test_unresolvable_or_empty_hosts_fail_politely() -> None:
    resolver = FakeResolver({"empty.example.test": []})
    with pytest.raises(FetchFailedError, match=r"could not find the host nowhere\.example\.test"):
        await resolve_checked(parse_url("http://nowhere.example.test/"), resolver)
    with pytest.raises(FetchFailedError, match="could not find"):
        await resolve_checked(parse_url("http://empty.example.test/"), resolver)


def test_redact_url_keeps_no_secrets() -> None:
    shown = redact_url("https://bob:hunter2@example.com:8443/p?token=abc#x")
    assert shown == "https://example.com:8443/p"
    assert redact_url("http://[::1") == "(unreadable link)"
