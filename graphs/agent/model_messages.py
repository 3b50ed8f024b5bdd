"""The messages a model call of this turn sends: the system prompt (a stable prefix, then the
turn's context), the recent conversation with this turn's tool results, and a note to the
model when its last reply could not be read."""

from __future__ import annotations

from collections.abc import Sequence

from graphs.agent.context import AgentContext
from graphs.agent.prompts import system_prompt
from graphs.agent.state import AgentState
from graphs.llm.types import ChatMessage
from storage.documents import Passage

__all__ = ["HISTORY_USER_TURNS", "model_messages", "recent_history"]

#: The person's last messages (with everything after each) a model call sees.
HISTORY_USER_TURNS = 6


def recent_history(messages: Sequence[ChatMessage], keep_user_turns: int) -> list[ChatMessage]:
    """The last turns of the conversation, cut at a user message (never inside a tool call)."""
    starts = [i for i, message in enumerate(messages) if message.role == "user"]
    if len(starts) <= keep_user_turns:
        return list(messages)
    return list(messages[starts[-keep_user_turns] :])


def model_messages(
    ctx: AgentContext, state: AgentState, pinned: Sequence[Passage]
) -> list[ChatMessage]:
    """What the model reads this call (see the module docstring)."""
    turn = state["turn"]
    system = system_prompt(
        now=ctx.clock(),
        timezone=turn.timezone,
        is_group=turn.is_group,
        role=turn.role,
        pinned=pinned,
        pinned_token_budget=ctx.limits.pinned_token_budget,
        canary=ctx.canary,
        hardened=state.get("hardened", False),
    )
    messages = [
        ChatMessage("system", system),
        *recent_history(state["messages"], HISTORY_USER_TURNS),
    ]
    if note := state.get("model_note"):
        messages.append(ChatMessage("system", note))
    return messages
