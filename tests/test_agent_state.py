"""The conversation state keeps recent turns only, and never cuts inside a tool exchange."""

from __future__ import annotations

from graphs.agent.state import KEPT_USER_TURNS, keep_recent
from graphs.llm.types import ChatMessage, ToolCall


def turn(number: int) -> list[ChatMessage]:
    call = ToolCall(f"call-{number}", "search_knowledge", '{"query": "q"}')
    return [
        ChatMessage("user", f"question {number}"),
        ChatMessage("assistant", "", (call,)),
        ChatMessage("tool", "{}", tool_call_id=call.id, name=call.name),
        ChatMessage("assistant", f"answer {number}"),
    ]


def test_history_keeps_the_last_turns_whole() -> None:
    history: list[ChatMessage] = []
    for number in range(KEPT_USER_TURNS + 5):
        history = keep_recent(history, turn(number))
    users = [message.content for message in history if message.role == "user"]
    assert users == [f"question {n}" for n in range(5, KEPT_USER_TURNS + 5)]
    assert history[0].role == "user"
    assert len(history) == 4 * KEPT_USER_TURNS
    assert history[-1].content == f"answer {KEPT_USER_TURNS + 4}"


def test_short_histories_are_untouched() -> None:
    history = keep_recent(turn(1), turn(2))
    assert history == turn(1) + turn(2)
