"""Parse an RSS or Atom feed into entries, refusing XML that could expand entities. Runs in
the extraction workers only (`graphs.ingest.extract_worker`), under their CPU and memory
limits.

`defusedxml` is not a dependency, so before the standard library's ElementTree sees a
byte, a pass with a bare expat parser refuses any document type declaration: without one
no entity can be declared (no "billion laughs", no external entities), and expat rejects
undeclared entities. The body itself is already capped in size by the fetcher.
"""

from __future__ import annotations

import hashlib
import html
import xml.etree.ElementTree as ET
from urllib.parse import urljoin, urlsplit
from xml.parsers import expat

from graphs.ingest.feeds import Feed, FeedEntry, FeedError

__all__ = ["parse_feed"]

_ATOM = "{http://www.w3.org/2005/Atom}"
_RSS1 = "{http://purl.org/rss/1.0/}"
_RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
_CONTENT = "{http://purl.org/rss/1.0/modules/content/}"
_MAX_ENTRIES = 500


class _DeclarationRefusedError(Exception):
    pass


def _refuse(*_args: object) -> None:
    raise _DeclarationRefusedError


def _check_no_declarations(body: bytes) -> None:
    parser = expat.ParserCreate()
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    try:
        parser.Parse(body, True)
    except _DeclarationRefusedError:
        raise FeedError(
            "That feed declares a document type or entities, which I do not read."
        ) from None
    except expat.ExpatError as exc:
        raise FeedError(
            f"That feed is not well-formed XML ({exc}), so I could not read it."
        ) from None


def parse_feed(body: bytes, *, base_url: str) -> Feed:
    """Parse a feed; relative links are resolved against `base_url`. Raises `FeedError`."""
    _check_no_declarations(body)
    try:
        root = ET.fromstring(body)  # noqa: S314 - declarations refused above
    except ET.ParseError as exc:
        raise FeedError("That feed is not well-formed XML, so I could not read it.") from exc
    if root.tag == "rss":
        channel = root.find("channel")
        if channel is None:
            raise FeedError("That RSS feed has no channel, so I could not read it.")
        title = _text(channel.find("title"))
        entries = [_rss_item(item, "", base_url) for item in channel.iter("item")]
    elif root.tag == f"{_RDF}RDF":
        title = _text(root.find(f"{_RSS1}channel/{_RSS1}title"))
        entries = [_rss1_item(item, base_url) for item in root.iter(f"{_RSS1}item")]
    elif root.tag == f"{_ATOM}feed":
        title = _text(root.find(f"{_ATOM}title"))
        entries = [_atom_entry(entry, base_url) for entry in root.iter(f"{_ATOM}entry")]
    else:
        raise FeedError("That address is XML but not an RSS or Atom feed.")
    kept = [entry for entry in entries if entry is not None]
    return Feed(title=title, entries=tuple(kept[:_MAX_ENTRIES]))


def _rss_item(item: ET.Element, ns: str, base_url: str) -> FeedEntry | None:
    link = _link(_text(item.find(f"{ns}link")), base_url)
    guid = _text(item.find("guid"))
    content = _text(item.find(f"{_CONTENT}encoded"))
    summary = _text(item.find(f"{ns}description"))
    return _entry(guid, link, _text(item.find(f"{ns}title")), content, summary)


def _rss1_item(item: ET.Element, base_url: str) -> FeedEntry | None:
    about = item.get(f"{_RDF}about")
    entry = _rss_item(item, _RSS1, base_url)
    if entry is None or not about:
        return entry
    return FeedEntry(about.strip(), entry.link, entry.title, entry.content, entry.summary)


def _atom_entry(entry: ET.Element, base_url: str) -> FeedEntry | None:
    link = None
    for candidate in entry.findall(f"{_ATOM}link"):
        if candidate.get("rel", "alternate") == "alternate" and candidate.get("href"):
            link = _link(candidate.get("href"), base_url)
            break
    content = _atom_text(entry.find(f"{_ATOM}content"))
    summary = _atom_text(entry.find(f"{_ATOM}summary"))
    title = _text(entry.find(f"{_ATOM}title"))
    return _entry(_text(entry.find(f"{_ATOM}id")), link, title, content, summary)


def _entry(
    key: str | None, link: str | None, title: str | None, content: str | None, summary: str | None
) -> FeedEntry | None:
    """Build an entry keyed by guid, link or text hash; None if it has nothing to keep."""
    if key is None:
        key = link
    if key is None:
        text = "\n".join(part for part in (title, content, summary) if part)
        if not text:
            return None
        key = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:32]
    return FeedEntry(key=key[:2000], link=link, title=title, content=content, summary=summary)


def _text(element: ET.Element | None) -> str | None:
    if element is None:
        return None
    value = "".join(element.itertext()).strip()
    return value or None


def _atom_text(element: ET.Element | None) -> str | None:
    """Atom text constructs as HTML: `html` as is, `xhtml` serialised, `text` escaped."""
    if element is None or element.get("src"):
        return None
    kind = element.get("type", "text")
    if kind == "xhtml":
        for node in element.iter():  # plain HTML tags, not `html:p` (we own this tree)
            node.tag = node.tag.rpartition("}")[2] if isinstance(node.tag, str) else node.tag
        inner = "".join(
            ET.tostring(child, encoding="unicode", short_empty_elements=False) for child in element
        )
        return inner.strip() or None
    value = _text(element)
    if value is None or kind == "html":
        return value
    return html.escape(value)


def _link(value: str | None, base_url: str) -> str | None:
    """An absolute http(s) link, or None (other schemes are never followed)."""
    if not value:
        return None
    absolute = urljoin(base_url, value.strip())
    if urlsplit(absolute).scheme not in ("http", "https"):
        return None
    return absolute
