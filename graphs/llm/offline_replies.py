"""The offline answerer's short replies: a fetched document shown, what an approved (or
rejected) high-risk tool did, and an apology when a tool failed, in the member's language
(`graphs.llm.offline_language`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from graphs.llm.offline_answer import Answer, Source
from graphs.llm.offline_language import DEFAULT_LANGUAGE, phrases

__all__ = ["document_answer", "error_answer", "outcome_answer"]


def document_answer(document: Source, *, max_chars: int = 900) -> Answer:
    """Show the start of one document fetched with get_entry."""
    source = f" ({document.source})" if document.source else ""
    parts = [f"Here is \u201c{document.title}\u201d{source} [{document.ref}]:"]
    used = 0
    for paragraph in re.split(r"\n\s*\n", document.text.strip()):
        if used and used + len(paragraph) > max_chars:
            parts.append("\n\u2026")
            break
        parts.append("\n" + paragraph.strip())
        used += len(paragraph)
    return Answer(tuple(parts))


def outcome_answer(
    tool: str, payload: Mapping[str, Any], language: str = DEFAULT_LANGUAGE
) -> Answer:
    """Confirm what an approved (or rejected) high-risk tool did, in `language`."""
    words = phrases(language)
    status = str(payload.get("status", ""))
    reason = str(payload.get("reason") or "").strip()
    because = words.reason.format(reason=reason) if reason else ""
    if tool == "draft_contact_message" and status == "delivered":
        message = str(payload.get("message") or "").strip()
        text = words.delivered_message.format(message=message) if message else words.delivered
    elif tool == "draft_contact_message" and status == "rejected":
        text = words.message_rejected + because
    elif tool == "share_to_knowledge" and status == "shared":
        title = str(payload.get("title") or payload.get("document_id") or "your note")
        text = words.shared.format(title=title)
    elif tool == "share_to_knowledge" and status == "rejected":
        text = words.share_rejected + because
    else:
        text = f"The {tool or 'tool'} step ended with status \u201c{status}\u201d." + because
    return Answer((text,))


def error_answer(error: str, language: str = DEFAULT_LANGUAGE) -> Answer:
    """Say politely that a tool failed, passing on its (already polite) message."""
    words = phrases(language)
    return Answer((words.sorry, error.strip() or words.tool_failed))
