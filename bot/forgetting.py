"""Forgetting: a member's private documents go, everywhere they were copied — rows, vectors,
originals, their conversation memory, turn log and conversation checkpoints — or one
document of theirs goes with its vectors and original."""

from __future__ import annotations

import logging

from bot.errors import NotFoundError
from bot.events import Identity
from bot.memory import ConversationMemory
from bot.people import People
from graphs.agent.graph import AgentGraph, delete_conversation
from storage.documents import DocumentRecord, DocumentRepository
from storage.knowledge_index import KnowledgeIndex
from storage.originals import OriginalStore
from storage.turns import TurnRepository

__all__ = ["Forgetting"]

logger = logging.getLogger(__name__)


class Forgetting:
    """`/forget` and `/forget N`."""

    def __init__(
        self,
        *,
        people: People,
        documents: DocumentRepository,
        index: KnowledgeIndex,
        originals: OriginalStore,
        turns: TurnRepository,
        memory: ConversationMemory,
        graph: AgentGraph,
    ) -> None:
        self._people = people
        self._documents = documents
        self._index = index
        self._originals = originals
        self._turns = turns
        self._memory = memory
        self._graph = graph

    async def forget_all(self, identity: Identity) -> int:
        """Delete every private document of the caller, rows first, then vectors and
        originals; then what their conversations left: checkpoint threads, the turn log
        (what memory is rebuilt from, so a later memory run cannot bring it back) and the
        memory points. Returns how many documents went."""
        user = await self._people.member(identity)
        count = len(await self._documents.list_for_owner(user.id))
        removed = await self._documents.delete_for_owner(user.id)
        for collection, point_ids in removed:
            await self._index.delete_points(collection, point_ids)
        await self._originals.remove_owner(user.id)
        for thread_id in await self._turns.thread_ids(user.id):
            await delete_conversation(self._graph, thread_id)
        await self._turns.delete_for_user(user.id)
        await self._memory.forget(user.id)
        logger.info("Forgot %d documents of user %s", count, user.id)
        return count

    async def forget_document(self, identity: Identity, document: DocumentRecord) -> str:
        """Delete one private document of the caller everywhere; its title."""
        user = await self._people.member(identity)
        if document.owner_id != user.id:
            raise NotFoundError("That is not one of your private documents.")
        point_ids = await self._documents.delete(document.id)
        await self._index.delete_points(document.collection, point_ids)
        await self._originals.remove(user.id, document.id)
        logger.info("Forgot document %s of user %s", document.id, user.id)
        return document.title
