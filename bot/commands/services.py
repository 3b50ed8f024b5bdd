"""What command handlers work with: the `Bot`'s services, each authorising from the caller's
identity itself (a handler never decides a permission on its own)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.accounts import Accounts
from bot.approvals import Approvals
from bot.conversation import Conversations
from bot.digests import Digests
from bot.forgetting import Forgetting
from bot.knowledge import Knowledge
from bot.mcp_tokens import McpTokens
from bot.reports import Reports
from bot.watching import Watching

__all__ = ["CommandServices"]


@dataclass(frozen=True, slots=True)
class CommandServices:
    """The services behind the commands."""

    knowledge: Knowledge
    forgetting: Forgetting
    accounts: Accounts
    approvals: Approvals
    conversations: Conversations
    digests: Digests
    watching: Watching
    reports: Reports
    tokens: McpTokens
