"""What a person at the terminal names as a source (a URL, a file, a folder) becomes sources
to ingest: one for a URL or a file, one per supported file for a folder, with a line for
every file of the folder that Lore does not read and for a folder with nothing to read.

Hidden files and folders (names that start with a dot: `.git`, `.DS_Store`) are left out
silently; every other file of an unsupported type is named, once, with the types Lore reads.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.errors import IngestRefusedError
from bot.sources import Source
from graphs.ingest.formats import READABLE_KINDS, SUPPORTED_EXTENSIONS

__all__ = [
    "MAX_LISTED_OTHERS",
    "READABLE_TYPES",
    "FolderContents",
    "IngestPlan",
    "folder_contents",
    "looks_like_url",
    "nothing_to_ingest",
    "other_file_lines",
    "plan_ingest",
]

#: "scheme://": a link, whatever its scheme (never a path, even if no such file exists).
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: At most this many files of other types are named one by one; the rest are counted.
MAX_LISTED_OTHERS = 20
#: The file types a folder ingest reads, as a person reads them in a message.
READABLE_TYPES = READABLE_KINDS


@dataclass(frozen=True, slots=True)
class FolderContents:
    """A folder's non-hidden files: those Lore reads (`files`) and the others, both sorted."""

    files: tuple[Path, ...]
    others: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class IngestPlan:
    """What to ingest for one named source, and the lines about files left out."""

    sources: tuple[Source, ...]
    #: A folder's files of other types: how many, and the lines that name them.
    left_out: int = 0
    skipped: tuple[str, ...] = ()
    folder: bool = False


def _hidden(path: Path, folder: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(folder).parts)


def folder_contents(folder: Path) -> FolderContents:
    """Every non-hidden file under `folder`, split by whether Lore reads its type (blocking)."""
    files: list[Path] = []
    others: list[Path] = []
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or _hidden(path, folder):
            continue
        (files if path.suffix.lower() in SUPPORTED_EXTENSIONS else others).append(path)
    return FolderContents(tuple(files), tuple(others))


def _kind(path: Path) -> str:
    return f"{path.suffix.lower()} files" if path.suffix else "files without an extension"


def other_file_lines(shown: Iterable[Path]) -> list[str]:
    """A "Skipped" line per file of another type (as `shown`), the rest counted in one line."""
    names = list(shown)
    lines = [
        f"Skipped {name}: Lore does not read {_kind(name)} (it reads {READABLE_TYPES})."
        for name in names[:MAX_LISTED_OTHERS]
    ]
    if len(names) > MAX_LISTED_OTHERS:
        rest = len(names) - MAX_LISTED_OTHERS
        lines.append(f"Skipped {rest} more files of types Lore does not read.")
    return lines


def nothing_to_ingest(shown: Path | str) -> str:
    """The message for a folder that holds no file Lore reads."""
    return (
        f"There is nothing to ingest in {shown}: it holds no file Lore reads "
        f"({READABLE_TYPES}; hidden files are left out)."
    )


def looks_like_url(source: str) -> bool:
    """Whether `source` names a link ("scheme://..."), not a path."""
    return _URL.match(source) is not None


async def plan_ingest(source: str) -> IngestPlan:
    """One source for a URL or a file; for a folder, one per file Lore reads, and a line for
    each other file. `IngestRefusedError` for a folder with nothing to read.

    A link with another scheme (ftp://, file://) goes to the fetcher too, which refuses it
    with "only http:// and https://" instead of looking for a file of that name.
    """
    if looks_like_url(source):
        return IngestPlan((Source(url=source),))
    path = await asyncio.to_thread(Path(source).expanduser)
    if not await asyncio.to_thread(path.is_dir):
        return IngestPlan((Source(path=path),))
    contents = await asyncio.to_thread(folder_contents, path)
    skipped = tuple(other_file_lines(contents.others))
    if not contents.files:
        raise IngestRefusedError("\n".join((*skipped, nothing_to_ingest(source))))
    sources = tuple(Source(path=file) for file in contents.files)
    return IngestPlan(sources, len(contents.others), skipped, folder=True)
