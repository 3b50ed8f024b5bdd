"""The `lore` command line: run the bot, chat, ingest, search, repair and inspect the knowledge
base. Maintenance commands act as the person at this machine's terminal (an owner).

Start-up is kept fast: the core, its engines and the chat SDKs are imported inside the
commands that use them (`lore --help` and argument errors answer before any of them loads;
tests/test_startup.py holds this)."""

# ruff: noqa: PLC0415 - heavy imports live in the command bodies, see the docstring

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from bot.cli_errors import reported_errors, run_program, set_debug
from bot.errors import LoreError
from bot.library_output import route_library_output
from bot.log_redaction import configure_logging
from bot.people import LOCAL_OWNER

if TYPE_CHECKING:
    from bot.app import Lore
    from bot.events import Identity
    from bot.service import Bot
    from bot.settings import Settings
    from bot.sources import Source
    from graphs.ingest.state import IngestResult

__all__ = ["app", "main"]

logger = logging.getLogger(__name__)

app = typer.Typer(
    name="lore",
    help="Lore: a self-hosted knowledge-base agent for chat apps.",
    no_args_is_help=True,
    add_completion=False,
)

T = TypeVar("T")
Ingest = Callable[["Source"], Awaitable["IngestResult"]]


def _configure_logging(settings: Settings, *, to_file: bool = False) -> None:
    """Log to stderr; `to_file` (the terminal chat at a terminal): to DATA_DIR/logs instead."""
    if to_file:
        from adapters.console import print_above_prompt
        from bot.chat_logs import log_to_file

        path = log_to_file(settings.data_dir, show=print_above_prompt, level=settings.log_level)
        typer.echo(f"Logs go to {path}")
    configure_logging(settings.log_level, settings.log_level_third_party, settings.secret_values())
    route_library_output(level=settings.log_level)


def _run(
    work: Callable[[Lore], Awaitable[T]],
    *,
    operator: bool = True,
    chat: bool = False,
    rebuild_vectors: bool = False,
) -> T:
    """Open the core, run one piece of work, close; a failure ends the command with one line
    on stderr (see `bot.cli_errors`).

    `operator`: the person at the terminal acts as an owner (maintenance commands).
    `chat`: the work runs the terminal chat; at a terminal, logs go to a file."""
    from bot.app import open_lore
    from bot.settings import load_settings

    with reported_errors():
        settings = load_settings()
    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        _configure_logging(settings, to_file=chat and sys.stdin.isatty())

    if chat:
        _say_when_the_model_is_built(settings)

    async def go() -> T:
        async with open_lore(settings, operator=operator, rebuild_vectors=rebuild_vectors) as lore:
            return await work(lore)

    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        return asyncio.run(go())


def _say_when_the_model_is_built(settings: Settings) -> None:
    """The terminal chat logs to a file: say on screen why the first start pauses."""
    from bot.app.stored_model import with_stored_model
    from storage.model_files import is_assembled

    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        key = with_stored_model(settings).embedding_model
        if not is_assembled(settings.models_dir, key):
            typer.echo(f"Preparing the embedding model {key} (once, about 10 s)…", err=True)


async def _acting_as(bot: Bot, user: str | None, *, create: bool) -> Identity:
    """The terminal owner, or the local member `user` they act for."""
    if user is None:
        return LOCAL_OWNER
    return await bot.local_member(LOCAL_OWNER, user, create=create)


async def ingest_folder(ingest: Ingest, folder: Path, *, shared: bool, quiet: bool) -> int:
    """Ingest every supported file under `folder`; return how many failed."""
    from bot.control import operations
    from bot.control.output import TerminalOutput

    return await operations.ingest_folder(
        ingest, folder, TerminalOutput(), shared=shared, quiet=quiet
    )


def _perform(op: str, **args: object) -> None:
    """Run store command `op` in the running bot (over its control socket) when one holds
    the data directory, else with this process's own store; the same lines and exit code."""
    from bot.control import operations
    from bot.control.client import connect
    from bot.control.output import TerminalOutput
    from bot.settings import load_settings

    with reported_errors():
        data_dir = load_settings().data_dir
    out = TerminalOutput()

    async def in_the_bot() -> int | None:
        connection = await connect(data_dir)
        if connection is None:
            return None
        async with connection:
            return await connection.run(op, args, out)

    code = asyncio.run(in_the_bot())
    if code is None:

        async def here(lore: Lore) -> int:
            call = operations.Call(lore.bot, out, operations.Args(args), alone=True)
            return await operations.perform(op, call)

        code = _run(here)
    if code:
        raise typer.Exit(code)


