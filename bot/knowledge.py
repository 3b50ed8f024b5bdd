"""The knowledge a person may reach: ingest into their private notes (owners: also the shared
knowledge), search, list, delete and share — each call authorised from the caller's identity.

Sources sent in a chat follow the rules of `bot.sources`: members save privately, owners
choose Private or Shared, only owners save from a group chat, files are size-checked before
any download, and local paths are read only for the person at this machine's terminal.
"""

from __future__ import annotations

import logging

from bot.actions import ApprovedActions
from bot.errors import IngestRefusedError, NotFoundError, ShareRefusedError
from bot.events import ChatRef, Identity
from bot.ingest_queue import IngestQueue, ProgressSink
from bot.people import LOCAL_PLATFORM, People
from bot.replies import Message, ScopeQuestion, bold, rich
from bot.source_words import source_words, text_language
from bot.sources import IncomingSource, PendingChoices, Source, saved_message, too_big
from graphs.guards.doors import Door, check_door_text
from graphs.ingest.context import IngestContext
from graphs.ingest.errors import IngestError
from graphs.ingest.formats import ExtractedText, SourceFormat, detect_format
from graphs.ingest.graph import IngestGraph, ingest
from graphs.ingest.reading_progress import reading_progress
from graphs.ingest.state import IngestProgress, IngestRequest, IngestResult
from graphs.retrieval import RetrievedPassage, Retriever
from storage.document_records import HANDLE_LENGTH
from storage.documents import DocumentRecord, DocumentRepository
from storage.ids import DocumentId, UserId
from storage.incidents import IncidentRepository
from storage.users import Role, User

__all__ = ["Knowledge", "ProgressSink", "looks_like_handle"]

logger = logging.getLogger(__name__)

GROUP_SOURCES = "In group chats I only save what an owner sends. Send it to me privately."
CHOICE_EXPIRED = "That choice has expired; please send it again."
NOT_YOUR_CHOICE = "Only the person who sent it can choose."
# Shorter handles would name several documents at once too often.
MIN_HANDLE_LENGTH = 4


def looks_like_handle(text: str) -> bool:
    """A document handle (or a whole id): 4 to 32 hexadecimal characters."""
    word = text.strip().lower()
    return MIN_HANDLE_LENGTH <= len(word) <= 32 and all(c in "0123456789abcdef" for c in word)


