"""Forgetting (invariant 10): a member's data goes everywhere it was copied — documents and
chunks, vectors, originals, conversation memory, turn log and unanswered questions,
incidents, approval requests, chat and approval checkpoint threads — and the SQLite logs
are emptied so that no deleted page survives on disk. One document of theirs goes with its
chunks, vectors and original."""

from __future__ import annotations

import logging

from bot.errors import NotFoundError, OwnerOnlyError
from bot.events import Identity
from bot.memory import ConversationMemory
from bot.people import People
from graphs.agent.graph import AgentGraph, erase_conversations
from storage.approvals import ApprovalRepository
from storage.database import Database
from storage.documents import DocumentRecord, DocumentRepository
from storage.incidents import IncidentRepository
from storage.knowledge_index import KnowledgeIndex
from storage.originals import OriginalStore
from storage.turns import TurnRepository
from storage.users import Role, User

__all__ = ["Forgetting"]

logger = logging.getLogger(__name__)


class Forgetting:
    """`/forget` and `/forget N`."""

    def __init__(
        self,
        *,
        people: People,
        database: Database,
        documents: DocumentRepository,
        index: KnowledgeIndex,
        originals: OriginalStore,
        turns: TurnRepository,
        approvals: ApprovalRepository,
        incidents: IncidentRepository,
        memory: ConversationMemory,
        graph: AgentGraph,
    ) -> None:
        self._people = people
        self._database = database
        self._documents = documents
        self._index = index
        self._originals = originals
        self._turns = turns
        self._approvals = approvals
        self._incidents = incidents
        self._memory = memory
        self._graph = graph

    async def forget_all(self, identity: Identity) -> int:
        """Delete every private document of the caller and everything their conversations
        left behind; returns how many documents went."""
        user = await self._people.member(identity)
        count = len(await self._documents.list_for_owner(user.id))
        async with self._database.writing():
            removed = await self._documents.delete_for_owner(user.id)
            for collection, point_ids in removed:
                await self._index.delete_points(collection, point_ids)
            await self._originals.remove_owner(user.id)
        await self._forget_conversations(user)
        await self._database.erase_wal()
        logger.info("Forgot %d documents and the conversations of user %s", count, user.id)
        return count

    async def _forget_conversations(self, user: User) -> None:
        """Checkpoints, approvals, incidents, then the turn log (memory is rebuilt from it,
        so it goes before the memory points: a later memory run cannot bring them back)."""
        threads = await self._turns.thread_ids(user.id)
        turn_ids = await self._turns.turn_ids(user.id)
        approval_ids = await self._approvals.delete_for_requester(user.id)
        await erase_conversations(self._graph, threads, approval_ids)
        await self._incidents.delete_for_user(user.id, turn_ids)
        await self._turns.delete_for_user(user.id)
        await self._memory.forget(user.id)

    async def forget_document(self, identity: Identity, document: DocumentRecord) -> str:
        """Delete one document everywhere (rows, chunks, vectors, original); its title. A
        member deletes only their own private documents; a shared one needs an owner."""
        user = await self._people.member(identity)
        if document.owner_id is None:
            if user.role is not Role.OWNER:
                raise OwnerOnlyError("deleting a shared document")
        elif document.owner_id != user.id:
            raise NotFoundError("That is not one of your private documents.")
        async with self._database.writing():
            point_ids = await self._documents.delete(document.id)
            await self._index.delete_points(document.collection, point_ids)
            await self._originals.remove(document.owner_id, document.id)
        await self._database.erase_wal()
        logger.info("Forgot document %s (deleted by user %s)", document.id, user.id)
        return document.title
