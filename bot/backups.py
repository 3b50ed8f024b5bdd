"""Backups that restore (`lore backup PATH`, `lore restore PATH`).

Taken by the running core (`Backups.back_up`), a backup is consistent with the ingests and
deletions in flight: it waits until none is half-way (`Database.writes_paused`) and holds new
ones back while it copies every SQLite database (online backup API), the vector store's
files (embedded engine) and the originals. Taken from outside while another process holds
the data directory (`back_up_from_outside`), it copies the databases and originals only, and
the restore re-embeds the vectors from SQLite; so does a backup of a deployment on a Qdrant
server, whose files Lore cannot reach.

A restore (`restore_into`) copies a backup into an empty data directory that no process
holds; the core then finishes it (`Maintenance.finish_restore`): the re-index re-embeds
what has no vector and removes anything orphaned.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.errors import BackupRefusedError
from graphs.ingest.repair import RepairReport
from storage.backups import (
    UPLOADS,
    VECTORS,
    BackupError,
    Manifest,
    back_up_database,
    check_backup,
    clear_state,
    copy_folder,
    database_counts,
    database_files,
    mark_all_pending,
    prepare_target,
    read_manifest,
    rebase_originals,
    restore_files,
    state_entries,
    write_manifest,
)
from storage.data_lock import DataDirBusyError, DataDirLock
from storage.database import Database
from storage.vectors import VectorStore

__all__ = [
    "BackupLayout",
    "Backups",
    "RestoreFinished",
    "RestoreReport",
    "back_up_from_outside",
    "describe_backup",
    "describe_restore",
    "restore_into",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BackupLayout:
    """Where a deployment keeps its state, and what made its vectors."""

    data_dir: Path
    database_path: Path
    uploads_dir: Path
    embedding_model: str
    vector_engine: str


@dataclass(frozen=True, slots=True)
class RestoreFinished:
    """What finishing a restore did."""

    repair: RepairReport
    memory_points: int


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore brought back; `reembed`: the vectors are rebuilt from SQLite."""

    manifest: Manifest
    reembed: bool


def describe_backup(target: Path, manifest: Manifest) -> str:
    """The line `lore backup` prints."""
    counts = manifest.counts
    documents = counts.get("shared_documents", 0) + counts.get("private_documents", 0)
    vectors = (
        "vectors included" if manifest.vectors == "snapshot" else "vectors re-embedded on restore"
    )
    return (
        f"Backed up {documents} documents, {counts.get('chunks', 0)} chunks and "
        f"{len(manifest.databases)} databases to {target} ({vectors})."
    )


def _copy_databases(layout: BackupLayout, target: Path) -> tuple[str, ...]:
    names = []
    for database in database_files(layout.data_dir):
        back_up_database(database, target / database.name)
        names.append(database.name)
    return tuple(names)


def _manifest(
    layout: BackupLayout, target: Path, names: tuple[str, ...], now: datetime, *, vectors: bool
) -> Manifest:
    counts = database_counts(target / layout.database_path.name)
    return Manifest(
        created_at=now.isoformat(timespec="seconds"),
        embedding_model=layout.embedding_model,
        vector_engine=layout.vector_engine,
        vectors="snapshot" if vectors else "re-embed",
        databases=names,
        counts=counts,
        uploads_dir=str(layout.uploads_dir),
    )


class Backups:
    """Backups taken by the process that holds the data directory (the running bot)."""

    def __init__(
        self,
        *,
        layout: BackupLayout,
        database: Database,
        store: VectorStore,
        clock: Callable[[], datetime],
    ) -> None:
        self._layout = layout
        self._database = database
        self._store = store
        self._clock = clock

    async def back_up(self, target: Path) -> Manifest:
        """Write a consistent snapshot into `target` (a new or empty folder)."""
        with _refusals(target):
            return await self._back_up(target)

    async def _back_up(self, target: Path) -> Manifest:
        layout = self._layout
        _outside_data_dir(layout, target)
        await asyncio.to_thread(prepare_target, target)
        async with self._database.writes_paused():
            names = await asyncio.to_thread(_copy_databases, layout, target)
            vectors = await self._store.snapshot(target / VECTORS)
            await asyncio.to_thread(copy_folder, layout.uploads_dir, target / UPLOADS)
        manifest = await asyncio.to_thread(
            _manifest, layout, target, names, self._clock(), vectors=vectors
        )
        await asyncio.to_thread(write_manifest, target, manifest)
        logger.info("Backup written to %s (%s)", target, manifest.vectors)
        return manifest


