"""The `lore` command line: run the bot, ingest, search, repair and inspect the knowledge base."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from tqdm import tqdm

from adapters.console import LOCAL_OWNER, PLATFORM, ConsoleChat, ConsoleNotifier
from adapters.telegram import TelegramConfig, running_telegram
from bot.app import Lore, open_lore
from bot.errors import IngestRefusedError, LoreError
from bot.events import Identity
from bot.ingest_requests import files_under, is_link
from bot.library_output import route_library_output
from bot.service import Bot
from bot.settings import Settings, SettingsError, load_settings
from graphs.ingest.state import IngestRequest, IngestResult, chunks_text
from graphs.retrieval import RetrievedPassage
from scheduler.runner import Scheduler
from storage.ids import UserId
from storage.processed_updates import ProcessedUpdates
from storage.users import Role

__all__ = ["app", "main"]

logger = logging.getLogger(__name__)

app = typer.Typer(
    name="lore",
    help="Lore: a self-hosted knowledge-base agent for chat apps.",
    no_args_is_help=True,
    add_completion=False,
)

LOCAL_OWNER_NAME = LOCAL_OWNER.platform_user_id
T = TypeVar("T")


def _configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # httpx logs full URLs at INFO; URLs can carry tokens.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    route_library_output(level=settings.log_level)


def _run(work: Callable[[Lore], Awaitable[T]]) -> T:
    """Open the core, run one piece of work, close; user-facing errors end the command politely."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    _configure_logging(settings)

    async def go() -> T:
        async with open_lore(settings) as lore:
            return await work(lore)

    try:
        return asyncio.run(go())
    except LoreError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None


async def _owner_id(bot: Bot, *, shared: bool, user: str | None) -> UserId | None:
    if shared:
        return None
    name = user or LOCAL_OWNER_NAME
    role = Role.OWNER if name == LOCAL_OWNER_NAME else Role.MEMBER
    return (await bot.console_user(name, role=role)).id


def _describe(result: IngestResult) -> str:
    if result.outcome == "duplicate":
        return f"Already saved: {result.title} ({result.chunks_text})"
    verb = "Updated" if result.outcome == "updated" else "Saved"
    detail = result.chunks_text
    if result.outcome == "updated":
        detail += f", {result.embedded_chunks} re-embedded, {result.removed_chunks} removed"
    if result.pending_chunks:
        detail += f", {result.pending_chunks} waiting for the vector store"
    return f"{verb}: {result.title} ({detail})"


async def ingest_folder(bot: Bot, folder: Path, owner_id: UserId | None, *, quiet: bool) -> int:
    """Ingest every supported file under `folder`; return how many failed."""
    files = await asyncio.to_thread(files_under, folder)
    failures = 0
    with tqdm(files, desc="Ingesting", unit="file", disable=quiet or not files) as progress:
        for path in progress:
            try:
                result = await bot.ingest(IngestRequest(owner_id=owner_id, path=path))
            except IngestRefusedError as exc:
                failures += 1
                tqdm.write(f"Skipped {path}: {exc}", file=sys.stderr)
                continue
            if not quiet:
                tqdm.write(_describe(result))
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
        owner = await _owner_id(lore.bot, shared=shared, user=user)
        if is_link(source):
            typer.echo(_describe(await lore.bot.ingest(IngestRequest(owner, url=source))))
            return 0
        if await asyncio.to_thread(path.is_dir):
            return await ingest_folder(lore.bot, path, owner, quiet=False)
        typer.echo(_describe(await lore.bot.ingest(IngestRequest(owner, path=path))))
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
        owner = await _owner_id(lore.bot, shared=False, user=user)
        hits = await lore.bot.search(query, user_id=owner, limit=limit)
        _print_hits(hits)

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
def reindex() -> None:
    """Re-embed chunks whose vectors are missing and remove orphan points and files."""

    async def work(lore: Lore) -> None:
        # This process holds the data directory alone, so no ingest is half-way.
        report = await lore.bot.reindex(folder_min_age_seconds=0)
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
        for name, value in dataclasses.asdict(await lore.bot.stats()).items():
            typer.echo(f"{name.replace('_', ' ')}: {value}")

    _run(work)


async def _chat(lore: Lore) -> None:
    """The terminal chat with the agent, for the local owner."""
    interactive = sys.stdin.isatty()

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    async def read_line(prompt: str) -> str | None:
        return await asyncio.to_thread(_read_line, prompt if interactive else "")

    owner = await lore.bot.conversations.user_for(LOCAL_OWNER)
    local_user_id = owner.id if owner is not None else ""
    lore.bot.register_notifier(PLATFORM, ConsoleNotifier(write, local_user_id=local_user_id))
    await lore.bot.conversations.recover_approvals()
    async with Scheduler(lore.bot):  # approval expiry, re-index repair, digests
        chat = ConsoleChat(lore.bot, read_line=read_line, write=write, interactive=interactive)
        await chat.run()


@app.command()
def chat() -> None:
    """Chat with Lore in the terminal (you are the owner)."""
    _run(_chat)


@app.command()
def run() -> None:
    """Start Lore: load the sample knowledge base, then chat in the terminal."""

    async def work(lore: Lore) -> None:
        sample = lore.settings.sample_docs_dir
        if sample is not None and await asyncio.to_thread(sample.is_dir):
            failures = await ingest_folder(lore.bot, sample, None, quiet=True)
            counts = await lore.bot.stats()
            typer.echo(
                f"Knowledge base: {counts.shared_documents} shared documents, "
                f"{chunks_text(counts.chunks)} ({failures} sample files skipped)."
            )
        if lore.settings.telegram_bot_token is None:
            await _chat(lore)
        else:
            await _run_with_telegram(lore)

    _run(work)


def _telegram_config(settings: Settings) -> TelegramConfig:
    token = settings.telegram_bot_token
    secret = settings.telegram_webhook_secret
    return TelegramConfig(
        token=token.get_secret_value() if token else "",
        max_file_bytes=settings.max_file_bytes,
        owner_ids=frozenset(
            user for platform, user in settings.owner_identities if platform == "telegram"
        ),
        api_root=settings.telegram_api_root,
        webhook_url=settings.telegram_webhook_url,
        webhook_secret=secret.get_secret_value() if secret else None,
        webhook_listen=settings.telegram_webhook_listen,
        webhook_port=settings.telegram_webhook_port,
    )


async def _run_with_telegram(lore: Lore) -> None:
    """Telegram in this event loop, beside the terminal chat when there is a terminal."""
    ledger = ProcessedUpdates(lore.database)
    await ledger.prune(datetime.now(UTC) - timedelta(days=7))
    async with running_telegram(lore.bot, _telegram_config(lore.settings), ledger):
        if sys.stdin.isatty():
            await _chat(lore)
            return
        await lore.bot.conversations.recover_approvals()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signal_number, stop.set)
        async with Scheduler(lore.bot):
            typer.echo("Lore is running on Telegram. Stop with Ctrl-C.")
            await stop.wait()


def _read_line(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


@app.command("eval")
def eval_suites(
    suite: Annotated[str, typer.Option(help="tool_selection, task_completion or all.")] = "all",
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
        if (await lore.bot.stats()).shared_documents == 0:
            docs = settings.sample_docs_dir or Path("docs")
            typer.echo(f"The shared knowledge is empty; loading {docs} first.")
            await ingest_folder(lore.bot, docs, None, quiet=True)
        provider = settings.llm_model if settings.llm_base_url else MODEL_NAME
        platform, owner_id = min(settings.owner_identities, default=("console", "owner"))
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
                owner=Identity(platform, owner_id, "Owner"),
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
