"""What the agent graph's nodes work with, handed in at run time; never part of a checkpoint."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from graphs.agent.state import TurnInput
from graphs.llm.metered import Meter
from graphs.llm.offline_language import DEFAULT_LANGUAGE, answer_language
from graphs.llm.types import ChatModel
from graphs.memory_recall import MemoryRecall
from graphs.retrieval import Retriever
from storage.approvals import ApprovalRepository
from storage.documents import DocumentRepository
from storage.incidents import IncidentRepository
from storage.turns import TurnRepository

__all__ = ["CANARY_PREFIX", "AgentContext", "AgentLimits", "HighRiskActions"]


#: How every canary starts; a random hex part follows.
CANARY_PREFIX = "lore-canary-"


class HighRiskActions(Protocol):
    """The irreversible things high-risk tools do; the `Bot` service implements them."""

    async def send_to_owner(self, requester_user_id: str, message: str) -> str:
        """Deliver a member's message to the owner; return a short delivery note."""

    async def share_document(self, requester_user_id: str, document_id: str) -> str:
        """Publish one of the requester's private documents as shared; return its title."""


@dataclass(frozen=True, slots=True)
class AgentLimits:
    """Caps that keep a turn bounded; defaults from settings."""

    rate_limit_turns: int = 20
    rate_limit_window: timedelta = timedelta(minutes=10)
    max_message_chars: int = 4000
    max_thread_turns: int = 200
    max_tool_rounds: int = 3
    tool_timeout_seconds: float = 20.0
    max_answer_tokens: int = 800
    history_messages: int = 12
    approval_ttl: timedelta = timedelta(hours=24)
    pinned_token_budget: int = 1500
    search_limit: int = 5


@dataclass(frozen=True, slots=True)
class AgentContext:
    """The agent's dependencies, built once by the composition root."""

    model: ChatModel
    # Every model call is booked here: the ledger, the price, the daily cap, the budget day.
    meter: Meter
    retriever: Retriever
    documents: DocumentRepository
    approvals: ApprovalRepository
    incidents: IncidentRepository
    turns: TurnRepository
    actions: HighRiskActions
    limits: AgentLimits
    clock: Callable[[], datetime]
    # Conversation memory (search_memory); without it the tool answers that memory is off.
    memory: MemoryRecall | None = None
    # The extractive answerer beside a real `model`: it plans the retrieval every question
    # gets, and answers from the sources when the model's answer fails or cannot be
    # verified. None when `model` is the extractive answerer itself.
    fallback: ChatModel | None = None
    # A random marker in the system prompt, new for every process: an answer that contains
    # it has leaked the prompt and is refused at verify (see `graphs.agent.leaks`).
    canary: str = field(default_factory=lambda: f"{CANARY_PREFIX}{secrets.token_hex(8)}")
    # The bot's `LANGUAGE`: what Lore says of its own (status lines, refusals) is in the
    # member's language where the question shows it, else in this one.
    language: str = DEFAULT_LANGUAGE

    def reply_language(self, turn: TurnInput) -> str:
        """The language of Lore's own words this turn: the one the turn was given, else
        the question's when it is clear and known, else `language` (as the offline
        answerer chooses)."""
        return turn.language or self.reply_language_of(turn.text)

    def reply_language_of(self, question: str) -> str:
        """The language of Lore's own words for `question`: its own when clear and known,
        else `language`."""
        return answer_language(question, self.language)
