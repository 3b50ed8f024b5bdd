"""The command registry: every chat command's name, usage, help line, who may run it and
where, and its handler — and the one place where those rules are enforced.

An edge hands over what a person typed (`name`, the rest of the line) with their identity
and chat; the registry answers with a typed reply. A command run where it is not allowed
gets the same polite refusal on every edge. Edges also read the registry to build their
menus (Telegram's `setMyCommands`, Slack's and Discord's `/lore` subcommands).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from bot.commands.services import CommandServices
from bot.errors import LoreError, NotInvitedError, OwnerOnlyError
from bot.events import ChatRef, Identity
from bot.people import LOCAL_PLATFORM
from bot.replies import Message, Reply, rich
from storage.users import Role, User

__all__ = [
    "Access",
    "Command",
    "CommandCall",
    "CommandRegistry",
    "ConfirmHandler",
    "Place",
]

logger = logging.getLogger(__name__)


class Access(StrEnum):
    """Who may run a command."""

    ANYONE = "anyone"  # strangers too (joining, help)
    MEMBER = "member"  # anyone the owner invited, owners included
    OWNER = "owner"


class Place(StrEnum):
    """Where a command may run."""

    ANYWHERE = "anywhere"  # private chats and groups
    PRIVATE = "private"  # private chats only: it shows or changes private things
    LOCAL = "local"  # this machine's terminal only: it reads local files


@dataclass(frozen=True, slots=True)
class CommandCall:
    """One command as typed: by whom (their identity, and the user behind it if registered),
    where, the words after the name, and how this edge spells commands (`/`, `/lore `)."""

    services: CommandServices
    registry: CommandRegistry
    identity: Identity
    chat: ChatRef
    args: str
    caller: User | None
    prefix: str = "/"
    # Where a long command (a folder ingest) reports each step as it goes; None: quietly.
    progress: Callable[[str], None] | None = None

    @property
    def words(self) -> list[str]:
        """The arguments split on whitespace."""
        return self.args.split()

    @property
    def user(self) -> User:
        """The registered caller (member and owner commands only reach handlers with one)."""
        if self.caller is None:
            raise NotInvitedError
        return self.caller

    def report(self, text: str) -> None:
        """Tell the person about one step of a long command, if the edge listens."""
        if self.progress is not None:
            self.progress(text)

    def spell(self, name: str) -> str:
        """How a person types the command `name` on this edge."""
        return f"{self.prefix}{name}"


Handler = Callable[[CommandCall], Awaitable[Reply | None]]
ConfirmHandler = Callable[[CommandCall, str, bool], Awaitable[Reply]]


@dataclass(frozen=True, slots=True)
class Command:
    """A chat command: its rules, its words and its handler. `confirm` handles the Yes/No
    of a `Confirmation` the command asked (its action starts with `name:`)."""

    name: str
    usage: str
    summary: str
    access: Access
    place: Place
    run: Handler
    confirm: ConfirmHandler | None = None
    in_menu: bool = True

    def line(self, prefix: str) -> str:
        """`/name usage — summary`, for help texts."""
        usage = f" {self.usage}" if self.usage else ""
        return f"{prefix}{self.name}{usage} — {self.summary}"


def _private_only(call: CommandCall, name: str) -> Message:
    return Message(rich(f"Send {call.spell(name)} to me in a private chat."), personal=True)


class CommandRegistry:
    """The commands, by name, and their enforcement."""

    def __init__(self, commands: Iterable[Command]) -> None:
        self._commands: Mapping[str, Command] = {command.name: command for command in commands}

    def get(self, name: str) -> Command | None:
        """A command by name."""
        return self._commands.get(name)

    def available(self, *, owner: bool, local: bool) -> list[Command]:
        """The commands a person may run on an edge, in registry order (for menus and help)."""
        return [
            command
            for command in self._commands.values()
            if (owner or command.access is not Access.OWNER)
            and (local or command.place is not Place.LOCAL)
        ]

    def _refusal(self, command: Command, call: CommandCall) -> Reply | None:
        """The polite refusal when `call` may not run `command` here, else None."""
        if command.access is not Access.ANYONE and call.caller is None:
            raise NotInvitedError
        if command.access is Access.OWNER and call.user.role is not Role.OWNER:
            raise OwnerOnlyError(call.spell(command.name))
        if command.place is Place.PRIVATE and call.chat.is_group:
            return _private_only(call, command.name)
        return None

    async def run(self, call: CommandCall, name: str) -> Reply | None:
        """Run `name` for the caller if they may, here; every refusal and every `LoreError`
        the handler raises becomes a polite message."""
        command = self._commands.get(name.lower())
        local = call.identity.platform == LOCAL_PLATFORM
        if command is None or (command.place is Place.LOCAL and not local):
            return Message(rich(f"I don't know {call.spell(name)}. Try {call.spell('help')}."))
        try:
            refusal = self._refusal(command, call)
            if refusal is not None:
                return refusal
            return await command.run(call)
        except LoreError as exc:
            return Message(rich(str(exc)), personal=True)

    async def confirm(self, call: CommandCall, action: str, yes: bool) -> Reply:
        """The Yes/No of a confirmation; the rules of the command that asked apply again."""
        name, _, target = action.partition(":")
        command = self._commands.get(name)
        if command is None or command.confirm is None:
            return Message(rich("This button no longer works."), personal=True)
        try:
            refusal = self._refusal(command, call)
            if refusal is not None:
                return refusal
            return await command.confirm(call, target, yes)
        except LoreError as exc:
            return Message(rich(str(exc)), personal=True)
