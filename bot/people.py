"""Who is talking: a platform identity becomes a Lore user, or nobody; owners come from
settings (registered on first sight).

Every permission the `Bot` checks starts here, from the identity an edge parsed out of its
platform's payload — never from a role an edge claims or from model output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from bot.errors import NotInvitedError, OwnerOnlyError
from bot.events import Identity
from storage.users import Role, User, UserRepository

__all__ = ["LOCAL_OWNER", "LOCAL_PLATFORM", "People", "terminal_operator"]

# The person at this machine's terminal (the CLI, the terminal chat, MCP over stdio). An owner
# when settings say so (the default OWNERS=console:owner), and always in the CLI's own
# maintenance commands: whoever runs those can read the data directory anyway.
LOCAL_PLATFORM = "console"
LOCAL_OWNER = Identity(LOCAL_PLATFORM, "owner", "You")
_LOCAL_KEY = (LOCAL_OWNER.platform, LOCAL_OWNER.platform_user_id)

# True while a CLI command sent over the control socket runs (in its task and those it starts).
_OPERATOR: ContextVar[bool] = ContextVar("lore_terminal_operator", default=False)


@contextmanager
def terminal_operator() -> Iterator[None]:
    """While this holds, the local owner is an owner whatever OWNERS says: the running bot
    does a CLI command for someone who can read its data directory anyway (the control
    socket admits only the bot's own user)."""
    token = _OPERATOR.set(True)
    try:
        yield
    finally:
        _OPERATOR.reset(token)


class People:
    """Identities to users, and the owner rule."""

    def __init__(self, users: UserRepository, owners: Iterable[tuple[str, str]]) -> None:
        self._users = users
        self._owners = frozenset(owners)

    @property
    def owner_identities(self) -> list[tuple[str, str]]:
        """Every configured owner as (platform, platform user id), in a stable order."""
        return sorted(self._owners)

    def is_configured_owner(self, identity: Identity) -> bool:
        """Whether settings (or the terminal) make this identity an owner."""
        key = (identity.platform, identity.platform_user_id)
        return key in self._owners or (key == _LOCAL_KEY and _OPERATOR.get())

    async def find(self, identity: Identity) -> User | None:
        """The registered user behind an identity; configured owners register on first use."""
        user = await self._users.by_identity(identity.platform, identity.platform_user_id)
        if user is None and self.is_configured_owner(identity):
            user = await self._users.register(
                identity.platform, identity.platform_user_id, identity.display_name, Role.OWNER
            )
        return user

    async def member(self, identity: Identity) -> User:
        """The registered user (member or owner); `NotInvitedError` for anyone else."""
        user = await self.find(identity)
        if user is None:
            raise NotInvitedError
        return user

    async def owner(self, identity: Identity, what: str) -> User:
        """The user if they are an owner; `NotInvitedError` / `OwnerOnlyError(what)` if not."""
        user = await self.member(identity)
        if user.role is not Role.OWNER:
            raise OwnerOnlyError(what)
        return user

    async def by_id(self, user_id: str) -> User | None:
        """A user by id (for names in notices)."""
        return await self._users.get(user_id)  # type: ignore[arg-type]
