"""Reading an HTML page with trafilatura: hidden elements dropped, the main content as
Markdown, the page's titles, and its plain body text when the main content is short."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import trafilatura

from graphs.ingest.html_hidden import drop_hidden_elements

__all__ = ["HtmlParts", "read_html"]

_SHORT_PAGE_CHARS = 200  # below this, trafilatura's choice is checked against the page body
_DROPPED_HTML_TAGS = (
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "svg", "iframe", "button", "select",
)  # fmt: skip
_BLOCK_HTML_TAGS = (
    "p", "div", "li", "br", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "section",
    "article", "main", "pre", "blockquote", "dd", "dt", "table", "ul", "ol", "hr",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class HtmlParts:
    """What a page offers: title candidates (best first), its main content as Markdown, and
    its plain body text (empty when the main content is long enough to trust)."""

    titles: tuple[str | None, ...]
    main: str
    body: str


def read_html(source: bytes | str) -> HtmlParts | None:
    """The parts of a page (bytes: trafilatura guesses the charset); None if it has no
    document at all."""
    tree = trafilatura.load_html(source)
    if tree is None:
        return None
    drop_hidden_elements(tree)
    markdown = trafilatura.extract(  # tables kept; links, images and comments dropped
        tree, output_format="markdown", favor_precision=True, include_comments=False
    )
    metadata = trafilatura.extract_metadata(tree, extensive=False)
    titles = (metadata.title, tree.findtext(".//title"))
    main = (markdown or "").strip()
    # On short pages trafilatura may keep nothing, or a menu instead of the content.
    body = "" if len(main) >= _SHORT_PAGE_CHARS else _html_body_text(tree).strip()
    return HtmlParts(titles=titles, main=main, body=body)


def _html_body_text(tree: Any) -> str:
    """Plain text of the page body without scripts, navigation, headers and footers."""
    root = copy.deepcopy(tree)
    for element in list(root.iter(*_DROPPED_HTML_TAGS)):
        element.drop_tree()
    body = root.find(".//body")
    body = root if body is None else body
    for element in body.iter(*_BLOCK_HTML_TAGS):
        element.tail = "\n" + (element.tail or "")
    lines = (" ".join(line.split()) for line in str(body.text_content()).split("\n"))
    return "\n".join(lines)
