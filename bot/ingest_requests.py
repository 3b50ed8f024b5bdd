"""Ingest requests for the edges: what a person typed as a source (a URL, a file, a folder)
becomes requests, and the request, progress and result types are re-exported so that
adapters import `bot` only."""

from __future__ import annotations

import asyncio
from pathlib import Path

from graphs.ingest.extract import SUPPORTED_EXTENSIONS
from graphs.ingest.state import IngestOutcome, IngestProgress, IngestRequest, IngestResult
from storage.ids import UserId

__all__ = [
    "IngestOutcome",
    "IngestProgress",
    "IngestRequest",
    "IngestResult",
    "UserId",
    "files_under",
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


async def request_for(source: str, owner_id: UserId | None) -> list[IngestRequest]:
    """One request for a URL or a file, one per supported file for a folder."""
    if source.startswith(("http://", "https://")):
        return [IngestRequest(owner_id, url=source)]
    path = await asyncio.to_thread(Path(source).expanduser)
    if await asyncio.to_thread(path.is_dir):
        files = await asyncio.to_thread(files_under, path)
        return [IngestRequest(owner_id, path=file) for file in files]
    return [IngestRequest(owner_id, path=path)]
