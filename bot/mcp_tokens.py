"""MCP access: tokens a member issues for their MCP clients (shown once, kept hashed,
revocable), and the rule that turns a caller into the member a lookup reads for.

An MCP client presents its bearer token on every request; `identity_for` turns a working token
into `Identity("mcp", <token id>, ...)`, and `grant` turns that identity back into the token's
member and reach on every call, so a token revoked mid-session stops working at once. An MCP
identity is nobody to the rest of the `Bot` (no identity row names it): it can only look up.
Any other identity (the local owner over stdio) is the member `People` says it is.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from bot.errors import NotInvitedError, TokenRefusedError, UsageError
from bot.events import Identity
from bot.people import People
from storage.mcp_tokens import IssuedToken, McpToken, McpTokenRepository
from storage.users import User, UserRepository

__all__ = ["MAX_ACTIVE_TOKENS", "MCP_PLATFORM", "Grant", "McpTokens"]

logger = logging.getLogger(__name__)

MCP_PLATFORM = "mcp"
MAX_ACTIVE_TOKENS = 10
_NAME = re.compile(r"[A-Za-z0-9._-]{1,40}")
TOKEN_GONE = "This MCP token has been revoked. Ask for a new one with /mcp token."  # noqa: S105


@dataclass(frozen=True, slots=True)
class Grant:
    """What one lookup may read: the member's knowledge, or with `shared_only` the shared
    knowledge alone; `channel` says where the call came from (a token id) for the turn log."""

    user: User
    shared_only: bool
    channel: str


class McpTokens:
    """Issue, list, revoke and resolve MCP tokens."""

    def __init__(
        self,
        *,
        people: People,
        users: UserRepository,
        tokens: McpTokenRepository,
        clock: Callable[[], datetime],
    ) -> None:
        self._people = people
        self._users = users
        self._tokens = tokens
        self._clock = clock

    async def issue(self, identity: Identity, name: str, *, shared_only: bool) -> IssuedToken:
        """A new token for the caller (a member); its secret is in the result only."""
        user = await self._people.member(identity)
        if not _NAME.fullmatch(name):
            raise UsageError("A token name is 1-40 letters, digits, dots, dashes or underscores.")
        active = await self._tokens.active(user.id)
        if any(token.name == name for token in active):
            raise TokenRefusedError(f"You already have a token called {name!r}; pick another name.")
        if len(active) >= MAX_ACTIVE_TOKENS:
            raise TokenRefusedError(
                f"You have {len(active)} MCP tokens, the most I keep; revoke one first."
            )
        issued = await self._tokens.issue(user.id, name, shared_only=shared_only, now=self._clock())
        logger.info(
            "MCP token %s issued to user %s (shared only: %s)",
            issued.record.id,
            user.id,
            shared_only,
        )
        return issued

    async def free_name(self, identity: Identity) -> str:
        """A name none of the caller's working tokens has (`token1`, `token2`, ...)."""
        user = await self._people.member(identity)
        taken = {token.name for token in await self._tokens.active(user.id)}
        return next(
            f"token{n}" for n in range(1, MAX_ACTIVE_TOKENS + 2) if f"token{n}" not in taken
        )

    async def active(self, identity: Identity) -> list[McpToken]:
        """The caller's working tokens, oldest first."""
        user = await self._people.member(identity)
        return await self._tokens.active(user.id)

    async def revoke(self, identity: Identity, which: str) -> list[McpToken]:
        """Revoke the caller's token named (or numbered by id) `which`, or `all` of them; the
        tokens revoked. Raises `TokenRefusedError` when nothing matches."""
        user = await self._people.member(identity)
        active = await self._tokens.active(user.id)
        chosen = [t for t in active if which == "all" or which in (t.name, t.id)]
        if not chosen:
            raise TokenRefusedError(f"You have no working MCP token called {which!r}.")
        await self._tokens.revoke(user.id, [token.id for token in chosen], now=self._clock())
        logger.info("User %s revoked %d MCP tokens", user.id, len(chosen))
        return chosen

    async def identity_for(self, token: str) -> Identity | None:
        """The MCP identity of a working token (named after the token); None for a wrong or
        revoked one. A token goes with its member (`ON DELETE CASCADE`)."""
        record = await self._tokens.verify(token)
        if record is None:
            return None
        return Identity(MCP_PLATFORM, record.id, record.name)

    async def grant(self, identity: Identity) -> Grant:
        """Whose knowledge `identity` reads, and how far; `NotInvitedError` for nobody (a token
        revoked since the request was authenticated included)."""
        if identity.platform != MCP_PLATFORM:
            member = await self._people.member(identity)
            return Grant(member, False, f"{identity.platform}:{identity.platform_user_id}")
        record = await self._tokens.get_active(identity.platform_user_id)
        user = await self._users.get(record.user_id) if record is not None else None
        if record is None or user is None:
            raise NotInvitedError(TOKEN_GONE)
        return Grant(user, record.shared_only, record.id)