def _outside(layout: BackupLayout, target: Path, now: datetime) -> Manifest:
    _outside_data_dir(layout, target)
    prepare_target(target)
    names = _copy_databases(layout, target)
    # After the databases: an original newer than them is an orphan the restore removes.
    copy_folder(layout.uploads_dir, target / UPLOADS)
    manifest = _manifest(layout, target, names, now, vectors=False)
    write_manifest(target, manifest)
    return manifest


async def back_up_from_outside(layout: BackupLayout, target: Path, now: datetime) -> Manifest:
    """A backup taken beside a running bot: databases (online backup) and originals; the
    restore re-embeds the vectors."""
    with _refusals(target):
        return await asyncio.to_thread(_outside, layout, target, now)


def _outside_data_dir(layout: BackupLayout, folder: Path) -> None:
    if folder.resolve().is_relative_to(layout.data_dir.resolve()):
        raise BackupError(
            f"{folder} is inside the data directory {layout.data_dir}: keep backups outside "
            "DATA_DIR (a restore replaces what it holds)."
        )


def _restore(layout: BackupLayout, backup: Path, *, force: bool) -> RestoreReport:
    _outside_data_dir(layout, backup)
    manifest = read_manifest(backup)
    check_backup(backup, manifest, layout.database_path.name)
    data_dir = layout.data_dir
    lock = DataDirLock(data_dir)
    try:
        lock.acquire()
    except DataDirBusyError as exc:
        raise BackupError(f"Nothing was restored: {exc}") from exc
    try:
        present = state_entries(data_dir)
        if present and not force:
            raise BackupError(
                f"Nothing was restored: the data directory {data_dir} is not empty "
                f"({', '.join(present)}). Restore into an empty DATA_DIR, or add --force to "
                "replace what is there."
            )
        clear_state(data_dir)
        same_model = manifest.embedding_model == layout.embedding_model
        vectors = manifest.vectors == "snapshot" and same_model
        vectors = vectors and layout.vector_engine == manifest.vector_engine
        restore_files(backup, manifest, data_dir, layout.uploads_dir, vectors=vectors)
        database = data_dir / layout.database_path.name
        rebase_originals(database, manifest.uploads_dir, layout.uploads_dir)
        if not vectors:
            mark_all_pending(database)
    finally:
        lock.release()
    return RestoreReport(manifest, reembed=not vectors)


async def restore_into(layout: BackupLayout, backup: Path, *, force: bool) -> RestoreReport:
    """Copy a backup into the data directory: it must be empty (or `force`) and no process
    may hold it. The core must then run `Maintenance.finish_restore`."""
    with _refusals(backup):
        return await asyncio.to_thread(_restore, layout, backup, force=force)


def describe_restore(backup: Path, report: RestoreReport, finished: RestoreFinished) -> str:
    """The line `lore restore` prints."""
    counts, repair = report.manifest.counts, finished.repair
    documents = counts.get("shared_documents", 0) + counts.get("private_documents", 0)
    return (
        f"Restored {documents} documents and {counts.get('chunks', 0)} chunks from {backup} "
        f"(taken {report.manifest.created_at}); re-embedded {repair.reembedded_chunks} chunks, "
        f"removed {repair.removed_orphan_points} orphan points and "
        f"{repair.removed_orphan_folders} orphan folders."
    )


@contextmanager
def _refusals(path: Path) -> Iterator[None]:
    """Storage's refusals and file errors as the message a person sees."""
    try:
        yield
    except BackupError as exc:
        raise BackupRefusedError(str(exc)) from exc
    except OSError as exc:
        where = exc.filename or path
        raise BackupRefusedError(f"Backup or restore failed at {where}: {exc.strerror}.") from exc