@app.command()
def ingest(
    source: Annotated[str, typer.Argument(help="A file, a folder or an http(s) URL.")],
    shared: Annotated[bool, typer.Option(help="Add to the shared knowledge.")] = False,
    user: Annotated[str | None, typer.Option(help="Whose private collection.")] = None,
) -> None:
    """Remember a file, every supported file in a folder, or a web page."""
    _perform("ingest", source=source, shared=shared, user=user, cwd=str(Path.cwd()))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: Annotated[str | None, typer.Option(help="Also search this user's notes.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=50)] = 5,
) -> None:
    """Show the passages that best match a query, with their source and score."""
    _perform("search", query=query, user=user, limit=limit)


@app.command()
def reindex(
    all_: Annotated[
        bool, typer.Option("--all", help="Rebuild every vector with the current model.")
    ] = False,
) -> None:
    """Re-embed chunks whose vectors are missing and remove orphan points and files; with
    --all, rebuild every vector (after changing EMBEDDING_MODEL)."""
    if all_:
        from bot.reindex_all import reindex_all

        typer.echo(_run(reindex_all, rebuild_vectors=True))
        return
    _perform("reindex")


@app.command()
def stats() -> None:
    """Counts of users, documents, chunks and vectors."""
    _perform("stats")


@app.command()
def chat() -> None:
    """Chat with Lore in the terminal."""
    from bot.app.edges import terminal_edge
    from bot.app.run import run_edges

    async def work(lore: Lore) -> None:
        edge = terminal_edge(interactive=sys.stdin.isatty())
        await run_edges(lore, [edge], announce=typer.echo)

    _run(work, operator=False, chat=True)


async def _load_sample(lore: Lore) -> None:
    from graphs.ingest.state import chunks_text

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


# Kept in step with EDGE_SETTINGS by tests/test_terminal_chat.py.
NO_EDGE = (
    "No chat edge is configured and there is no input to answer: set TELEGRAM_BOT_TOKEN, "
    "SLACK_BOT_TOKEN, DISCORD_BOT_TOKEN or MCP_HTTP_PORT (see docs/configuration.md), "
    "or run Lore at a terminal."
)


@app.command()
def run() -> None:
    """Start Lore: every configured chat edge, the jobs, and the terminal chat when there is
    a terminal (or when no chat edge is configured)."""
    from bot.app.edges import EDGE_SETTINGS, platform_edges, terminal_edge
    from bot.app.run import run_edges

    async def work(lore: Lore) -> bool:
        await _load_sample(lore)
        edges = await platform_edges(lore)
        interactive = sys.stdin.isatty()
        if not interactive and not edges:
            logger.info("No chat edge configured (%s); reading stdin", ", ".join(EDGE_SETTINGS))
        if not (interactive or edges):
            terminal = terminal_edge(interactive=False)
            await run_edges(lore, [terminal], announce=typer.echo)
            return terminal.got_input
        if interactive:
            edges.append(terminal_edge(interactive=True))
        await run_edges(lore, edges, announce=typer.echo)
        return True

    if not _run(work, operator=False, chat=True):
        # Nothing to serve and nothing was asked: a container without a terminal.
        typer.echo(NO_EDGE, err=True)
        raise typer.Exit(2)


@app.command("mcp")
def mcp() -> None:
    """Serve Lore to a local MCP client over stdin/stdout (read-only, as the local owner)."""
    from bot.app.edges import mcp_stdio_edge
    from bot.app.run import run_edges

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
        str, typer.Option(help="tool_selection, task_completion, guards, benign or all.")
    ] = "all",
    cases: Annotated[
        Path | None,
        typer.Option(help="A JSON file of cases to run instead of the suite's own (one suite)."),
    ] = None,
) -> None:
    """Run the evaluation suites in a throw-away data directory; exit 1 if a gate fails.

    The run never touches DATA_DIR: it loads its own fixture knowledge into a temporary
    directory, uses the configured model (LLM_*), and removes the directory afterwards."""
    from bot.settings import SettingsError, load_settings
    from evals.hermetic import hermetic_lore
    from evals.runner import (
        SUITES,
        CaseResult,
        EvalSetupError,
        case_report,
        load_cases_file,
        load_suite,
        run_suite,
        suite_report,
    )
    from graphs.llm.offline import MODEL_NAME
    from storage.evals import EvalRepository
    from storage.incidents import IncidentRepository

    names = SUITES if suite == "all" else (suite,)
    try:
        if cases is not None and suite == "all":
            raise EvalSetupError("--cases runs one suite: name it with --suite.")
        suites = {
            name: load_suite(name) if cases is None else load_cases_file(name, cases)
            for name in names
        }
        operator = load_settings()
    except (LoreError, SettingsError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    _configure_logging(operator)
    provider = operator.llm_model if operator.llm_base_url else MODEL_NAME

    async def work() -> bool:
        passed = True
        async with hermetic_lore(operator) as lore:
            for name, suite_cases in suites.items():

                def show(case: CaseResult, suite_name: str = name) -> None:
                    typer.echo(case_report(suite_name, case))

                result = await run_suite(
                    lore.bot,
                    name,
                    suite_cases,
                    provider_name=provider,
                    repository=EvalRepository(lore.database),
                    owner=LOCAL_OWNER,
                    incidents=IncidentRepository(lore.database),
                    on_case=show,
                )
                typer.echo(suite_report(result, provider))
                passed = passed and result.passed_gate
        return passed

    try:
        all_passed = asyncio.run(work())
    except LoreError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    if not all_passed:
        raise typer.Exit(1)


@app.callback()
def options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback when a command fails.")
    ] = False,
) -> None:
    """Options for every command."""
    set_debug(debug)


