"""The `Bot` service: the one platform-free API every edge (CLI, chat adapters, jobs) calls."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.errors import IngestRefusedError
from graphs.ingest.context import IngestContext
from graphs.ingest.errors import IngestError
from graphs.ingest.graph import IngestGraph, ingest
from graphs.ingest.repair import RepairReport, repair_index
from graphs.ingest.state import IngestProgress, IngestRequest, IngestResult
from graphs.retrieval import RetrievedPassage, Retriever
from storage.documents import Collection, DocumentRepository
from storage.ids import UserId
from storage.knowledge_index import KnowledgeIndex
from storage.users import Role, User, UserRepository

__all__ = ["Bot", "Stats"]

logger = logging.getLogger(__name__)

CONSOLE_PLATFORM = "console"


@dataclass(frozen=True, slots=True)
class Stats:
    """What `lore stats` shows."""

    users: int
    shared_documents: int
    private_documents: int
    chunks: int
    pending_chunks: int
    knowledge_points: int
    private_points: int
    embedding_model: str
    vector_engine: str


class Bot:
    """Ingest, search and maintenance for every edge; holds no platform detail."""

    def __init__(
        self,
        *,
        users: UserRepository,
        documents: DocumentRepository,
        index: KnowledgeIndex,
        retriever: Retriever,
        ingest_graph: IngestGraph,
        ingest_context: IngestContext,
        embedding_model: str,
        vector_engine: str,
    ) -> None:
        self._users = users
        self._documents = documents
        self._index = index
        self._retriever = retriever
        self._ingest_graph = ingest_graph
        self._ingest_context = ingest_context
        self._embedding_model = embedding_model
        self._vector_engine = vector_engine

    async def console_user(self, name: str, *, role: Role = Role.MEMBER) -> User:
        """The user behind a local (CLI / terminal) name, registered on first use."""
        return await self._users.register(CONSOLE_PLATFORM, name, name, role)

    async def ingest(
        self,
        request: IngestRequest,
        *,
        on_progress: Callable[[IngestProgress], None] | None = None,
    ) -> IngestResult:
        """Remember a note, file or URL; raises `IngestRefusedError` with a polite reason."""
        try:
            return await ingest(
                self._ingest_graph, request, self._ingest_context, on_progress=on_progress
            )
        except IngestError as exc:
            logger.info("Ingest refused: %s", type(exc).__name__)
            raise IngestRefusedError(str(exc)) from exc

    async def ingest_path(self, path: Path, *, owner_id: UserId | None) -> IngestResult:
        """Remember one local file."""
        return await self.ingest(IngestRequest(owner_id=owner_id, path=path))

    async def search(
        self, query: str, *, user_id: UserId | None, limit: int = 8
    ) -> list[RetrievedPassage]:
        """Ranked passages from the shared knowledge and, with a user, their private notes."""
        return await self._retriever.search(query, user_id=user_id, limit=limit)

    async def reindex(self, *, folder_min_age_seconds: float = 3600.0) -> RepairReport:
        """Re-embed pending chunks and remove orphans (the self-repair job)."""
        return await repair_index(
            self._ingest_context, folder_min_age_seconds=folder_min_age_seconds
        )

    async def stats(self) -> Stats:
        """Counts across SQLite and Qdrant."""
        counts = await self._documents.counts()
        return Stats(
            users=counts["users"],
            shared_documents=counts["shared_documents"],
            private_documents=counts["private_documents"],
            chunks=counts["chunks"],
            pending_chunks=counts["pending_chunks"],
            knowledge_points=await self._index.count(Collection.KNOWLEDGE),
            private_points=await self._index.count(Collection.PRIVATE),
            embedding_model=self._embedding_model,
            vector_engine=self._vector_engine,
        )
