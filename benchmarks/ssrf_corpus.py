"""Measure the URL address policy on the shared SSRF corpus: how many URLs it refuses.

Usage: python benchmarks/ssrf_corpus.py [PATH_TO_ssrf_urls.tsv]

Rows marked `needs_dns=yes` are resolved by a fake resolver that answers a fixed private
address (as a hostile DNS server would); every other row must be refused without any
lookup, so its resolver fails the row if asked. Nothing is ever connected to.
The same run checks a small list of ordinary public URLs (resolved to a fixed public
address) to show the policy does not refuse everything.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
from collections import Counter
from ipaddress import IPv4Address
from pathlib import Path

from graphs.ingest.errors import IngestError, UnsupportedSourceError, UrlRefusedError
from graphs.ingest.url_safety import Address, parse_url, resolve_checked

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = (REPO_ROOT / ".." / "shared" / "corpora" / "ssrf_urls.tsv").resolve()
PRIVATE_ANSWER = IPv4Address("10.0.0.1")
PUBLIC_ANSWER = IPv4Address("93.184.215.14")

BENIGN_URLS = (
    "https://example.com/",
    "http://example.com:8080/path?q=1#frag",
    "https://en.wikipedia.org/wiki/Server-side_request_forgery",
    "https://user:password@docs.example.org/private.pdf",
    "https://münchen.de/",
    "https://1e100.net/",
    "https://_dmarc.example.com/",
    "https://sub-domain.example.co.uk./",
    "http://8.8.8.8/",
    "http://[2606:4700:4700::1111]/",
    "http://[64:ff9b::808:808]/",
)


class DnsNotExpectedError(Exception):
    """A row that should be refused from its text alone reached the resolver."""


LOOKUPS: list[str] = []


async def private_resolver(host: str, _port: int) -> list[Address]:
    LOOKUPS.append(host)
    return [PRIVATE_ANSWER]


async def public_resolver(_host: str, _port: int) -> list[Address]:
    return [PUBLIC_ANSWER]


async def no_dns_resolver(host: str, _port: int) -> list[Address]:
    raise DnsNotExpectedError(host)


async def verdict(url: str, needs_dns: bool) -> str:
    """'refused', 'unsupported', or why the URL was not refused."""
    try:
        parsed = parse_url(url)
        await resolve_checked(parsed, private_resolver if needs_dns else no_dns_resolver)
    except UrlRefusedError:
        return "refused"
    except UnsupportedSourceError:
        return "unsupported"
    except DnsNotExpectedError:
        return "asked DNS"
    except IngestError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "allowed"


async def benign_verdict(url: str) -> str:
    try:
        await resolve_checked(parse_url(url), public_resolver)
    except IngestError as exc:
        return f"{type(exc).__name__}: {exc}"
    return "allowed"


async def run(corpus: Path) -> int:
    with corpus.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    outcomes = Counter[str]()
    missed: list[tuple[str, str, str]] = []
    for row in rows:
        outcome = await verdict(row["url"], row["needs_dns"] == "yes")
        outcomes[outcome] += 1
        if outcome not in ("refused", "unsupported"):
            missed.append((row["url"], row["class"], outcome))
    refused = outcomes["refused"] + outcomes["unsupported"]
    print(f"corpus: {corpus}")
    print(
        f"refused {refused}/{len(rows)} = {refused / len(rows):.1%} "
        f"(address/host policy {outcomes['refused']}, scheme {outcomes['unsupported']})"
    )
    needs_dns = sum(row["needs_dns"] == "yes" for row in rows)
    print(
        f"needs_dns rows: {needs_dns}, of which {needs_dns - len(LOOKUPS)} were refused "
        f"by name or form before any lookup, {len(LOOKUPS)} after the (private) answer"
    )
    for url, kind, outcome in missed:
        print(f"  NOT REFUSED [{kind}] {url!r}: {outcome}")
    benign = [(url, await benign_verdict(url)) for url in BENIGN_URLS]
    allowed = sum(outcome == "allowed" for _, outcome in benign)
    print(f"benign public URLs allowed {allowed}/{len(benign)} = {allowed / len(benign):.1%}")
    for url, outcome in benign:
        if outcome != "allowed":
            print(f"  FALSE POSITIVE {url!r}: {outcome}")
    return 0 if not missed and allowed == len(benign) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args()
    raise SystemExit(asyncio.run(run(args.corpus)))


if __name__ == "__main__":
    main()
