"""Checkpoint thread ids and the seed of an approval thread: built (and read) only here.

A conversation thread is one per platform, chat, chat thread (a Slack or Discord thread,
a Telegram topic) and user; an approval waits in a thread of its own, `approval:{id}`,
seeded from the stored request alone.
"""

from __future__ import annotations

from datetime import datetime

from graphs.agent.state import AgentState, TurnInput, TurnUsage
from graphs.llm.types import ChatMessage, ToolCall
from storage.approvals import Approval

__all__ = ["approval_seed", "approval_thread_id", "chat_thread_id", "thread_id_of"]

MEMBER_ROLE = "member"


def chat_thread_id(
    platform: str, chat_id: str, user_id: str, chat_thread: str | None = None
) -> str:
    """One conversation thread per platform, chat (and chat thread) and user."""
    chat = f"{chat_id}/{chat_thread}" if chat_thread else chat_id
    return f"{platform}:{chat}:{user_id}"


def thread_id_of(turn: TurnInput) -> str:
    """The conversation thread of a turn."""
    return chat_thread_id(turn.platform, turn.chat_id, turn.user_id, turn.chat_thread)


def approval_thread_id(approval_id: str) -> str:
    """The thread in which one approval request waits."""
    return f"approval:{approval_id}"


def approval_seed(approval: Approval, now: datetime) -> AgentState:
    """The starting state of an approval thread, built from the stored request alone.

    The continuation runs in the same kind of chat as the request (a group chat searches
    shared knowledge only, and requests stored before chat kinds were kept count as group
    chats: fail closed), as the requester, never with an owner's role.
    """
    call = ToolCall(f"approval-{approval.id}", approval.tool_name, approval.arguments_json)
    turn = TurnInput(
        turn_id=f"approval-{approval.id}",
        user_id=approval.requester_user_id,
        role=MEMBER_ROLE,
        platform=approval.platform,
        chat_id=approval.chat_id,
        is_group=approval.is_group,
        text=approval.summary,
        timezone="UTC",
        received_at=now.isoformat(),
        chat_thread=approval.chat_thread,
    )
    return {
        "turn": turn,
        "resume_from_approval": True,
        "messages": [
            ChatMessage("user", approval.summary),
            ChatMessage("assistant", "", (call,)),
        ],
        "pending_calls": [call],
        "approval_id": approval.id,
        "passages": {},
        "tool_rounds": 1,
        "tools_used": [],
        "usage": TurnUsage(),
        "node_ms": {},
        "refusal": None,
        "error": None,
        "answer": "",
        "finish_reason": "",
    }
