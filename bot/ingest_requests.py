"""What a person at the terminal names as a source (a URL, a file, a folder) becomes sources
to ingest: one for a URL or a file, one per supported file for a folder."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from bot.sources import Source
from graphs.ingest.extract import SUPPORTED_EXTENSIONS

__all__ = ["files_under", "looks_like_url", "sources_for"]

#: "scheme://": a link, whatever its scheme (never a path, even if no such file exists).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def files_under(folder: Path) -> list[Path]:
    """Every supported, non-hidden file under a folder, sorted."""
    return [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.suffix.lower() in SUPPORTED_EXTENSIONS
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]


def looks_like_url(source: str) -> bool:
    """Whether `source` names a link ("scheme://..."), not a path."""
    return _URL.match(source) is not None


async def sources_for(source: str) -> list[Source]:
    """One source for a URL or a file, one per supported file for a folder.

    A link with another scheme (ftp://, file://) goes to the fetcher too, which refuses it
    with "only http:// and https://" instead of looking for a file of that name.
    """
    if looks_like_url(source):
        return [Source(url=source)]
    path = await asyncio.to_thread(Path(source).expanduser)
    if await asyncio.to_thread(path.is_dir):
        files = await asyncio.to_thread(files_under, path)
        return [Source(path=file) for file in files]
    return [Source(path=path)]
