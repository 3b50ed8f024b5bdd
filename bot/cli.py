"""The `lore` command line: run the bot, chat, ingest, search, repair and inspect the knowledge
base. Maintenance commands act as the person at this machine's terminal (an owner)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from tqdm import tqdm

from bot.app import Lore, open_lore
from bot.app.edges import EDGE_SETTINGS, mcp_stdio_edge, platform_edges, terminal_edge
from bot.app.run import run_edges
from bot.errors import IngestRefusedError, LoreError
from bot.events import Identity
from bot.ingest_requests import files_under, looks_like_url
from bot.library_output import route_library_output
from bot.log_redaction import configure_logging
from bot.people import LOCAL_OWNER
from bot.replies import plain_text
from bot.service import Bot
from bot.settings import Settings, SettingsError, load_settings
from bot.sources import Source, saved_message
from graphs.ingest.state import IngestResult, chunks_text
from graphs.retrieval import RetrievedPassage

__all__ = ["app", "main"]

logger = logging.getLogger(__name__)

app = typer.Typer(
    name="lore",
    help="Lore: a self-hosted knowledge-base agent for chat apps.",
    no_args_is_help=True,
    add_completion=False,
)

T = TypeVar("T")
Ingest = Callable[[Source], Awaitable[IngestResult]]


def _configure_logging(settings: Settings) -> None:
    configure_logging(settings.log_level, settings.log_level_third_party, settings.secret_values())
    route_library_output(level=settings.log_level)


def _run(
    work: Callable[[Lore], Awaitable[T]], *, operator: bool = True, rebuild_vectors: bool = False
) -> T:
    """Open the core, run one piece of work, close; user-facing errors end the command politely.

    `operator`: the person at the terminal acts as an owner (maintenance commands)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    _configure_logging(settings)

    async def go() -> T:
        async with open_lore(settings, operator=operator, rebuild_vectors=rebuild_vectors) as lore:
            return await work(lore)

    try:
        return asyncio.run(go())
    except LoreError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None


async def _acting_as(bot: Bot, user: str | None, *, create: bool) -> Identity:
    """The terminal owner, or the local member `user` they act for."""
    if user is None:
        return LOCAL_OWNER
    return await bot.local_member(LOCAL_OWNER, user, create=create)


def _describe(result: IngestResult, *, shared: bool) -> str:
    text = plain_text(saved_message(result, shared=shared).body)
    if result.pending_chunks:
        text += f" ({result.pending_chunks} waiting for the vector store)"
    return text


async def ingest_folder(ingest: Ingest, folder: Path, *, shared: bool, quiet: bool) -> int:
    """Ingest every supported file under `folder`; return how many failed."""
    files = await asyncio.to_thread(files_under, folder)
    failures = 0
    with tqdm(files, desc="Ingesting", unit="file", disable=quiet or not files) as progress:
        for path in progress:
            try:
                result = await ingest(Source(path=path))
            except IngestRefusedError as exc:
                failures += 1
                tqdm.write(f"Skipped {path}: {exc}", file=sys.stderr)
                continue
            if not quiet:
                tqdm.write(_describe(result, shared=shared))
    return failures


