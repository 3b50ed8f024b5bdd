"""The jobs the process itself runs, with no person behind them: the scheduler's jobs
(approval expiry, digests, watched sources, memory, repair, housekeeping), start-up work
(approval recovery, the operator's sample folder) and the counts `lore stats` prints. No
method takes an identity, so none is offered to a chat edge."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from bot.backups import RestoreFinished
from bot.digests import DigestRun
from bot.memory import MemoryReport
from bot.reports import Stats
from bot.sources import Source
from bot.watching import ScanReport
from graphs.ingest.rechunk import RechunkReport, rechunk_all
from graphs.ingest.repair import RepairReport, reembed_all, repair_index
from graphs.ingest.state import IngestResult
from storage.backups import Manifest

if TYPE_CHECKING:
    from bot.parts import BotParts

__all__ = ["Maintenance", "ReindexAll"]

# Conversation memory rebuilt after a restore covers every exchange ever logged.
ALL_OF_TIME = timedelta(days=365 * 100)


@dataclass(frozen=True, slots=True)
class ReindexAll:
    """What `Maintenance.reindex_all` rebuilt (`rechunked`: None when nothing was cut again)."""

    chunks: int
    memory_exchanges: int
    rechunked: RechunkReport | None = None


class Maintenance:
    """The process acting on its own."""

    def __init__(self, parts: BotParts) -> None:
        self._parts = parts

    async def stats(self) -> Stats:
        """Counts across SQLite and Qdrant (aggregates only: `lore stats`, start-up)."""
        return await self._parts.reports.stats()

    async def housekeeping(self, now: datetime) -> int:
        """Forget counted attempts older than any limit's window; how many."""
        return await self._parts.limits.prune(now)

    async def recover_approvals(self) -> int:
        """At start: open the waiting thread of every request whose wait never began."""
        return await self._parts.approvals.recover()

    async def expire_approvals(self, now: datetime | None = None) -> list[str]:
        """Auto-reject requests overdue at `now` (default: the clock); requester and owners are
        told. The ids of the expired requests."""
        expired = await self._parts.approvals.expire(now or self._parts.clock())
        return [approval.id for approval in expired]

    async def send_due_digests(self, now: datetime) -> DigestRun:
        """Send every digest due at `now`."""
        return await self._parts.digests.send_due(now)

    async def scan_watched_sources(self, now: datetime) -> ScanReport:
        """Take what is new from every due watched source."""
        return await self._parts.watching.scan(now)

    async def build_memory(self, now: datetime) -> MemoryReport:
        """Embed the recent answered exchanges into conversation memory (idempotent)."""
        return await self._parts.memory.build(now)

    async def load_shared(self, source: Source) -> IngestResult:
        """Start-up: the operator's sample folder (SAMPLE_DOCS_DIR) into the shared knowledge."""
        return await self._parts.knowledge.ingest_shared(source)

    async def backup(self, target: Path) -> Manifest:
        """A consistent snapshot of the data directory into `target` (`lore backup`)."""
        return await self._parts.backups.back_up(target)

    async def finish_restore(self, *, reembed: bool) -> RestoreFinished:
        """After `bot.backups.restore_into`: re-embed what has no vector (everything, when the
        backup held no vectors), remove what is orphaned, rebuild conversation memory."""
        repair = await self.reindex(folder_min_age_seconds=0)
        memory = 0
        if reembed:
            report = await self._parts.memory.build(self._parts.clock(), window=ALL_OF_TIME)
            memory = report.points_written
        return RestoreFinished(repair, memory)

    async def reindex_all(
        self, progress: Callable[[int], None] | None = None, *, rechunk: bool = False
    ) -> ReindexAll:
        """Rebuild every vector with the loaded model: each chunk's point, then conversation
        memory from the turn log (`lore reindex --all`). `progress(n)` after each batch of
        chunks; with `rechunk`, every document is cut again from its original with the
        current chunk settings first (`progress(1)` after each document), and only those
        that keep their chunks are re-embedded as they are."""
        context = self._parts.ingest_context
        report = None
        if rechunk:
            report = await rechunk_all(context, progress=progress)
            if report.kept:
                await reembed_all(context, only={kept.document_id for kept in report.kept})
            chunks = await context.documents.chunk_count()
        else:
            chunks = await reembed_all(context, progress=progress)
        memory = await self._parts.memory.rebuild(self._parts.clock())
        return ReindexAll(chunks=chunks, memory_exchanges=memory.points_written, rechunked=report)

    async def chunk_count(self) -> int:
        """Chunks stored in every collection (the length of `reindex_all`'s progress)."""
        return await self._parts.ingest_context.documents.chunk_count()

    async def document_count(self) -> int:
        """Documents stored in every collection (the length of a re-chunking's progress)."""
        return len(await self._parts.ingest_context.documents.document_ids())

    async def reindex(self, *, folder_min_age_seconds: float = 3600.0) -> RepairReport:
        """Re-embed pending chunks and remove orphans (the self-repair job)."""
        return await repair_index(
            self._parts.ingest_context, folder_min_age_seconds=folder_min_age_seconds
        )
