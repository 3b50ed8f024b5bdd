"""What the two high-risk tools actually do, once an owner has approved: deliver a member's
message to the owners, and publish a member's private document to the shared knowledge."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.notifications import Notifiers
from graphs.ingest.formats import ExtractedText
from graphs.ingest.state import IngestRequest, IngestResult
from storage.documents import DocumentRepository
from storage.ids import DocumentId, UserId
from storage.originals import OriginalStore
from storage.users import UserRepository

__all__ = ["ApprovedActions"]

logger = logging.getLogger(__name__)


class ApprovedActions:
    """Implements `graphs.agent.context.HighRiskActions`; runs only from `await_approval`."""

    def __init__(
        self,
        *,
        users: UserRepository,
        documents: DocumentRepository,
        originals: OriginalStore,
        notifiers: Notifiers,
        owners: frozenset[tuple[str, str]],
        ingest: Callable[[IngestRequest], Awaitable[IngestResult]],
    ) -> None:
        self._users = users
        self._documents = documents
        self._originals = originals
        self._notifiers = notifiers
        self._owners = owners
        self._ingest = ingest

    async def send_to_owner(self, requester_user_id: str, message: str) -> str:
        """Deliver a member's message to every owner whose edge is running."""
        requester = await self._users.get(UserId(requester_user_id))
        name = requester.display_name if requester is not None else "a member"
        delivered = 0
        for platform, owner_id in sorted(self._owners):
            notifier = self._notifiers.for_platform(platform)
            if notifier is not None:
                await notifier.message_owner(owner_id, f"Message from {name}: {message}")
                delivered += 1
        logger.info(
            "Owner message from user %s delivered to %d edges", requester_user_id, delivered
        )
        return "delivered" if delivered else "no owner edge is running"

    async def share_document(self, requester_user_id: str, document_id: str) -> str:
        """Ingest the original of a private document again, as shared; return its title."""
        document = await self._documents.get(DocumentId(document_id))
        if document is None or document.owner_id != requester_user_id:
            raise PermissionError("Only the owner of a private document can share it")
        data = await self._originals.read(document.original_path)
        # Text a model read (OCR, a transcript) is shared as it was read, not read again.
        kept = await self._originals.read_recognised(document.original_path)
        read = None
        if kept is not None:
            read = ExtractedText(
                document.title, kept.text, kept.is_markdown, True, document.language
            )
        result = await self._ingest(
            IngestRequest(
                None,
                data=data,
                file_name=Path(document.original_path).name,
                title=document.title,
                read=read,
            )
        )
        return result.title