@app.command()
def health() -> None:
    """Exit 0 when a bot runs on this data directory and answers; 1, saying so, when not."""
    from bot.control.client import ask_health
    from bot.control.output import TerminalOutput
    from bot.settings import load_settings

    with reported_errors():
        data_dir = load_settings().data_dir
    if asyncio.run(ask_health(data_dir, TerminalOutput())):
        raise typer.Exit(1)


@app.command()
def delete(
    handle: Annotated[str, typer.Argument(help="The document's handle, as /sources shows it.")],
    user: Annotated[str | None, typer.Option(help="A document of this user's notes.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete one document everywhere: its rows, chunks, vectors and original."""
    from bot.deletion import confirm_deletion

    async def work(lore: Lore) -> bool:
        who = await _acting_as(lore.bot, user, create=False)
        document = await lore.bot.document(who, handle)
        if not yes and not await confirm_deletion(document):
            return False
        title = await lore.bot.delete_document(who, document.id)
        typer.echo(f"Deleted {title} ({document.handle}).")
        return True

    if not _run(work):
        raise typer.Exit(1)


def _settings() -> Settings:
    from bot.settings import load_settings

    with reported_errors():
        settings = load_settings()
    _configure_logging(settings)
    return settings


@app.command()
def backup(
    path: Annotated[Path, typer.Argument(help="A new or empty folder for the backup.")],
) -> None:
    """Write a consistent snapshot of the data directory, also while the bot runs."""
    from bot.app.core import backup_layout
    from bot.app.models import utc_now
    from bot.app.stored_model import with_stored_model
    from bot.backups import back_up_from_outside, describe_backup
    from storage.data_lock import held_elsewhere

    target = path.expanduser().absolute()
    settings = _settings()
    if held_elsewhere(settings.data_dir):  # the running bot: copy beside it
        outside = back_up_from_outside(
            backup_layout(with_stored_model(settings)), target, utc_now()
        )
        try:
            manifest = asyncio.run(outside)
        except LoreError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
        typer.echo(describe_backup(target, manifest))
        return

    async def work(lore: Lore) -> str:
        return describe_backup(target, await lore.bot.maintenance.backup(target))

    typer.echo(_run(work))


@app.command()
def restore(
    path: Annotated[Path, typer.Argument(help="A folder `lore backup` wrote.")],
    force: Annotated[bool, typer.Option(help="Replace what DATA_DIR holds.")] = False,
) -> None:
    """Bring a backup back into an empty DATA_DIR (the bot must be stopped)."""
    from bot.app.core import backup_layout
    from bot.app.stored_model import with_stored_model
    from bot.backups import describe_restore, restore_into

    source = path.expanduser().absolute()
    settings = _settings()
    try:
        report = asyncio.run(
            restore_into(backup_layout(with_stored_model(settings)), source, force=force)
        )
    except LoreError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None

    async def work(lore: Lore) -> str:
        finished = await lore.bot.maintenance.finish_restore(reembed=report.reembed)
        return describe_restore(source, report, finished)

    typer.echo(_run(work))


def main() -> None:
    """Console-script entry point: whatever a command did not handle is still one line."""
    run_program(app)
