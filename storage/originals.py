"""Originals on disk: every ingested source is kept under its owner's folder (invariant 6).

Layout: `{root}/{user_id or "shared"}/{document_id}/{file name}`. Files are written
to a temporary name and renamed, so a crash never leaves a half-written original.

Text that a model read from the original (OCR of a scan or a photo, the transcript of a
recording) is kept beside it as `.recognised.md` or `.recognised.txt` (Markdown or not): it
cannot be had again cheaply, or exactly, so cutting the document again reads it instead of
the original. A file name that starts with a dot is never an original's (`safe_file_name`).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from storage.ids import DocumentId, UserId

__all__ = ["OriginalStore", "RecognisedText", "safe_file_name"]

SHARED_FOLDER = "shared"
_RECOGNISED = {True: ".recognised.md", False: ".recognised.txt"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def safe_file_name(name: str, *, default: str) -> str:
    """Reduce a user-supplied file name to a safe, non-empty base name."""
    base = _UNSAFE.sub("_", Path(name.replace("\\", "/")).name).strip(" .")
    return base[:120] or default


@dataclass(frozen=True, slots=True)
class RecognisedText:
    """Text a model read from an original, and whether it is Markdown."""

    text: str
    is_markdown: bool


class OriginalStore:
    """Keeps the original bytes of each document."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def folder(self, owner_id: UserId | None, document_id: DocumentId) -> Path:
        """The folder that holds one document's original."""
        return self._root / (owner_id or SHARED_FOLDER) / document_id

    async def save(
        self,
        owner_id: UserId | None,
        document_id: DocumentId,
        file_name: str,
        data: bytes,
        *,
        recognised: RecognisedText | None = None,
    ) -> Path:
        """Write the original (and the text a model read from it) atomically, replacing an
        older version; return the original's path."""
        return await asyncio.to_thread(
            self._save, owner_id, document_id, file_name, data, recognised
        )

    def _save(
        self,
        owner_id: UserId | None,
        document_id: DocumentId,
        file_name: str,
        data: bytes,
        recognised: RecognisedText | None,
    ) -> Path:
        folder = self.folder(owner_id, document_id)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / safe_file_name(file_name, default="original")
        kept = {target}
        _write_atomically(folder, target, data)
        if recognised is not None:
            text_file = folder / _RECOGNISED[recognised.is_markdown]
            _write_atomically(folder, text_file, recognised.text.encode())
            kept.add(text_file)
        for stale in folder.iterdir():
            if stale not in kept:
                stale.unlink(missing_ok=True)
        return target

    async def read(self, path: str) -> bytes:
        """Read a kept original back."""
        return await asyncio.to_thread(Path(path).read_bytes)

    async def holds(self, path: str, data: bytes) -> bool:
        """Whether the original kept at `path` is exactly `data`."""
        return await asyncio.to_thread(_holds, Path(path), data)

    async def read_recognised(self, path: str) -> RecognisedText | None:
        """The text a model read from the original at `path`, if it was kept."""
        return await asyncio.to_thread(_read_recognised, Path(path).parent)

    async def remove(self, owner_id: UserId | None, document_id: DocumentId) -> None:
        """Delete one document's folder (missing is fine)."""
        folder = self.folder(owner_id, document_id)
        await asyncio.to_thread(shutil.rmtree, folder, True)

    async def remove_owner(self, owner_id: UserId) -> None:
        """Delete every original of one user (/forget)."""
        await asyncio.to_thread(shutil.rmtree, self._root / owner_id, True)

    async def remove_folder(self, folder: Path) -> None:
        """Delete a folder found by `stored_documents` (it must lie under this store)."""
        await asyncio.to_thread(self._remove_inside, folder)

    def _remove_inside(self, folder: Path) -> None:
        if self._root.resolve() not in folder.resolve().parents:
            raise ValueError(f"{folder} is not inside {self._root}")
        shutil.rmtree(folder, ignore_errors=True)

    async def stored_documents(self) -> dict[DocumentId, Path]:
        """Every document folder on disk (the repair job removes those SQLite does not know)."""
        return await asyncio.to_thread(self._scan)

    def _scan(self) -> dict[DocumentId, Path]:
        if not self._root.is_dir():
            return {}
        return {
            DocumentId(folder.name): folder
            for owner in self._root.iterdir()
            if owner.is_dir()
            for folder in owner.iterdir()
            if folder.is_dir()
        }


def _write_atomically(folder: Path, target: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".incoming-", delete=False) as handle:
        handle.write(data)
        temporary = Path(handle.name)
    temporary.replace(target)


def _read_recognised(folder: Path) -> RecognisedText | None:
    for is_markdown, name in _RECOGNISED.items():
        path = folder / name
        if path.is_file():
            return RecognisedText(path.read_text("utf-8"), is_markdown)
    return None


def _holds(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False
