"""Sources to remember, platform-free: what a person asks Lore to keep (a note, a file, a
link, a forwarded message) and the rules for sources sent in a chat — who may save where,
the size check before any download, an owner's Private/Shared choice, and the words the
person reads while it is saved (in the source's language, `bot.source_words`).

Text that comes with a file (a Telegram caption, the message of a Slack file share or of a
Discord attachment) is the file's caption: it becomes the saved document's title, "CAPTION
(FILE NAME)", and is checked at the "caption" door like a note (see `bot.knowledge`).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.replies import Message, bold, rich
from bot.source_words import count_text, source_words
from graphs.guards.doors import Door
from graphs.ingest.formats import ExtractedText
from graphs.ingest.state import IngestOutcome, IngestResult, chunks_text
from storage.documents import DocumentRecord, SourceType

__all__ = [
    "IncomingSource",
    "PendingChoices",
    "Source",
    "caption_title",
    "chunks_text",
    "first_words",
    "forwarded",
    "is_link",
    "kind_icon",
    "saved_message",
    "too_big",
]

LINK = re.compile(r"^https?://\S+$", re.IGNORECASE)
NOTE_TITLE_CHARS = 60


@dataclass(frozen=True, slots=True)
class Source:
    """One thing to remember: exactly one of a note (`text`), a local file (`path`, the
    terminal only), uploaded bytes (`data` with `file_name`) or a web page (`url`). `read`
    is text a model already read from `data` (a voice message's transcript), kept instead
    of reading it again."""

    text: str | None = None
    path: Path | None = None
    data: bytes | None = None
    url: str | None = None
    file_name: str | None = None
    title: str | None = None
    read: ExtractedText | None = None


@dataclass(frozen=True, slots=True)
class IncomingSource:
    """A source a chat message carries, before anything is downloaded: a file (the
    platform's opaque `file_ref` and the `size` it announced), a lone link, or text (a
    forwarded message, a note)."""

    file_ref: str | None = None
    file_name: str | None = None
    size: int | None = None
    url: str | None = None
    text: str | None = None
    title: str | None = None
    # How text came in ("note", "forwarded"): checked by the guards for that door.
    door: Door | None = None
    # Text sent with a file: the document's title, checked at the "caption" door.
    caption: str | None = None
    # What a model already read from the file (a voice note's transcript): kept as its text,
    # and checked at the "note" door like words typed.
    read: ExtractedText | None = None

    @property
    def label(self) -> str:
        """What to call it when asking where it goes."""
        return self.file_name or self.url or self.title or "this"

    @property
    def words(self) -> tuple[str | None, ...]:
        """The texts it brings that tell its language: a note or forwarded text, a caption,
        a transcript."""
        return (self.text, self.caption, self.read.text if self.read is not None else None)

    def guarded_texts(self) -> list[tuple[str, Door]]:
        """The texts this source brings in, each with the door its guard checks."""
        texts: list[tuple[str, Door]] = []
        if self.text is not None and self.door is not None:
            texts.append((self.text, self.door))
        if self.caption:
            texts.append((self.caption, "caption"))
        if self.read is not None:
            texts.append((self.read.text, "note"))
        return texts

    def with_data(self, data: bytes | None) -> Source:
        """The source to ingest, once the edge downloaded a file's bytes."""
        if self.file_ref is not None:
            name = self.file_name or "document"
            title = self.title or caption_title(self.caption, name)
            return Source(data=data, file_name=name, title=title, read=self.read)
        return Source(text=self.text, url=self.url, title=self.title)


_KIND_ICONS = {
    "audio": "🎙",
    "image": "🖼",
    "pdf": "📄",
    "docx": "📄",
    "csv": "📊",
    "xlsx": "📊",
    "pptx": "📽",
    "email": "✉️",
    "html": "🌐",
}


def kind_icon(document: DocumentRecord) -> str:
    """The icon `/sources` shows before a document: what kind of source it is (a recording,
    a picture, a PDF, a table, a deck, an e-mail, a page, a note, a text file)."""
    if document.source_type is SourceType.NOTE:
        return "📝"
    if document.source_type is SourceType.URL:
        return _KIND_ICONS.get(document.format, "🔗")
    return _KIND_ICONS.get(document.format, "📄")


def first_words(text: str, limit: int = NOTE_TITLE_CHARS) -> str:
    """The start of `text` as a title: its words (spaces collapsed) up to `limit`
    characters, cut after a whole word and marked "…" when there was more."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    head = words[: limit + 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else words[:limit]
    return cut.rstrip(" ,;:.-") + "…"


def caption_title(caption: str | None, file_name: str) -> str | None:
    """The title of a file sent with a caption: "CAPTION (FILE NAME)", the caption cut like a
    note's title; None without a caption (the title then comes from the file)."""
    words = first_words(caption or "")
    if not words:
        return None
    return f"{words} ({file_name})"


def is_link(text: str) -> bool:
    """Whether a message is a lone http(s) link (which Lore saves rather than answers)."""
    return LINK.match(text.strip()) is not None


def note(text: str) -> IncomingSource:
    """A note typed as text (`/note`, `/share TEXT`)."""
    return IncomingSource(text=text.strip(), title=first_words(text), door="note")


def forwarded(origin: str, when: datetime, text: str) -> IncomingSource:
    """A forwarded message, saved with where and when it came from."""
    return IncomingSource(
        text=f"Forwarded from {origin} ({when:%Y-%m-%d %H:%M} UTC):\n\n{text}",
        title=f"Forwarded from {origin}: {first_words(text)}",
        door="forwarded",
    )


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def too_big(size: int | None, limit: int) -> str | None:
    """The refusal for a file over `limit` bytes (checked before downloading), else None."""
    if size is not None and size > limit:
        return (
            f"That file is {_megabytes(size)}; I can take files up to {_megabytes(limit)}. "
            "Nothing was saved."
        )
    return None


def saved_message(result: IngestResult, *, shared: bool, language: str = "en") -> Message:
    """What the person reads once a source is saved (or recognised as a duplicate), in
    `language`."""
    words = source_words(language)
    place = words.shared_place if shared else words.private_place
    detail = words.detail.format(chunks=count_text(words.chunks, result.chunk_count), place=place)
    if result.masked_cards:
        detail += count_text(words.masked, result.masked_cards)
    lead = {IngestOutcome.DUPLICATE: words.duplicate, IngestOutcome.UPDATED: words.updated}
    return Message(rich(lead.get(result.outcome, words.saved), bold(result.title), detail))


@dataclass(frozen=True, slots=True)
class PendingChoice:
    """A source an owner sent, waiting for Private or Shared."""

    user_id: str
    source: IncomingSource


class PendingChoices:
    """The few sources waiting for an owner's choice, in memory (a restart asks again),
    oldest dropped first."""

    def __init__(self, capacity: int = 100) -> None:
        self._items: OrderedDict[str, PendingChoice] = OrderedDict()
        self._capacity = capacity
        self._next = 0

    def put(self, user_id: str, source: IncomingSource) -> str:
        """Keep `source` for `user_id`; return its short key."""
        self._next += 1
        key = f"{self._next:x}"
        self._items[key] = PendingChoice(user_id, source)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return key

    def peek(self, key: str) -> PendingChoice | None:
        """The choice under `key`, kept."""
        return self._items.get(key)

    def take(self, key: str) -> PendingChoice | None:
        """The choice under `key`, removed; None if unknown or dropped."""
        return self._items.pop(key, None)
