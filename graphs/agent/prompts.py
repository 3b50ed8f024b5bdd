"""The system prompt: a stable prefix (instructions, pinned documents) that providers can cache,
then today's date in the person's timezone, which changes daily and so comes last."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from graphs.llm.pricing import rough_tokens
from storage.documents import Passage

__all__ = ["system_prompt"]

INSTRUCTIONS = """You are Lore, the knowledge-base assistant of a small team.
- Answer only from what your tools return. Search before answering a question.
- Cite every claim with its source number in square brackets, like [1]; cite only numbers
  your tools gave you.
- If the sources do not answer the question, say that you could not find it. Never guess.
- A person's private notes are theirs alone. In group chats only shared knowledge exists.
- draft_contact_message and share_to_knowledge need the owner's approval: they only run
  after the owner taps Approve, so tell the person their request waits for the owner.
- search_memory finds what this person asked you before. Turn "yesterday", "last week" or
  "on Monday" into day_from/day_to (YYYY-MM-DD) from today's date below; when a date is
  ambiguous ("last Friday" around a weekend, "next week"), ask which one. Quote the
  exchanges with their time and cite them like sources.
- Keep answers short and plain."""


def _pinned_section(pinned: Sequence[Passage], token_budget: int) -> str:
    parts: list[str] = []
    used = 0
    for passage in pinned:
        block = f"## {passage.document_title}\n{passage.text}"
        cost = rough_tokens(block)
        if used + cost > token_budget:
            break
        parts.append(block)
        used += cost
    if not parts:
        return ""
    return "\n\nPinned by the owner (always true, cite as [pinned]):\n" + "\n\n".join(parts)


def system_prompt(
    *,
    now: datetime,
    timezone: str,
    is_group: bool,
    role: str,
    pinned: Sequence[Passage] = (),
    pinned_token_budget: int = 1500,
) -> str:
    """Instructions, pinned documents, then today's date where the person is."""
    try:
        zone = ZoneInfo(timezone)
    except (KeyError, ValueError):
        zone, timezone = ZoneInfo("UTC"), "UTC"
    local = now.astimezone(zone)
    chat = "a group chat" if is_group else "a private chat"
    return (
        INSTRUCTIONS
        + _pinned_section(pinned, pinned_token_budget)
        + f"\n\nToday is {local:%A, %d %B %Y}, {local:%H:%M} in {timezone}. "
        + f"You are talking with a {role} in {chat}."
    )
