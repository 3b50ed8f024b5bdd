"""Backups on disk: the folder a backup writes, its manifest, and the file work of a restore.

A backup folder holds every SQLite database of the data directory (copied with SQLite's
online backup API, so a running bot may keep writing), the originals (`uploads/`), the
vector store's files when the engine is embedded (`qdrant/`), and `manifest.json`, written
last: a folder without a readable manifest is not a backup. A restore copies them back into
an empty data directory; when the backup holds no vector files (a Qdrant server, or a
backup taken from outside the running bot) or they were made with another embedding model,
every chunk is marked `pending` so that the re-index re-embeds it from SQLite.

A restore takes back only what a backup writes (`check_backup`, before anything is
copied): plain folders and files (a symbolic link could bring any host file into
`DATA_DIR`), and documents whose original lies in the backup's own `uploads/` tree, in its
owner's folder; every such path is then rebased into the new data directory
(`rebase_originals`), so no stored path points outside it. Copies are made file by file,
owner-only (`storage.private_files`), never following a link.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from storage.originals import SHARED_FOLDER
from storage.private_files import FOLDER_MODE, private_folder

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST",
    "BackupError",
    "Manifest",
    "VectorCopy",
    "back_up_database",
    "check_backup",
    "clear_state",
    "copy_folder",
    "database_counts",
    "database_files",
    "mark_all_pending",
    "prepare_target",
    "read_manifest",
    "rebase_originals",
    "restore_files",
    "state_entries",
    "write_manifest",
]

MANIFEST = "manifest.json"
FORMAT = "lore-backup"
FORMAT_VERSION = 1
UPLOADS = "uploads"
VECTORS = "qdrant"
# Not state: the lock, the model files (reinstalled from their packages) and the logs.
NOT_STATE = frozenset({"lore.lock", "models", "logs"})

#: "snapshot": the vector store's files are in the backup; "re-embed": they are not, the
#: restore rebuilds them from SQLite.
VectorCopy = Literal["snapshot", "re-embed"]


class BackupError(Exception):
    """A backup cannot be written or restored; the message says why and what to do."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a backup holds and what made it."""

    created_at: str
    embedding_model: str
    vector_engine: str
    vectors: VectorCopy
    databases: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    # Where the originals were: stored paths under it are moved to the restored folder.
    uploads_dir: str = ""
    format: str = FORMAT
    format_version: int = FORMAT_VERSION


def database_files(data_dir: Path) -> list[Path]:
    """Every SQLite database directly in the data directory."""
    return sorted(path for path in data_dir.glob("*.sqlite3") if path.is_file())


