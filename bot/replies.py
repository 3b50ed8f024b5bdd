"""What the core answers an edge, platform-free: rich text as spans, and typed replies.

Every word a person reads comes from `bot/`; an edge only turns spans into its own markup
(Telegram HTML, Slack mrkdwn, Discord markdown, plain terminal text) and replies into
messages, buttons and prompts. User-supplied text stays in plain spans, so no edge ever
has to guess what is markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

__all__ = [
    "ApprovalCard",
    "ApprovalCards",
    "Confirmation",
    "InviteCreated",
    "Message",
    "Reply",
    "Rich",
    "ScopeQuestion",
    "Span",
    "Style",
    "bold",
    "code",
    "italic",
    "link",
    "plain",
    "plain_text",
    "rich",
]


class Style(StrEnum):
    """How a span looks."""

    PLAIN = "plain"
    BOLD = "bold"
    ITALIC = "italic"
    CODE = "code"
    LINK = "link"


@dataclass(frozen=True, slots=True)
class Span:
    """A run of text in one style; `url` only for links."""

    text: str
    style: Style = Style.PLAIN
    url: str | None = None


Rich = tuple[Span, ...]


def plain(text: str) -> Span:
    """Text shown as it is (user text always goes here)."""
    return Span(text)


def bold(text: str) -> Span:
    """Emphasised text."""
    return Span(text, Style.BOLD)


def italic(text: str) -> Span:
    """Quiet text (dates, notes)."""
    return Span(text, Style.ITALIC)


def code(text: str) -> Span:
    """A command, code or id to copy."""
    return Span(text, Style.CODE)


def link(text: str, url: str) -> Span:
    """A link; edges show it without a preview."""
    return Span(text, Style.LINK, url)


def rich(*parts: Span | str | Iterable[Span]) -> Rich:
    """Spans from strings (plain), spans and runs of spans."""
    spans: list[Span] = []
    for part in parts:
        if isinstance(part, str):
            spans.append(Span(part))
        elif isinstance(part, Span):
            spans.append(part)
        else:
            spans.extend(part)
    return tuple(span for span in spans if span.text)


def plain_text(body: Rich) -> str:
    """The words alone (for terminals, logs and tests)."""
    return "".join(span.text for span in body)


@dataclass(frozen=True, slots=True)
class Message:
    """A reply to show. `personal` replies concern only the person who asked (edges that can
    show a reply to one person in a shared channel do so: Slack and Discord ephemerals)."""

    body: Rich
    personal: bool = False


@dataclass(frozen=True, slots=True)
class Confirmation:
    """A question with Yes / No; the edge calls `Bot.confirm(identity, chat, action, yes)`.
    `action` is short (≤ 64 bytes) and opaque to edges."""

    body: Rich
    action: str
    yes_label: str
    no_label: str = "Cancel"


@dataclass(frozen=True, slots=True)
class ApprovalCard:
    """A waiting high-risk request, shown to an owner with Approve / Reject."""

    approval_id: str
    body: Rich


@dataclass(frozen=True, slots=True)
class ApprovalCards:
    """Requests waiting for an owner's decision (`empty` when there are none)."""

    cards: tuple[ApprovalCard, ...]
    empty: Rich


@dataclass(frozen=True, slots=True)
class InviteCreated:
    """A one-use invite code; each edge says how a newcomer uses it on its platform."""

    code: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class ScopeQuestion:
    """An owner sent a source: Private or Shared? The edge calls
    `Bot.choose_scope(identity, key, shared=...)` with the tapped answer."""

    key: str
    body: Rich


Reply = Message | Confirmation | ApprovalCards | InviteCreated | ScopeQuestion
