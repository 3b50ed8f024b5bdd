"""The bodies of the CLI's store commands, written once against an `Output` sink: the CLI
runs them with its own store when no bot runs, the bot's control server when one does, and
both print the same lines and end with the same exit code.

A command is one entry in `OPERATIONS`: its function takes a `Call` and returns the exit
code. Arguments arrive as JSON (`Args` reads them typed); paths are resolved against the
caller's working directory (`cwd`), since the bot's differs. A question for the person
(`lore delete`'s y/N) goes through `Output.confirm`, so it is asked at the CLI's terminal.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.backups import describe_backup
from bot.control.output import Output
from bot.control.protocol import ELSEWHERE_EXIT
from bot.deletion import NO_TERMINAL, NOT_DELETED, deletion_question
from bot.errors import IngestRefusedError, LoreError, UsageError
from bot.events import Identity
from bot.ingest_requests import (
    folder_contents,
    looks_like_url,
    nothing_to_ingest,
    other_file_lines,
)
from bot.people import LOCAL_OWNER
from bot.replies import plain_text
from bot.service import Bot
from bot.sources import Source, saved_message
from graphs.ingest.state import IngestResult, chunks_text
from graphs.retrieval import RetrievedPassage

__all__ = [
    "OPERATIONS",
    "Args",
    "Call",
    "Operation",
    "describe",
    "folder_anchor",
    "ingest_folder",
    "perform",
]

Ingest = Callable[[Source], Awaitable[IngestResult]]


class Args:
    """A request's JSON arguments, read with their types checked."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def text(self, name: str) -> str:
        """A required string."""
        value = self._values.get(name)
        if not isinstance(value, str):
            raise UsageError(f"The control request needs {name!r} as text.")
        return value

    def optional_text(self, name: str) -> str | None:
        """A string or nothing."""
        return None if self._values.get(name) is None else self.text(name)

    def flag(self, name: str) -> bool:
        """A boolean, false when absent."""
        value = self._values.get(name, False)
        if not isinstance(value, bool):
            raise UsageError(f"The control request needs {name!r} as true or false.")
        return value

    def number(self, name: str, *, low: int, high: int) -> int:
        """An integer within [low, high]."""
        value = self._values.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise UsageError(f"The control request needs {name!r} from {low} to {high}.")
        return value


@dataclass(frozen=True, slots=True)
class Call:
    """One run of a command: the bot, where its output goes, its arguments, and whether the
    process holds the data directory alone (the CLI's own store: no ingest is half-way)."""

    bot: Bot
    out: Output
    args: Args
    alone: bool


Operation = Callable[[Call], Awaitable[int]]


async def perform(name: str, call: Call) -> int:
    """Run command `name`; a user-facing error is one line on stderr and exit code 1."""
    operation = OPERATIONS.get(name)
    if operation is None:
        call.out.echo(f"The running bot has no command {name!r}.", err=True)
        return 2
    try:
        return await operation(call)
    except LoreError as exc:
        call.out.echo(str(exc), err=True)
        return 1


async def _acting_as(bot: Bot, user: str | None, *, create: bool) -> Identity:
    """The terminal owner, or the local member `user` they act for."""
    if user is None:
        return LOCAL_OWNER
    return await bot.local_member(LOCAL_OWNER, user, create=create)


def describe(result: IngestResult, *, shared: bool) -> str:
    """The line for one saved source."""
    text = plain_text(saved_message(result, shared=shared).body)
    if result.pending_chunks:
        text += f" ({result.pending_chunks} waiting for the vector store)"
    return text


async def ingest_folder(
    ingest: Ingest,
    folder: Path,
    out: Output,
    *,
    shared: bool,
    lines: bool = True,
    description: str = "Ingesting",
    shown: Path | None = None,
) -> int:
    """Ingest every supported file under `folder` with a progress bar; return how many were
    refused. `lines`: a line per saved file (a refusal and a file of another type always
    get theirs). `IngestRefusedError` when the folder holds no file Lore reads.

    Paths in messages are `shown` (the folder as the person typed it) joined with each
    file's place under `folder`."""
    contents = await asyncio.to_thread(folder_contents, folder)

    def named(path: Path) -> Path:
        return path if shown is None else shown / path.relative_to(folder)

    for line in other_file_lines(named(path) for path in contents.others):
        out.echo(line, err=True)
    if not contents.files:
        raise IngestRefusedError(nothing_to_ingest(folder if shown is None else shown))
    failures = 0
    out.progress(len(contents.files), description)
    try:
        for path in contents.files:
            try:
                result = await ingest(Source(path=path))
            except IngestRefusedError as exc:
                failures += 1
                out.echo(f"Skipped {named(path)}: {exc}", err=True)
            else:
                if lines:
                    out.echo(describe(result, shared=shared))
            out.advance()
    finally:
        out.progress_end()
    return failures