@app.command()
def ingest(
    source: Annotated[str, typer.Argument(help="A file, a folder or an http(s) URL.")],
    shared: Annotated[bool, typer.Option(help="Add to the shared knowledge.")] = False,
    user: Annotated[str | None, typer.Option(help="Whose private collection.")] = None,
) -> None:
    """Remember a file, every supported file in a folder, or a web page."""

    path = Path(source).expanduser()

    async def work(lore: Lore) -> int:
        who = await _acting_as(lore.bot, user, create=True)

        async def one(item: Source) -> IngestResult:
            return await lore.bot.ingest(who, item, shared=shared)

        if looks_like_url(source):
            typer.echo(_describe(await one(Source(url=source)), shared=shared))
            return 0
        if await asyncio.to_thread(path.is_dir):
            return await ingest_folder(one, path, shared=shared, quiet=False)
        typer.echo(_describe(await one(Source(path=path)), shared=shared))
        return 0

    if _run(work):
        raise typer.Exit(1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: Annotated[str | None, typer.Option(help="Also search this user's notes.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=50)] = 5,
) -> None:
    """Show the passages that best match a query, with their source and score."""

    async def work(lore: Lore) -> None:
        who = await _acting_as(lore.bot, user, create=False)
        _print_hits(await lore.bot.search(who, query, limit=limit))

    _run(work)


def _print_hits(hits: list[RetrievedPassage]) -> None:
    if not hits:
        typer.echo("Nothing in the knowledge base matches that.")
    for rank, hit in enumerate(hits, start=1):
        passage = hit.passage
        where = " > ".join(passage.heading_path) or passage.document_title
        scope = "private" if hit.private else "shared"
        typer.echo(f"[{rank}] {passage.document_title} ({scope}, score {hit.score:.3f})")
        typer.echo(f"    {where} - {passage.source_ref}")
        snippet = " ".join(passage.text.split())
        typer.echo(f"    {snippet[:300]}{'...' if len(snippet) > 300 else ''}")


@app.command()
def reindex(
    all_: Annotated[
        bool, typer.Option("--all", help="Rebuild every vector with the current model.")
    ] = False,
) -> None:
    """Re-embed chunks whose vectors are missing and remove orphan points and files; with
    --all, rebuild every vector (after changing EMBEDDING_MODEL)."""
    if all_:
        from bot.reindex_all import reindex_all  # noqa: PLC0415 - only this command needs it

        typer.echo(_run(reindex_all, rebuild_vectors=True))
        return

    async def work(lore: Lore) -> None:
        # This process holds the data directory alone, so no ingest is half-way.
        report = await lore.bot.maintenance.reindex(folder_min_age_seconds=0)
        typer.echo(
            f"Re-embedded {chunks_text(report.reembedded_chunks)}; removed "
            f"{report.removed_orphan_points} orphan points and "
            f"{report.removed_orphan_folders} orphan folders."
        )

    _run(work)


@app.command()
def stats() -> None:
    """Counts of users, documents, chunks and vectors."""

    async def work(lore: Lore) -> None:
        for name, value in dataclasses.asdict(await lore.bot.maintenance.stats()).items():
            typer.echo(f"{name.replace('_', ' ')}: {value}")

    _run(work)


@app.command()
def chat() -> None:
    """Chat with Lore in the terminal."""

    async def work(lore: Lore) -> None:
        edge = terminal_edge(interactive=sys.stdin.isatty())
        await run_edges(lore, [edge], announce=typer.echo)

    _run(work, operator=False)


async def _load_sample(lore: Lore) -> None:
    sample = lore.settings.sample_docs_dir
    if sample is None or not await asyncio.to_thread(sample.is_dir):
        return
    failures = await ingest_folder(
        lore.bot.maintenance.load_shared, sample, shared=True, quiet=True
    )
    counts = await lore.bot.maintenance.stats()
    typer.echo(
        f"Knowledge base: {counts.shared_documents} shared documents, "
        f"{chunks_text(counts.chunks)} ({failures} sample files skipped)."
    )


@app.command()
def run() -> None:
    """Start Lore: every configured chat edge, the jobs, and the terminal chat when there is
    a terminal (or when no chat edge is configured)."""

    async def work(lore: Lore) -> None:
        await _load_sample(lore)
        edges = await platform_edges(lore)
        interactive = sys.stdin.isatty()
        if not interactive and not edges:
            logger.info("No chat edge configured (%s); reading stdin", ", ".join(EDGE_SETTINGS))
        if interactive or not edges:
            edges.append(terminal_edge(interactive=interactive))
        await run_edges(lore, edges, announce=typer.echo)

    _run(work, operator=False)


@app.command("mcp")
def mcp() -> None:
    """Serve Lore to a local MCP client over stdin/stdout (read-only, as the local owner)."""

    def announce(text: str) -> None:
        typer.echo(text, err=True)  # stdout carries the protocol

    async def work(lore: Lore) -> None:
        await run_edges(lore, [mcp_stdio_edge()], announce=announce)

    _run(work, operator=False)


@app.command("mcp-token")
def mcp_token(
    name: Annotated[str, typer.Argument(help="A name for the token, e.g. laptop.")],
    shared_only: Annotated[bool, typer.Option(help="Shared knowledge only.")] = False,
) -> None:
    """Make an MCP token for the owner (shown once; revoke it with /mcp revoke NAME)."""

    async def work(lore: Lore) -> None:
        issued = await lore.bot.create_mcp_token(LOCAL_OWNER, name, shared_only=shared_only)
        typer.echo(issued.token)
        typer.echo("Shown only this once. Send it as: Authorization: Bearer <token>", err=True)

    _run(work)


@app.command("eval")
def eval_suites(
    suite: Annotated[
        str, typer.Option(help="tool_selection, task_completion, guards or all.")
    ] = "all",
) -> None:
    """Run the evaluation suites against the configured model; exit 1 if a gate fails."""
    from evals.runner import (  # noqa: PLC0415 - only this command needs the suites
        SUITES,
        CaseResult,
        case_report,
        load_suite,
        run_suite,
        suite_report,
    )
    from graphs.llm.offline import MODEL_NAME  # noqa: PLC0415
    from storage.evals import EvalRepository  # noqa: PLC0415

    names = SUITES if suite == "all" else (suite,)
    try:
        suites = {name: load_suite(name) for name in names}
    except LoreError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None

    async def work(lore: Lore) -> bool:
        settings = lore.settings
        if (await lore.bot.maintenance.stats()).shared_documents == 0:
            docs = settings.sample_docs_dir or Path("docs")
            typer.echo(f"The shared knowledge is empty; loading {docs} first.")
            await ingest_folder(lore.bot.maintenance.load_shared, docs, shared=True, quiet=True)
        provider = settings.llm_model if settings.llm_base_url else MODEL_NAME
        passed = True
        for name, cases in suites.items():

            def show(case: CaseResult, suite_name: str = name) -> None:
                typer.echo(case_report(suite_name, case))

            result = await run_suite(
                lore.bot,
                name,
                cases,
                provider_name=provider,
                repository=EvalRepository(lore.database),
                owner=LOCAL_OWNER,
                on_case=show,
            )
            typer.echo(suite_report(result, provider))
            passed = passed and result.passed_gate
        return passed

    if not _run(work):
        raise typer.Exit(1)


def main() -> None:
    """Console-script entry point."""
    app()
