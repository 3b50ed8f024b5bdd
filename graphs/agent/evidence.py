"""What may support a sentence of this turn's answer (`graphs.agent.grounding.Evidence`).

Numbered, and cited as `[n]`: the passages, documents and past exchanges this turn's tools
returned (read from the tool messages since the person's message, as the model saw them),
and the owner's pinned documents (`[pinned]`). Without a number: the person's own
message, what an approved action reported, and what Lore says about itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from graphs.agent.claims import PINNED_REF
from graphs.agent.grounding import ABOUT_LORE, Evidence
from graphs.llm.offline_answer import read_tool_results
from graphs.llm.offline_stems import CJK, stopword_language
from graphs.llm.types import ChatMessage
from storage.documents import Passage
from storage.text_language import detect_language

__all__ = ["this_turn", "turn_evidence", "turn_language"]


def this_turn(messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
    """The messages from the person's last message on."""
    starts = [index for index, message in enumerate(messages) if message.role == "user"]
    return messages[starts[-1] :] if starts else messages


def _when(text: str) -> str:
    """A past exchange's time also as words ("Monday 07 December 2026"), as a model says it."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text
    return f"{text} {moment:%A %d %B %Y}"


def _outcome_text(payload: Mapping[str, Any]) -> str:
    return " ".join(str(value) for value in payload.values() if isinstance(value, str | int))


def turn_evidence(
    messages: Sequence[ChatMessage], question: str, pinned: Sequence[Passage] = ()
) -> list[Evidence]:
    """Everything that may support a sentence of this turn's answer (module docstring)."""
    results = read_tool_results(this_turn(messages))
    found = [
        Evidence(item.ref, item.title, f"{item.section}\n{item.text}")
        for item in (*results.passages, *results.documents)
    ]
    found += [
        Evidence(
            item.ref, f"Our conversation on {_when(item.when)}", f"{item.question}\n{item.answer}"
        )
        for item in results.exchanges
    ]
    found += [Evidence(PINNED_REF, p.document_title, p.text) for p in pinned]
    found += [Evidence(None, tool, _outcome_text(payload)) for tool, payload in results.outcomes]
    found += [Evidence(None, "your message", question), Evidence(None, "Lore", ABOUT_LORE)]
    return found


def turn_language(question: str) -> str:
    """The language the answer's words are read in: the question's. Chinese and Japanese
    by their script, the others by their stopwords (English when in doubt)."""
    if CJK.search(question):
        return detect_language(question) or "en"
    return stopword_language(question)
