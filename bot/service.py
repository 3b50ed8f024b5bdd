"""The `Bot` service: the one platform-free front door every edge (terminal, chat platforms,
MCP, CLI) calls.

Every method that acts for a person takes their `Identity` (and the chat where it matters)
and authorises inside: no method trusts an edge with a permission. Replies are typed
(`bot.replies`), failures are `LoreError`s with polite messages. The jobs the process
itself runs (the scheduler, start-up) are on `Bot.maintenance`: they take no identity.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import date

from bot.approvals import ApprovalDecision
from bot.commands import Command, CommandCall, CommandServices
from bot.digests import parse_timezone
from bot.errors import DigestError, NotFoundError
from bot.events import ChatEvent, ChatRef, Identity, TurnEvent
from bot.knowledge import ProgressSink
from bot.lookups import LookupResult
from bot.maintenance import Maintenance
from bot.messages import Messages
from bot.notifications import Notifier
from bot.parts import BotParts
from bot.people import LOCAL_PLATFORM
from bot.replies import ApprovalCards, InviteCreated, Message, Reply, ScopeQuestion, rich
from bot.reports import BudgetReport
from bot.sources import IncomingSource, Source
from bot.voice import IncomingVoice, Voice, VoiceAction
from bot.watching import WatchAdded
from graphs.ingest.state import IngestResult
from graphs.retrieval import RetrievedPassage
from storage.digests import DigestSchedule
from storage.documents import DocumentRecord
from storage.ids import TurnId
from storage.link_codes import LinkCode
from storage.mcp_tokens import IssuedToken
from storage.turns import UnansweredQuestion
from storage.users import Role, User
from storage.watched_sources import WatchedSource

__all__ = ["Bot"]

logger = logging.getLogger(__name__)


class Bot:
    """Lore's behaviour for every edge; holds no platform detail."""

    def __init__(self, parts: BotParts) -> None:
        self._parts = parts
        self._people = parts.people
        self._knowledge = parts.knowledge
        self._maintenance = Maintenance(parts)
        self._messages = Messages(
            conversations=parts.conversations, knowledge=parts.knowledge, people=parts.people
        )
        self._voice = Voice(
            knowledge=parts.knowledge,
            messages=self._messages,
            people=parts.people,
            max_audio_seconds=parts.ingest_context.limits.max_audio_seconds,
        )
        self._services = CommandServices(
            knowledge=parts.knowledge,
            forgetting=parts.forgetting,
            accounts=parts.accounts,
            approvals=parts.approvals,
            conversations=parts.conversations,
            digests=parts.digests,
            watching=parts.watching,
            reports=parts.reports,
            tokens=parts.tokens,
        )

    # -- edges: wiring -----------------------------------------------------------------------

    @property
    def maintenance(self) -> Maintenance:
        """The jobs the process itself runs (the scheduler, start-up, the CLI's repairs)."""
        return self._maintenance

    def register_notifier(self, platform: str, notifier: Notifier) -> None:
        """An edge announces how to reach people on its platform."""
        self._parts.notifiers.register(platform, notifier)

    def commands(self, *, owner: bool, local: bool = False) -> list[Command]:
        """The commands a person may run (an edge's menu): owners see theirs too."""
        return [c for c in self._parts.commands.available(owner=owner, local=local) if c.in_menu]

    async def user_for(self, identity: Identity) -> User | None:
        """Who an identity is (configured owners register on first sight); None: nobody."""
        return await self._people.find(identity)

    def is_configured_owner(self, identity: Identity) -> bool:
        """Whether settings make this identity an owner (for owner-only menus)."""
        return self._people.is_configured_owner(identity)

    # -- edges: a person talks ---------------------------------------------------------------

    def handle_message(
        self, identity: Identity, chat: ChatRef, text: str
    ) -> AsyncIterator[TurnEvent]:
        """Answer one message, or keep it when it asks to be remembered (`bot.messages`);
        stream its turn events (strangers get one refusal)."""
        return self._messages.handle(identity, chat, text)

    async def voice_message(
        self, identity: Identity, chat: ChatRef, voice: IncomingVoice, download_limit: int
    ) -> VoiceAction:
        """A voice message arrived: ignore it, listen to it, or keep it (`bot.voice`);
        refusals (too big, too long, a stranger) are `LoreError`s."""
        return await self._voice.plan(identity, chat, voice, download_limit)

    def hear(
        self, identity: Identity, chat: ChatRef, voice: IncomingVoice, data: bytes
    ) -> AsyncIterator[ChatEvent]:
        """Transcribe a downloaded voice message, then handle its words as if typed."""
        return self._voice.hear(identity, chat, voice, data)

    async def run_command(
        self,
        identity: Identity,
        chat: ChatRef,
        name: str,
        args: str = "",
        *,
        prefix: str = "/",
        progress: ProgressSink | None = None,
    ) -> Reply | None:
        """Run a chat command if this person may, here; None when the command's effect is
        its own answer (a digest sent now)."""
        call = await self._call(identity, chat, args, prefix, progress)
        return await self._parts.commands.run(call, name)

    async def confirm(
        self, identity: Identity, chat: ChatRef, action: str, yes: bool, *, prefix: str = "/"
    ) -> Reply:
        """The Yes / No of a `Confirmation` a command asked."""
        call = await self._call(identity, chat, "", prefix, None)
        return await self._parts.commands.confirm(call, action, yes)

    async def _call(
        self,
        identity: Identity,
        chat: ChatRef,
        args: str,
        prefix: str,
        progress: ProgressSink | None,
    ) -> CommandCall:
        caller = await self._people.find(identity)
        return CommandCall(
            self._services,
            self._parts.commands,
            identity,
            chat,
            args,
            caller,
            prefix,
            progress,
        )

    async def decide_approval(
        self, identity: Identity, approval_id: str, *, approve: bool
    ) -> ApprovalDecision:
        """An owner's Approve / Reject tap."""
        return await self._parts.approvals.decide(identity, approval_id, approve)

    async def record_feedback(self, identity: Identity, turn_id: str, value: int) -> Message:
        """A 👍 (+1) or 👎 (-1) on an answer, by the person it answered."""
        user = await self._people.find(identity)
        recorded = (
            user is not None
            and value in (1, -1)
            and await self._parts.turns.set_feedback(TurnId(turn_id), user.id, value)
        )
        return Message(rich("Thanks for the feedback!" if recorded else "I could not record that."))

    async def offer_source(
        self, identity: Identity, chat: ChatRef, incoming: IncomingSource, download_limit: int
    ) -> ScopeQuestion | None:
        """A file, link or forwarded message arrived: None to save it privately now, or the
        Private/Shared question for an owner; refusals are `LoreError`s."""
        return await self._knowledge.offer(identity, chat, incoming, download_limit)

    def received(self, incoming: IncomingSource | None = None) -> str:
        """The first status line while `incoming` is saved ("📥 Received, working on it…"),
        in its language; without one (a command that takes long), in `LANGUAGE`."""
        return self._knowledge.received(incoming)

    async def choose_scope(self, identity: Identity, key: str) -> IncomingSource:
        """The owner's Private/Shared tap: the source waiting under `key`."""
        return await self._knowledge.choose(identity, key)

    async def save_source(
        self,
        identity: Identity,
        incoming: IncomingSource,
        *,
        shared: bool = False,
        data: bytes | None = None,
        download_limit: int | None = None,
        on_progress: ProgressSink | None = None,
    ) -> Message:
        """Save a chat source (a file's bytes downloaded by the edge); the final status."""
        return await self._knowledge.save(
            identity,
            incoming,
            shared=shared,
            data=data,
            download_limit=download_limit,
            on_progress=on_progress,
        )

    # -- knowledge ---------------------------------------------------------------------------

    async def ingest(
        self,
        identity: Identity,
        source: Source,
        *,
        shared: bool = False,
        on_progress: ProgressSink | None = None,
    ) -> IngestResult:
        """Remember a source privately, or (owners) in the shared knowledge; raises
        `IngestRefusedError` with a polite reason."""
        return await self._knowledge.ingest(
            identity, source, shared=shared, on_progress=on_progress
        )

    async def search(
        self, identity: Identity, query: str, *, limit: int = 8, private: bool = True
    ) -> list[RetrievedPassage]:
        """Ranked passages from the shared knowledge and the caller's private notes."""
        return await self._knowledge.search(identity, query, limit=limit, private=private)

    async def sources(self, identity: Identity) -> list[DocumentRecord]:
        """The caller's private documents, newest first."""
        return await self._knowledge.sources(identity)

    async def forget(self, identity: Identity) -> int:
        """Delete every private document of the caller and what their chats left behind."""
        return await self._parts.forgetting.forget_all(identity)

    async def document(self, identity: Identity, handle: str) -> DocumentRecord:
        """The document a handle from /sources names: the caller's own, or (owners) a shared
        one. Raises `NotFoundError` for an unknown or ambiguous handle."""
        return await self._knowledge.document(identity, handle, include_shared=True)

    async def delete_document(self, identity: Identity, handle: str) -> str:
        """Delete one document everywhere (after the caller confirmed); its title. Members
        delete their own private documents, owners also shared ones."""
        document = await self.document(identity, handle)
        return await self._parts.forgetting.forget_document(identity, document)

    async def share_document(self, identity: Identity, document_id: str) -> str:
        """An owner publishes one of their private documents to the shared knowledge."""
        return await self._knowledge.share(identity, document_id)

    async def pin(self, identity: Identity, document_id: str, *, pinned: bool = True) -> bool:
        """An owner pins a shared document into every system prompt."""
        return await self._knowledge.pin(identity, document_id, pinned=pinned)

    async def local_member(self, identity: Identity, name: str, *, create: bool) -> Identity:
        """The terminal identity `name` (an owner acting for a local member, e.g. `lore ingest
        --user NAME`); registered when `create`, else it must exist."""
        await self._people.owner(identity, "--user")
        member = Identity(LOCAL_PLATFORM, name, name)
        if await self._people.find(member) is None:
            if not create:
                raise NotFoundError(f"Nobody called {name!r} is registered here.")
            await self._parts.users.register(LOCAL_PLATFORM, name, name, Role.MEMBER)
        return member

    # -- other agents (MCP): tokens and read-only lookups ------------------------------------

    async def mcp_identity(self, token: str) -> Identity | None:
        """The identity a presented MCP bearer token stands for; None: wrong or revoked."""
        return await self._parts.tokens.identity_for(token)

    async def create_mcp_token(
        self, identity: Identity, name: str, *, shared_only: bool = False
    ) -> IssuedToken:
        """A new MCP token for the caller (a member), shown once (`/mcp token` does this in a
        chat, `lore mcp-token` at the terminal)."""
        return await self._parts.tokens.issue(identity, name, shared_only=shared_only)

    async def search_knowledge(
        self, identity: Identity, query: str, *, limit: int = 5
    ) -> LookupResult:
        """A lookup in the shared knowledge (guarded, rate-limited and logged like a turn)."""
        return await self._parts.lookups.search_knowledge(identity, query, limit=limit)

    async def search_private(
        self, identity: Identity, query: str, *, limit: int = 5
    ) -> LookupResult:
        """A lookup in the caller's private notes only."""
        return await self._parts.lookups.search_private(identity, query, limit=limit)

    async def search_memory(
        self,
        identity: Identity,
        query: str,
        day_from: date | None = None,
        day_to: date | None = None,
    ) -> LookupResult:
        """A lookup in the caller's past conversations (conversation memory)."""
        return await self._parts.lookups.search_memory(identity, query, day_from, day_to)

    async def get_entry(self, identity: Identity, document_id: str) -> LookupResult:
        """One document, whole: a shared one or the caller's own; else `NotFoundError`."""
        return await self._parts.lookups.get_entry(identity, document_id)

    # -- settings of a person ----------------------------------------------------------------

    async def set_timezone(self, identity: Identity, timezone: str) -> bool:
        """Store the caller's timezone (IANA name); False if the name is unknown."""
        user = await self._people.member(identity)
        try:
            parse_timezone(timezone)
        except DigestError:
            return False
        await self._parts.users.set_timezone(user.id, timezone)
        return True

    async def set_digest(
        self,
        identity: Identity,
        chat: ChatRef,
        local_time: str,
        timezone: str,
        *,
        quiet_days: bool = False,
    ) -> DigestSchedule:
        """A morning digest at `local_time` in `timezone`, into this private chat."""
        user = await self._digest_user(identity)
        return await self._parts.digests.set(
            user, chat, local_time, timezone, quiet_days=quiet_days
        )

    async def digest_off(self, identity: Identity) -> bool:
        """Stop the morning digest; False if it was not on."""
        return await self._parts.digests.off(await self._digest_user(identity))

    async def digest_now(self, identity: Identity, chat: ChatRef) -> str:
        """Send a digest into this chat now; the platform's message id."""
        return await self._parts.digests.now(await self._digest_user(identity), chat)

    async def _digest_user(self, identity: Identity) -> User:
        user = await self._people.find(identity)
        if user is None:
            raise DigestError("I only send digests to people the owner has invited.")
        return user

    # -- accounts ----------------------------------------------------------------------------

    async def create_invite(self, identity: Identity) -> InviteCreated:
        """A one-use member invite (owners only)."""
        return await self._parts.accounts.create_invite(identity)

    async def redeem_invite(self, identity: Identity, code: str) -> User:
        """Join with an invite code (someone registered just gets their user back)."""
        user, _ = await self._parts.accounts.redeem_invite(identity, code)
        return user

    async def create_link_code(self, identity: Identity) -> LinkCode:
        """A one-time code that links another chat account to the caller."""
        return await self._parts.accounts.create_link_code(identity)

    async def link_identity(self, identity: Identity, code: str) -> str:
        """Make `identity` another account of the code's person; what to tell them."""
        return await self._parts.accounts.link_identity(identity, code)

    # -- owners ------------------------------------------------------------------------------

    async def watch(self, identity: Identity, url: str) -> WatchAdded:
        """An owner watches a feed or page (fetched once now)."""
        return await self._parts.watching.watch(await self._people.find(identity), url)

    async def unwatch(self, identity: Identity, url_or_id: str) -> WatchedSource | None:
        """An owner stops watching a source (by number or URL); None if there is none."""
        return await self._parts.watching.unwatch(await self._people.find(identity), url_or_id)

    async def watches(self, identity: Identity) -> list[WatchedSource]:
        """Every watched source, oldest first (owners only)."""
        return await self._parts.watching.watches(await self._people.find(identity))

    async def budget_report(self, identity: Identity) -> BudgetReport:
        """Today's spend against the cap (owners only)."""
        return await self._parts.reports.budget(identity)

    async def unanswered(self, identity: Identity) -> list[UnansweredQuestion]:
        """Questions the knowledge could not answer (owners only)."""
        return await self._parts.reports.unanswered(identity)

    async def pending_approvals(self, identity: Identity) -> ApprovalCards:
        """Requests waiting for a decision, as cards (owners only)."""
        return await self._parts.approvals.cards(identity, "/approvals")