async def ingest(call: Call) -> int:
    """`lore ingest SOURCE [--shared] [--user NAME]`."""
    source, shared = call.args.text("source"), call.args.flag("shared")
    who = await _acting_as(call.bot, call.args.optional_text("user"), create=True)

    async def one(item: Source) -> IngestResult:
        return await call.bot.ingest(who, item, shared=shared)

    if looks_like_url(source):
        call.out.echo(describe(await one(Source(url=source)), shared=shared))
        return 0
    typed = await asyncio.to_thread(Path(source).expanduser)
    path = Path(call.args.text("cwd")) / typed
    if await asyncio.to_thread(path.is_dir):
        failures = await ingest_folder(one, path, call.out, shared=shared, shown=typed)
        return 1 if failures else 0
    call.out.echo(describe(await one(Source(path=path)), shared=shared))
    return 0


async def search(call: Call) -> int:
    """`lore search QUERY [--user NAME] [--limit N]`."""
    who = await _acting_as(call.bot, call.args.optional_text("user"), create=False)
    query, limit = call.args.text("query"), call.args.number("limit", low=1, high=50)
    _print_hits(call.out, await call.bot.search(who, query, limit=limit))
    return 0


def _print_hits(out: Output, hits: list[RetrievedPassage]) -> None:
    if not hits:
        out.echo("Nothing in the knowledge base matches that.")
    for rank, hit in enumerate(hits, start=1):
        passage = hit.passage
        where = " > ".join(passage.heading_path) or passage.document_title
        scope = "private" if hit.private else "shared"
        out.echo(f"[{rank}] {passage.document_title} ({scope}, score {hit.score:.3f})")
        out.echo(f"    {where} - {passage.source_ref}")
        snippet = " ".join(passage.text.split())
        out.echo(f"    {snippet[:300]}{'...' if len(snippet) > 300 else ''}")


async def reindex(call: Call) -> int:
    """`lore reindex`."""
    # Alone, no ingest is half-way; beside a running bot, a fresh folder may be one.
    age = {"folder_min_age_seconds": 0.0} if call.alone else {}
    report = await call.bot.maintenance.reindex(**age)
    call.out.echo(
        f"Re-embedded {chunks_text(report.reembedded_chunks)}; removed "
        f"{report.removed_orphan_points} orphan points and "
        f"{report.removed_orphan_folders} orphan folders."
    )
    return 0


async def stats(call: Call) -> int:
    """`lore stats`."""
    for name, value in dataclasses.asdict(await call.bot.maintenance.stats()).items():
        call.out.echo(f"{name.replace('_', ' ')}: {value}")
    return 0


async def delete(call: Call) -> int:
    """`lore delete HANDLE [--user NAME] [--yes]`: asks y/N at the caller's terminal first."""
    who = await _acting_as(call.bot, call.args.optional_text("user"), create=False)
    document = await call.bot.document(who, call.args.text("handle"))
    if not call.args.flag("yes"):
        answer = await call.out.confirm(deletion_question(document))
        if answer is None:
            call.out.echo(NO_TERMINAL, err=True)
            return 1
        if not answer:
            call.out.echo(NOT_DELETED)
            return 1
    title = await call.bot.delete_document(who, document.id)
    call.out.echo(f"Deleted {title} ({document.handle}).")
    return 0


def folder_anchor(target: Path) -> dict[str, Any]:
    """The nearest folder of `target` that exists, and its device and inode: the bot checks
    it sees the same folder there (blocking)."""
    anchor = next(folder for folder in (target, *target.parents) if folder.exists())
    found = anchor.stat()
    return {"anchor": str(anchor), "device": found.st_dev, "inode": found.st_ino}


def _sees(args: Args) -> bool:
    """Whether this process sees the caller's anchor folder as the caller does."""
    try:
        found = Path(args.text("anchor")).stat()
    except OSError:
        return False
    high = 2**63
    device, inode = args.number("device", low=0, high=high), args.number("inode", low=0, high=high)
    return (found.st_dev, found.st_ino) == (device, inode)


async def backup(call: Call) -> int:
    """`lore backup PATH`: a consistent snapshot by the process that holds the stores (the
    vectors included when it holds the embedded engine's shards)."""
    target = Path(call.args.text("path"))
    if not target.is_absolute():
        raise UsageError("The control request needs 'path' as an absolute path.")
    if not await asyncio.to_thread(_sees, call.args):
        return ELSEWHERE_EXIT  # another container: the CLI copies beside the bot instead
    manifest = await call.bot.maintenance.backup(target)
    call.out.echo(describe_backup(target, manifest))
    return 0


OPERATIONS: dict[str, Operation] = {
    "ingest": ingest,
    "search": search,
    "reindex": reindex,
    "stats": stats,
    "delete": delete,
    "backup": backup,
}