class Knowledge:
    """Ingest, search and the documents of one person."""

    def __init__(
        self,
        *,
        people: People,
        documents: DocumentRepository,
        retriever: Retriever,
        ingest_graph: IngestGraph,
        ingest_context: IngestContext,
        actions: ApprovedActions,
        pending: PendingChoices,
        incidents: IncidentRepository,
        language: str = "en",
    ) -> None:
        self._incidents = incidents
        self._language = language
        self._people = people
        self._documents = documents
        self._retriever = retriever
        self._graph = ingest_graph
        self._context = ingest_context
        self._actions = actions
        self._pending = pending
        self._queue = IngestQueue()

    @property
    def max_file_bytes(self) -> int:
        """The largest file Lore takes."""
        return self._context.limits.max_file_bytes

    async def _target(self, identity: Identity, source: Source, *, shared: bool) -> User:
        user = await self._people.member(identity)
        if shared and user.role is not Role.OWNER:
            raise IngestRefusedError("Only an owner can add to the shared knowledge.")
        if source.path is not None and identity.platform != LOCAL_PLATFORM:
            raise IngestRefusedError("Files on this machine can only be added from its terminal.")
        return user

    async def ingest(
        self,
        identity: Identity,
        source: Source,
        *,
        shared: bool = False,
        on_progress: ProgressSink | None = None,
    ) -> IngestResult:
        """Remember a source in the caller's private notes, or (owners) the shared knowledge;
        raises `IngestRefusedError` with a polite reason and keeps nothing. A person's sources
        are saved one at a time, in the order sent: a source that waits is told its place
        through `on_progress` (`bot.ingest_queue`)."""
        user = await self._target(identity, source, shared=shared)
        owner_id = None if shared else user.id
        return await self._queue.run(
            user.id, lambda: self._ingest(owner_id, source, on_progress), on_progress
        )

    async def transcribe(
        self,
        identity: Identity,
        data: bytes,
        file_name: str,
        *,
        on_progress: ProgressSink | None = None,
    ) -> ExtractedText:
        """What a recording a member sent says (a voice question), transcribed in a limited
        worker like any recording Lore keeps, in the member's line of heavy jobs (their
        ingests); nothing is stored. `IngestRefusedError` with a polite reason when it is too
        big, too long, broken or silent."""
        user = await self._people.member(identity)
        too_large = too_big(len(data), self.max_file_bytes)
        if too_large is not None:
            raise IngestRefusedError(too_large)
        return await self._queue.run(
            user.id, lambda: self._transcribe(data, file_name, on_progress), on_progress
        )

    async def _transcribe(
        self, data: bytes, file_name: str, on_progress: ProgressSink | None
    ) -> ExtractedText:
        try:
            if detect_format(file_name, None, data[:2048]) is not SourceFormat.AUDIO:
                raise IngestRefusedError("That is not a recording I can transcribe.")
            return await self._context.extractor.extract(
                data,
                SourceFormat.AUDIO,
                filename=file_name,
                charset=None,
                max_decompressed_bytes=self._context.limits.max_decompressed_bytes,
                on_step=lambda step: _report(on_progress, reading_progress(step)),
            )
        except IngestError as exc:
            logger.info("Transcription refused: %s", type(exc).__name__)
            raise IngestRefusedError(str(exc)) from exc

    async def ingest_shared(self, source: Source) -> IngestResult:
        """The process itself adds to the shared knowledge (the operator's sample folder)."""
        return await self._queue.run("", lambda: self._ingest(None, source, None), None)

    async def _ingest(
        self, owner_id: UserId | None, source: Source, on_progress: ProgressSink | None
    ) -> IngestResult:
        request = IngestRequest(
            owner_id,
            text=source.text,
            path=source.path,
            data=source.data,
            url=source.url,
            file_name=source.file_name,
            title=source.title,
            read=source.read,
        )

        try:
            return await ingest(
                self._graph,
                request,
                self._context,
                on_progress=lambda step: _report(on_progress, step),
            )
        except IngestError as exc:
            logger.info("Ingest refused: %s", type(exc).__name__)
            raise IngestRefusedError(str(exc)) from exc

    async def offer(
        self, identity: Identity, chat: ChatRef, incoming: IncomingSource, download_limit: int
    ) -> ScopeQuestion | None:
        """A source arrived in a chat: None to save it privately now; for an owner, the
        Private/Shared question. Refuses strangers, members in groups and oversized files
        (before anything is downloaded)."""
        user = await self._people.member(identity)
        owner = user.role is Role.OWNER
        if chat.is_group and not owner:
            raise IngestRefusedError(GROUP_SOURCES)
        refusal = too_big(incoming.size, min(download_limit, self.max_file_bytes))
        if refusal is not None:
            raise IngestRefusedError(refusal)
        # Payment data in a caption, a note or a forwarded message: refused before a file is
        # downloaded or an owner's choice is kept (text that is only flagged is recorded
        # when it is saved).
        for text, door in incoming.guarded_texts():
            refused = await self._check_door(identity, text, door, record_flag=False)
            if refused is not None:
                raise IngestRefusedError(refused)
        if not owner:
            return None
        key = self._pending.put(user.id, incoming)
        return ScopeQuestion(key, rich("Where should I keep ", bold(incoming.label), "?"))

    def received(self, incoming: IncomingSource | None = None) -> str:
        """The first status line of a source being saved, in its language (`LANGUAGE` for
        one that brings no words, or for a command)."""
        return source_words(self._source_language(incoming)).received

    def _source_language(self, incoming: IncomingSource | None) -> str:
        return text_language(incoming.words if incoming else (), self._language)

    async def choose(self, identity: Identity, key: str) -> IncomingSource:
        """The owner tapped Private or Shared: the source waiting under `key` (taken)."""
        user = await self._people.member(identity)
        choice = self._pending.peek(key)
        if choice is None:
            raise NotFoundError(CHOICE_EXPIRED)
        if choice.user_id != user.id:
            raise NotFoundError(NOT_YOUR_CHOICE)
        self._pending.take(key)
        return choice.source

    async def save(
        self,
        identity: Identity,
        incoming: IncomingSource,
        *,
        shared: bool,
        data: bytes | None = None,
        download_limit: int | None = None,
        on_progress: ProgressSink | None = None,
    ) -> Message:
        """Save a chat source (with the file's bytes the edge downloaded); the final status
        the person reads, a refusal included."""
        if data is not None:
            too_large = too_big(len(data), min(download_limit or len(data), self.max_file_bytes))
            if too_large is not None:
                return Message(rich(too_large))
        for text, door in incoming.guarded_texts():
            refused = await self._check_door(identity, text, door)
            if refused is not None:
                return Message(rich(refused))
        try:
            result = await self.ingest(
                identity, incoming.with_data(data), shared=shared, on_progress=on_progress
            )
        except IngestRefusedError as exc:
            return Message(rich(f"🚫 {exc}"))
        return saved_message(result, shared=shared, language=self._source_language(incoming))

    async def _check_door(
        self, identity: Identity, text: str, door: Door, *, record_flag: bool = True
    ) -> str | None:
        """A note, a forwarded message or a caption: payment data is refused and kept nowhere
        (the refusal the person reads); text that reads like instructions to an AI is saved
        (its chunks carry the score) but recorded as an incident."""
        verdict = check_door_text(text, door)
        if verdict.allowed and (not verdict.hardened or not record_flag):
            return None
        user = await self._people.find(identity)
        await self._incidents.record_guard(
            guard=verdict.guard or "guard",
            reason=verdict.reason or "",
            platform=identity.platform,
            chat_id=identity.platform_user_id,
            user_id=user.id if user is not None else None,
        )
        if verdict.allowed:
            return None
        logger.info("A %s was not saved: %s", door, verdict.guard)
        return f"🚫 {verdict.user_message}"

    async def search(
        self, identity: Identity, query: str, *, limit: int = 8, private: bool = True
    ) -> list[RetrievedPassage]:
        """Ranked passages from the shared knowledge and, unless `private` is off, the
        caller's private notes."""
        user = await self._people.member(identity)
        return await self._retriever.search(
            query, user_id=user.id if private else None, limit=limit
        )

    async def sources(self, identity: Identity) -> list[DocumentRecord]:
        """The caller's private documents, newest first (/sources)."""
        user = await self._people.member(identity)
        return await self._documents.list_for_owner(user.id)

    async def shared_sources(self, identity: Identity) -> list[DocumentRecord]:
        """The shared knowledge's documents, newest first (owners only: /sources)."""
        await self._people.owner(identity, "the shared documents list")
        return await self._documents.list_for_owner(None)

    async def document(
        self, identity: Identity, handle: str, *, include_shared: bool = False
    ) -> DocumentRecord:
        """The caller's private document named by `handle` (its id, or the start of it as
        /sources shows it); with `include_shared`, an owner's handle may also name a shared
        document. Raises `NotFoundError` for an unknown or ambiguous handle."""
        user = await self._people.member(identity)
        owners: list[UserId | None] = [user.id]
        if include_shared and user.role is Role.OWNER:
            owners.append(None)
        wanted = handle.strip().lower()
        if not looks_like_handle(wanted):
            raise NotFoundError(
                f"{handle.strip()!r} is not a document handle: use the {HANDLE_LENGTH}-character "
                "handle shown in /sources."
            )
        found = await self._documents.with_prefix(wanted, owners)
        if not found:
            raise NotFoundError(f"No document of yours has the handle {handle.strip()!r}.")
        if len(found) > 1:
            names = ", ".join(f"{doc.id[: len(wanted) + 4]} ({doc.title})" for doc in found)
            raise NotFoundError(
                f"Several documents start with {wanted!r}: {names}. Add characters to choose one."
            )
        return found[0]

    async def share(self, identity: Identity, document_id: str) -> str:
        """An owner publishes one of their private documents to the shared knowledge (the
        private copy stays); its title. Raises `ShareRefusedError`."""
        user = await self._people.member(identity)
        if user.role is not Role.OWNER:
            raise ShareRefusedError("Only an owner can add documents to the shared knowledge.")
        try:
            title = await self._actions.share_document(user.id, document_id)
        except PermissionError as exc:
            raise ShareRefusedError("That is not one of your private documents.") from exc
        except OSError as exc:
            logger.warning("Share of document %s: original unreadable: %s", document_id, exc)
            raise ShareRefusedError("I no longer have the original of that document.") from exc
        except IngestError as exc:
            raise ShareRefusedError(str(exc)) from exc
        logger.info("Owner %s shared document %s", user.id, document_id)
        return title

    async def pin(self, identity: Identity, document_id: str, *, pinned: bool = True) -> bool:
        """An owner pins a shared document into every system prompt; False if there is none."""
        await self._people.owner(identity, "pinning")
        return await self._documents.set_pinned(DocumentId(document_id), pinned)


def _report(sink: ProgressSink | None, step: IngestProgress) -> None:
    """An ingest or transcription step as the status line a person reads."""
    if sink is not None:
        sink(f"{step.icon} {step.message}")
