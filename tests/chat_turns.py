"""Driving conversations through the `Bot` facade in tests: invite members, run a turn and
read its events, and a `Notifier` that records what the core sends outside a turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.events import (
    AnswerDelta,
    ApprovalPending,
    ChatRef,
    Identity,
    RefusalEvent,
    ToolStatus,
    TurnDone,
    TurnError,
    TurnEvent,
)
from bot.service import Bot
from bot.sources import Source
from graphs.ingest.state import IngestResult
from storage.ids import UserId

__all__ = [
    "OWNER",
    "RecordingNotifier",
    "Turn",
    "ask",
    "invite",
    "local_member",
    "remember",
    "user_id",
]

#: The default owner (`OWNERS=console:owner`).
OWNER = Identity("console", "owner", "Olivia Owner")


@dataclass(frozen=True, slots=True)
class Turn:
    """Every event one message produced, in order."""

    events: tuple[TurnEvent, ...]

    @property
    def done(self) -> TurnDone:
        """The turn's end: exactly one `TurnDone`, and it comes last."""
        ends = [event for event in self.events if isinstance(event, TurnDone)]
        assert len(ends) == 1, self.events
        assert self.events[-1] is ends[0], self.events
        return ends[0]

    @property
    def streamed(self) -> str:
        """The answer text as it was streamed."""
        return "".join(event.text for event in self.events if isinstance(event, AnswerDelta))

    @property
    def refusals(self) -> list[str]:
        """The reasons of the turn's refusals."""
        return [event.reason for event in self.events if isinstance(event, RefusalEvent)]

    @property
    def approvals(self) -> list[ApprovalPending]:
        """Approval requests the turn made."""
        return [event for event in self.events if isinstance(event, ApprovalPending)]

    @property
    def errors(self) -> list[TurnError]:
        """Errors the turn reported."""
        return [event for event in self.events if isinstance(event, TurnError)]

    @property
    def tools(self) -> list[str]:
        """The tools the turn ran, by their status events."""
        return [event.tool for event in self.events if isinstance(event, ToolStatus)]


async def ask(
    bot: Bot, who: Identity, text: str, *, group: bool = False, chat_id: str | None = None
) -> Turn:
    """Send `text` from `who` in their private chat, or in a group chat; collect the events."""
    chat = ChatRef(who.platform, chat_id or ("team-room" if group else who.platform_user_id), group)
    return Turn(tuple([event async for event in bot.handle_message(who, chat, text)]))


async def invite(
    bot: Bot, name: str, *, platform: str = "telegram", owner: Identity = OWNER
) -> Identity:
    """Register a member the way people join: the owner invites, the newcomer redeems."""
    code = await bot.create_invite(owner)
    identity = Identity(platform, name, name.title())
    await bot.redeem_invite(identity, code.code)
    return identity


async def local_member(bot: Bot, name: str, *, owner: Identity = OWNER) -> Identity:
    """A member at this machine's terminal, registered by an owner (as `--user NAME`)."""
    return await bot.local_member(owner, name, create=True)


async def user_id(bot: Bot, who: Identity) -> UserId:
    """The user id behind a registered identity."""
    user = await bot.user_for(who)
    assert user is not None, who
    return user.id


async def remember(
    bot: Bot,
    who: Identity | None,
    text: str | None = None,
    *,
    owner: Identity = OWNER,
    **source: object,
) -> IngestResult:
    """Ingest a source for `who` (privately), or with `who` None into the shared knowledge
    (by `owner`)."""
    item = Source(text=text, **source)  # type: ignore[arg-type]
    if who is None:
        return await bot.ingest(owner, item, shared=True)
    return await bot.ingest(who, item)


@dataclass
class RecordingNotifier:
    """A `bot.notifications.Notifier` that keeps everything it was asked to send."""

    asked: list[tuple[str, ApprovalPending]] = field(default_factory=list)
    delivered: list[tuple[str, tuple[TurnEvent, ...]]] = field(default_factory=list)
    owner_messages: list[tuple[str, str]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)

    async def ask_owner(self, owner_platform_user_id: str, request: ApprovalPending) -> None:
        """Record an approval request shown to an owner."""
        self.asked.append((owner_platform_user_id, request))

    async def deliver(self, chat: ChatRef, events: Sequence[TurnEvent]) -> None:
        """Record a finished turn sent into a chat."""
        self.delivered.append((chat.chat_id, tuple(events)))

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """Record a plain message to an owner."""
        self.owner_messages.append((owner_platform_user_id, text))

    async def send_text(self, chat: ChatRef, text: str) -> str | None:
        """Record a plain text sent into a chat (digests, notices); its id is its number."""
        self.texts.append((chat.chat_id, text))
        return str(len(self.texts))

    def delivered_answers(self) -> list[tuple[str, str, str]]:
        """(chat, outcome, answer) of every delivered turn."""
        return [
            (chat, event.outcome, event.answer)
            for chat, events in self.delivered
            for event in events
            if isinstance(event, TurnDone)
        ]
