"""Outcomes a person sees as a polite message: one exception each, all rooted in `LoreError`.

The `Bot` service raises them; every edge shows `str(error)` as it is (the registry turns
them into a `Message` reply). Messages never hold secrets, stack traces or other people's
data. The fixed wordings live here, so every edge says the same thing.
"""

from __future__ import annotations

__all__ = [
    "NOT_INVITED",
    "BackupRefusedError",
    "ChoiceExpiredError",
    "DigestError",
    "EdgeStartError",
    "IngestRefusedError",
    "LinkRefusedError",
    "LookupFailedError",
    "LookupRefusedError",
    "LoreError",
    "NotFoundError",
    "NotInvitedError",
    "OwnerOnlyError",
    "PrivateChatOnlyError",
    "RateLimitedError",
    "ShareRefusedError",
    "StartupError",
    "StoreBusyError",
    "TokenRefusedError",
    "UsageError",
    "WatchRefusedError",
]

NOT_INVITED = (
    "Hi! I only talk with people the owner has invited. "
    "Ask the owner for an invite, then use it to start."
)


class LoreError(Exception):
    """Base: something the person asked for cannot be done; the message says why."""


class NotInvitedError(LoreError):
    """The identity belongs to nobody the owner invited."""

    def __init__(self, message: str = NOT_INVITED) -> None:
        super().__init__(message)


class OwnerOnlyError(LoreError):
    """Only an owner may do this."""

    def __init__(self, what: str) -> None:
        super().__init__(f"Only an owner can use {what}.")


class PrivateChatOnlyError(LoreError):
    """This shows or changes private things, so it is refused in a group chat."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} concerns your private things, so I only do it in a private chat. "
            "Ask me in a private chat (a direct message)."
        )


class UsageError(LoreError):
    """The command's arguments do not fit; the message is the usage line."""


class NotFoundError(LoreError):
    """The thing named (a document number, a request) does not exist for this person."""


class RateLimitedError(LoreError):
    """Too many attempts in a short time; try again later."""


class ChoiceExpiredError(LoreError):
    """A button whose choice is no longer held (answered, replaced or forgotten)."""


class LinkRefusedError(LoreError):
    """An account link was refused (unknown or used code, taken account, owner rule)."""


class IngestRefusedError(LoreError):
    """A source was not ingested (bad type, too big, empty, refused URL...); nothing was kept."""


class DigestError(LoreError):
    """A digest setting or request was refused (bad time, unknown timezone, group chat)."""


class WatchRefusedError(LoreError):
    """A source cannot be watched (not an owner, refused or unreadable URL); nothing was added."""


class ShareRefusedError(LoreError):
    """A private document was not published to the shared knowledge (not an owner, not theirs,
    original missing); nothing changed."""


class LookupRefusedError(LoreError):
    """A read-only lookup (an MCP tool call) was refused by a guard or by the token's reach
    (shared knowledge only); nothing was searched."""


class LookupFailedError(LoreError):
    """A read-only lookup broke on our side; the details are in the log, not the message."""


class TokenRefusedError(LoreError):
    """An MCP token was not issued (name taken, too many tokens) or not found to revoke."""


class StoreBusyError(LoreError):
    """Another Lore process (the running bot) holds the data directory."""


class StartupError(LoreError):
    """Lore cannot start: a model package is missing, the vector store or database is unusable."""


class EdgeStartError(LoreError):
    """A chat edge (Telegram, Slack, Discord, MCP) did not start: its token was refused, its
    API is unreachable or its port is taken. The message names the edge and the setting to
    change, never a secret's value."""


class BackupRefusedError(LoreError):
    """A backup was not written or not restored (target not empty, data directory in use or
    not empty, a damaged backup); the message says what to change."""