def prepare_target(target: Path) -> None:
    """Create the backup folder; it must be new or empty (a backup never mixes with another)."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise BackupError(f"{target} is not an empty folder: choose a new folder for the backup.")
    try:
        private_folder(target)
    except OSError as exc:
        raise BackupError(f"Cannot create the backup folder {target}: {exc.strerror}.") from exc


def back_up_database(source: Path, target: Path) -> None:
    """Copy one database with SQLite's online backup API (a consistent snapshot, even while
    another connection writes)."""
    with (
        sqlite3.connect(source) as reader,
        sqlite3.connect(target) as writer,
    ):
        reader.backup(writer)
    reader.close()
    writer.close()


def copy_folder(source: Path, target: Path) -> None:
    """Copy a folder tree if it exists (originals, vector files): plain folders and files
    only, created owner-only; a symbolic link or a special file is refused, never followed."""
    if not source.is_dir():
        return
    for folder, folders, files in os.walk(source):
        here = Path(folder)
        into = target / here.relative_to(source)
        into.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        for name in (*folders, *files):
            _plain(here / name)
        for name in files:
            shutil.copyfile(here / name, into / name, follow_symlinks=False)


def _plain(path: Path) -> None:
    mode = path.lstat().st_mode
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else "a special file"
        raise BackupError(
            f"{path} is {kind}; a Lore backup holds plain files and folders only. "
            "Nothing was restored."
        )


def check_backup(backup: Path, manifest: Manifest, database: str) -> None:
    """Refuse a backup that holds what Lore never writes: a symbolic link or special file
    anywhere in it, or a document (in its `database`) whose original is not in the backup's
    own uploads tree."""
    for folder, folders, files in os.walk(backup):
        for name in (*folders, *files):
            _plain(Path(folder, name))
    if database in manifest.databases:
        for document_id, owner_id, path in _originals(backup / database):
            if path:
                _kept_path(document_id, owner_id, path, manifest.uploads_dir)


def database_counts(database: Path) -> dict[str, int]:
    """Documents, chunks and users in a (copied) Lore database."""
    queries = {
        "users": "SELECT COUNT(*) FROM users",
        "shared_documents": "SELECT COUNT(*) FROM documents WHERE owner_id IS NULL",
        "private_documents": "SELECT COUNT(*) FROM documents WHERE owner_id IS NOT NULL",
        "chunks": "SELECT COUNT(*) FROM chunks",
    }
    with sqlite3.connect(database) as connection:
        counts = {name: int(connection.execute(sql).fetchone()[0]) for name, sql in queries.items()}
    connection.close()
    return counts


def write_manifest(target: Path, manifest: Manifest) -> None:
    """Write the manifest last, atomically: its presence marks a complete backup."""
    temporary = target / f".{MANIFEST}.incoming"
    temporary.write_text(json.dumps(asdict(manifest), indent=2) + "\n", encoding="utf-8")
    temporary.replace(target / MANIFEST)


def read_manifest(backup: Path) -> Manifest:
    """The manifest of a backup folder, or a `BackupError` that says what is wrong."""
    path = backup / MANIFEST
    if not backup.is_dir():
        raise BackupError(f"There is no backup folder at {backup}.")
    if not path.is_file():
        raise BackupError(
            f"{backup} is not a Lore backup: {MANIFEST} is missing (an unfinished or "
            "damaged backup). Nothing was restored."
        )
    try:
        manifest = _parse_manifest(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BackupError(
            f"The backup at {backup} is damaged: {MANIFEST} cannot be read ({exc}). "
            "Nothing was restored."
        ) from exc
    if manifest.format_version > FORMAT_VERSION:
        raise BackupError(
            f"The backup at {backup} has format {manifest.format_version}; this Lore reads up "
            f"to {FORMAT_VERSION}. Upgrade Lore to restore it. Nothing was restored."
        )
    for name in manifest.databases:
        if Path(name).name != name or not (backup / name).is_file():
            raise BackupError(
                f"The backup at {backup} is damaged: the database {name} is missing. "
                "Nothing was restored."
            )
    return manifest


def _parse_manifest(raw: dict[str, object]) -> Manifest:
    if raw.get("format") != FORMAT:
        raise ValueError("not a Lore backup manifest")
    counts = raw["counts"]
    databases = raw["databases"]
    if not isinstance(counts, dict) or not isinstance(databases, list):
        raise TypeError("counts or databases have the wrong type")
    return Manifest(
        created_at=str(raw["created_at"]),
        embedding_model=str(raw["embedding_model"]),
        vector_engine=str(raw["vector_engine"]),
        vectors="snapshot" if raw["vectors"] == "snapshot" else "re-embed",
        databases=tuple(str(name) for name in databases),
        counts={str(key): int(value) for key, value in counts.items()},
        uploads_dir=str(raw.get("uploads_dir", "")),
        format_version=int(str(raw["format_version"])),
    )


def state_entries(data_dir: Path) -> list[str]:
    """What in the data directory is Lore state (a restore needs none of it there)."""
    if not data_dir.is_dir():
        return []
    return sorted(entry.name for entry in data_dir.iterdir() if entry.name not in NOT_STATE)


def clear_state(data_dir: Path) -> None:
    """Remove the state a restore replaces (`--force`); the lock, models and logs stay."""
    for name in state_entries(data_dir):
        entry = data_dir / name
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def restore_files(
    backup: Path, manifest: Manifest, data_dir: Path, uploads_dir: Path, *, vectors: bool
) -> None:
    """Copy a backup's databases and originals (and, with `vectors`, its vector files) into
    an emptied data directory."""
    private_folder(data_dir)
    for name in manifest.databases:
        back_up_database(backup / name, data_dir / name)
    copy_folder(backup / UPLOADS, uploads_dir)
    if vectors:
        copy_folder(backup / VECTORS, data_dir / VECTORS)


def mark_all_pending(database: Path) -> int:
    """Mark every chunk as waiting for its vector (the re-index re-embeds them); how many."""
    with sqlite3.connect(database) as connection:
        changed = connection.execute("UPDATE chunks SET vector_status = 'pending'").rowcount
        connection.execute("UPDATE documents SET status = 'indexing'")
    connection.close()
    return int(changed)


def _originals(database: Path) -> list[tuple[str, str | None, str]]:
    """(document id, owner id, original path) of every document, read-only."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        rows = connection.execute("SELECT id, owner_id, original_path FROM documents").fetchall()
    connection.close()
    return [(str(document), owner, str(path or "")) for document, owner, path in rows]


def _kept_path(document_id: str, owner_id: str | None, path: str, old_root: str) -> Path:
    """An original's path inside the uploads tree (`owner/document/file`), or a refusal."""
    stored = Path(path)
    parts = stored.parts
    inside = (
        len(parts) >= 3
        and ".." not in parts
        and parts[-3:-1] == (owner_id or SHARED_FOLDER, document_id)
        and (not old_root or stored.is_relative_to(old_root))
    )
    if not inside:
        raise BackupError(
            f"Document {document_id} of this backup keeps its original at {path!r}, outside "
            "the backup's own uploads folder; Lore never writes that, so it will not restore "
            "it. Nothing was restored."
        )
    return Path(*parts[-3:])


def rebase_originals(database: Path, old_root: str, new_root: Path) -> int:
    """Point every document's original path at its file under `new_root` (the new data
    directory's uploads), whatever folder the backup was taken from; how many rows."""
    rows = _originals(database)
    moved = [
        (str(new_root / _kept_path(document_id, owner_id, path, old_root)), document_id)
        for document_id, owner_id, path in rows
        if path
    ]
    with sqlite3.connect(database) as connection:
        connection.executemany("UPDATE documents SET original_path = ? WHERE id = ?", moved)
    connection.close()
    return len(moved)
