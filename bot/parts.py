"""What the `Bot` is built from: every service of the core, built by the composition root
and shared by the `Bot` (the edges' front door) and its `Maintenance` (the process's own
jobs)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from bot.accounts import Accounts
from bot.approvals import Approvals
from bot.backups import Backups
from bot.commands import CommandRegistry
from bot.conversation import Conversations
from bot.digests import Digests
from bot.forgetting import Forgetting
from bot.knowledge import Knowledge
from bot.limits import Limits
from bot.lookups import Lookups
from bot.mcp_tokens import McpTokens
from bot.memory import ConversationMemory
from bot.notifications import Notifiers
from bot.people import People
from bot.reports import Reports
from bot.watching import Watching
from graphs.ingest.context import IngestContext
from storage.turns import TurnRepository
from storage.users import UserRepository

__all__ = ["BotParts"]


@dataclass(frozen=True, slots=True)
class BotParts:
    """What the composition root builds the `Bot` from."""

    people: People
    users: UserRepository
    knowledge: Knowledge
    forgetting: Forgetting
    accounts: Accounts
    approvals: Approvals
    conversations: Conversations
    digests: Digests
    watching: Watching
    memory: ConversationMemory
    reports: Reports
    tokens: McpTokens
    backups: Backups
    lookups: Lookups
    notifiers: Notifiers
    limits: Limits
    commands: CommandRegistry
    turns: TurnRepository
    ingest_context: IngestContext
    clock: Callable[[], datetime]
