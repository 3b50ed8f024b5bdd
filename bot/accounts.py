"""Accounts: newcomers join with an owner's invite; a person links another chat account to
theirs with a one-time code (never a silent merge)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from bot.errors import LinkRefusedError, NotInvitedError
from bot.events import Identity
from bot.limits import WRONG_CODES, Limits, account_key
from bot.people import People
from bot.replies import InviteCreated
from storage.invites import InviteRepository
from storage.link_codes import LinkCode, LinkCodeRepository
from storage.users import Role, User

__all__ = ["INVITE_INVALID", "LINK_CODE_TTL", "Accounts"]

logger = logging.getLogger(__name__)

LINK_CODE_TTL = timedelta(minutes=15)
INVITE_TTL = timedelta(days=7)
INVITE_INVALID = (
    "That invite link is not valid any more (used or expired). Ask the owner for a new one."
)
LINKED = "Linked: this account now shares your notes and settings with your other one."
LINK_REFUSALS: Mapping[str, str] = {
    "taken": (
        "This account already belongs to someone registered with me, so I did not link it. "
        "Accounts are never merged; ask the owner if this is a mistake."
    ),
    "invalid": "That link code is not valid (unknown, already used or expired). Get a new one.",
    "refused": "An owner account can only be linked with another owner account.",
}


class Accounts:
    """Invites and account links."""

    def __init__(
        self,
        *,
        people: People,
        invites: InviteRepository,
        link_codes: LinkCodeRepository,
        limits: Limits,
        clock: Callable[[], datetime],
    ) -> None:
        self._limits = limits
        self._people = people
        self._invites = invites
        self._link_codes = link_codes
        self._clock = clock

    async def create_invite(
        self, identity: Identity, *, ttl: timedelta = INVITE_TTL
    ) -> InviteCreated:
        """A new one-use member invite (owners only)."""
        owner = await self._people.owner(identity, "/invite")
        issued = await self._invites.create(owner.id, Role.MEMBER, now=self._clock(), ttl=ttl)
        return InviteCreated(issued.code, issued.expires_at)

    async def redeem_invite(self, identity: Identity, code: str) -> tuple[User, bool]:
        """Register a newcomer with an invite code: (the user, whether they are new).
        Someone already registered just gets their user back."""
        existing = await self._people.find(identity)
        if existing is not None:
            return existing, False
        if not code.strip():
            raise NotInvitedError
        await self._limits.check(WRONG_CODES, account_key(identity))
        user = await self._invites.register_with_invite(
            code.strip(),
            platform=identity.platform,
            platform_user_id=identity.platform_user_id,
            display_name=identity.display_name,
            now=self._clock(),
        )
        if user is None:
            await self._limits.failed(WRONG_CODES, account_key(identity))
            raise NotInvitedError(INVITE_INVALID)
        logger.info("A %s identity joined as user %s", identity.platform, user.id)
        return user, True

    async def create_link_code(self, identity: Identity) -> LinkCode:
        """A one-time code (15 minutes) that links another identity to this person."""
        user = await self._people.member(identity)
        return await self._link_codes.create(user.id, now=self._clock(), ttl=LINK_CODE_TTL)

    async def link_identity(self, identity: Identity, code: str) -> str:
        """Attach `identity` to the user who made `code`: once, before it expires, and only if
        the identity belongs to nobody else. An identity configured as an owner joins only an
        owner's account. Returns what to tell the person; raises `LinkRefusedError`."""
        now = self._clock()
        await self._limits.check(WRONG_CODES, account_key(identity))
        if self._people.is_configured_owner(identity):
            found = await self._link_codes.usable(code, now=now)
            target = await self._people.by_id(found.user_id) if found is not None else None
            if target is not None and target.role is not Role.OWNER:
                raise LinkRefusedError(LINK_REFUSALS["refused"])
        result = await self._link_codes.redeem(
            code, platform=identity.platform, platform_user_id=identity.platform_user_id, now=now
        )
        logger.info(
            "Link of a %s identity: %s (user %s)",
            identity.platform,
            result.outcome,
            result.user_id or "-",
        )
        if result.outcome == "linked":
            return LINKED
        if result.outcome == "already_linked":
            return "This account is already linked to yours; nothing to do."
        if result.outcome == "invalid":
            await self._limits.failed(WRONG_CODES, account_key(identity))
        raise LinkRefusedError(LINK_REFUSALS[result.outcome])
