"""Reading an e-mail (.eml) with the standard library: who sent it, to whom, when and about
what, then its body (the plain-text part, else the HTML part as text) and its text attachments.

Attachments that are not text (a PDF, an image) are named, not read: forward them on their
own to save them. Parts are capped in number and text in size.
"""

from __future__ import annotations

import email
import email.policy
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from typing import Final

from graphs.ingest.errors import DecompressionBombError, UnsupportedSourceError, megabytes
from graphs.ingest.text_cleanup import escape_headings, short_title

__all__ = ["EMAIL_BROKEN", "EmailText", "read_email"]

EMAIL_BROKEN = "This e-mail could not be read; it may be damaged or not really an .eml file."
_MAX_PARTS: Final = 1000
_HEADERS: Final = ("From", "To", "Cc", "Date")
_TEXT_ATTACHMENTS: Final = frozenset(
    {"text/plain", "text/markdown", "text/x-markdown", "text/csv", "text/tab-separated-values"}
)


@dataclass(slots=True)
class EmailText:
    """What an e-mail says: its subject, a header block, its body (HTML or not) and its text
    attachments by name, and the names of the attachments not read."""

    subject: str = ""
    headers: list[str] = field(default_factory=list)
    body: str = ""
    body_is_html: bool = False
    attachments: list[tuple[str, str]] = field(default_factory=list)
    not_read: list[str] = field(default_factory=list)


def read_email(data: bytes, max_bytes: int) -> EmailText:
    """The parts of an e-mail worth keeping; an `IngestError` if it is no e-mail."""
    try:
        message = email.message_from_bytes(data, policy=email.policy.default)
    except (ValueError, TypeError, LookupError, AttributeError, IndexError) as exc:
        raise UnsupportedSourceError(EMAIL_BROKEN) from exc
    if not isinstance(message, EmailMessage) or not _looks_like_email(message):
        raise UnsupportedSourceError(EMAIL_BROKEN)
    parts = sum(1 for _ in message.walk())
    if parts > _MAX_PARTS:
        raise DecompressionBombError(
            f"This e-mail has {parts} parts inside; Lore will not unpack it."
        )
    found = EmailText()
    found.subject = short_title(str(message.get("Subject", "") or ""))
    found.headers = [
        f"{name}: {' '.join(str(value).split())}"
        for name in _HEADERS
        if (value := message.get(name))
    ]
    total = 0
    body = message.get_body(preferencelist=("plain", "html"))
    if body is not None:
        found.body = _content(body)
        found.body_is_html = body.get_content_type() == "text/html"
        total += len(found.body)
    for attachment in message.iter_attachments():
        name = attachment.get_filename() or "attachment"
        if attachment.get_content_type() not in _TEXT_ATTACHMENTS:
            found.not_read.append(short_title(name))
            continue
        text = escape_headings(_content(attachment).strip())
        total += len(text)
        if text:
            found.attachments.append((short_title(name), text))
    if total > max_bytes:
        raise DecompressionBombError(
            f"This e-mail holds more than {megabytes(max_bytes)} of text, "
            "more than Lore accepts for one document."
        )
    return found


def _looks_like_email(message: EmailMessage) -> bool:
    """A parsed message with no header an e-mail has is just text the parser accepted."""
    return any(message.get(name) for name in ("From", "Subject", "Date", "Message-ID", "To"))


def _content(part: Message) -> str:
    try:
        content = part.get_content()  # type: ignore[attr-defined]
    except (LookupError, ValueError, TypeError, AttributeError) as exc:
        raise UnsupportedSourceError(EMAIL_BROKEN) from exc
    if isinstance(content, bytes):
        return content.decode("utf-8", "replace")
    return str(content)
