"""Ingest requests for the edges: what a person typed as a source (a URL, a file, a folder)
becomes requests, and the request, progress and result types are re-exported so that
adapters import `bot` only."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from graphs.ingest.extract import SUPPORTED_EXTENSIONS
from graphs.ingest.state import (
    IngestOutcome,
    IngestProgress,
    IngestRequest,
    IngestResult,
    chunks_text,
)
from storage.ids import UserId

__all__ = [
    "IngestOutcome",
    "IngestProgress",
    "IngestRequest",
    "IngestResult",
    "UserId",
    "chunks_text",
    "files_under",
    "is_link",
    "request_for",
]


def files_under(folder: Path) -> list[Path]:
    """Every supported, non-hidden file under a folder, sorted."""
    return [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.suffix.lower() in SUPPORTED_EXTENSIONS
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]


#: "scheme://": a link, whatever its scheme (never a path, even if no such file exists).
_LINK = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_link(source: str) -> bool:
    """Whether `source` is a link ("scheme://..."), not a path."""
    return _LINK.match(source) is not None


async def request_for(source: str, owner_id: UserId | None) -> list[IngestRequest]:
    """One request for a URL or a file, one per supported file for a folder.

    A link with another scheme (ftp://, file://) goes to the fetcher too, which refuses it
    with "I can only fetch http:// and https:// links." rather than looking for a file.
    """
    if is_link(source):
        return [IngestRequest(owner_id, url=source)]
    path = await asyncio.to_thread(Path(source).expanduser)
    if await asyncio.to_thread(path.is_dir):
        files = await asyncio.to_thread(files_under, path)
        return [IngestRequest(owner_id, path=file) for file in files]
    return [IngestRequest(owner_id, path=path)]
