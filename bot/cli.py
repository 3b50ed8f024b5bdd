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
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bot.cli_errors import reported_errors, run_program, set_debug
from bot.cli_runner import (
    cli_settings,
    here,
    in_the_bot,
    ingest_folder,
    perform,
    run_core,
)
from bot.people import LOCAL_OWNER
from storage.private_files import keep_files_private

if TYPE_CHECKING:
    from bot.app import Lore
    from bot.settings import Settings

__all__ = ["app", "main"]

logger = logging.getLogger(__name__)

app = typer.Typer(
    name="lore",
    help="Lore: a self-hosted knowledge-base agent for chat apps.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
def ingest(
    source: Annotated[str, typer.Argument(help="A file, a folder or an http(s) URL.")],
    shared: Annotated[bool, typer.Option(help="Add to the shared knowledge.")] = False,
    user: Annotated[str | None, typer.Option(help="Whose private collection.")] = None,
) -> None:
    """Remember a file, every supported file in a folder, or a web page."""
    perform("ingest", source=source, shared=shared, user=user, cwd=str(Path.cwd()))


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    user: Annotated[str | None, typer.Option(help="Also search this user's notes.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=50)] = 5,
) -> None:
    """Show the passages that best match a query, with their source and score."""
    perform("search", query=query, user=user, limit=limit)


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

        typer.echo(run_core(reindex_all, rebuild_vectors=True))
        return
    perform("reindex")


@app.command()
def stats() -> None:
    """Counts of users, documents, chunks and vectors."""
    perform("stats")


@app.command()
def chat() -> None:
    """Chat with Lore in the terminal."""
    from bot.app.edges import terminal_edge
    from bot.app.run import run_edges

    async def work(lore: Lore) -> None:
        edge = terminal_edge(interactive=sys.stdin.isatty())
        await run_edges(lore, [edge], announce=typer.echo)

    run_core(work, operator=False, chat=True)


async def _load_sample(lore: Lore) -> None:
    """Load SAMPLE_DOCS_DIR into the shared knowledge: a progress bar, no line per file."""
    from bot.errors import IngestRefusedError
    from graphs.ingest.state import chunks_text

    sample = lore.settings.sample_docs_dir
    if sample is None or not await asyncio.to_thread(sample.is_dir):
        return
    try:
        failures = await ingest_folder(
            lore.bot.maintenance.load_shared,
            sample,
            shared=True,
            lines=False,
            description="Loading the sample docs",
        )
    except IngestRefusedError as exc:  # a sample folder with nothing Lore reads
        typer.echo(str(exc), err=True)
        return
    counts = await lore.bot.maintenance.stats()
    typer.echo(
        f"Knowledge base: {counts.shared_documents} shared documents, "
        f"{chunks_text(counts.chunks)} ({failures} sample files skipped)."
    )


# Kept in step with EDGE_SETTINGS by tests/test_terminal_chat.py.
NO_EDGE = (
    "No chat edge is configured and there is no input to answer: set TELEGRAM_BOT_TOKEN, "
    "SLACK_BOT_TOKEN, DISCORD_BOT_TOKEN, MATRIX_HOMESERVER or MCP_HTTP_PORT (see "
    "docs/configuration.md), or run Lore at a terminal."
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

    if not run_core(work, operator=False, chat=True):
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

    run_core(work, operator=False)


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

    run_core(work)


@app.command("eval")
def eval_suites(
    suite: Annotated[
        str, typer.Option(help="tool_selection, task_completion, guards, benign or all.")
    ] = "all",
    cases: Annotated[
        Path | None,
        typer.Option(help="A JSON file of cases to run instead of the suite's own (one suite)."),
    ] = None,
    provider_url: Annotated[
        str | None,
        typer.Option(help="An OpenAI-compatible endpoint to evaluate instead of LLM_BASE_URL."),
    ] = None,
    model: Annotated[str | None, typer.Option(help="The model name, instead of LLM_MODEL.")] = None,
) -> None:
    """Run the evaluation suites in a throw-away data directory; exit 1 if a gate fails.

    The run never touches DATA_DIR: it loads its own fixture knowledge into a temporary
    directory, uses the configured model (LLM_*, or --provider-url and --model), and removes
    the directory afterwards."""
    from bot.eval_command import run_evaluation

    overrides = {"llm_base_url": provider_url, "llm_model": model}
    code = run_evaluation(suite, cases, {k: v for k, v in overrides.items() if v})
    if code:
        raise typer.Exit(code)


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
    perform("delete", handle=handle, user=user, yes=yes)


@app.command()
def backup(
    path: Annotated[Path, typer.Argument(help="A new or empty folder for the backup.")],
) -> None:
    """Write a consistent snapshot of the data directory, also while the bot runs."""
    from bot.control import operations
    from bot.control.output import TerminalOutput
    from bot.control.protocol import ELSEWHERE_EXIT
    from storage.data_lock import held_elsewhere

    target = path.expanduser().absolute()
    settings = cli_settings()
    out = TerminalOutput()
    args: dict[str, object] = {"path": str(target), **operations.folder_anchor(target)}
    code = in_the_bot(settings.data_dir, "backup", args, out)
    if code == ELSEWHERE_EXIT:
        typer.echo(
            f"The running bot does not see {target} (it runs in another container): "
            "copying beside it, without the vectors.",
            err=True,
        )
    if code == ELSEWHERE_EXIT or (code is None and held_elsewhere(settings.data_dir)):
        _back_up_beside_the_bot(settings, target)  # a bot without a control socket
        return
    if code is None:
        code = here("backup", args, out)
    if code:
        raise typer.Exit(code)


def _back_up_beside_the_bot(settings: Settings, target: Path) -> None:
    """Copy the databases and originals beside the process that holds them (no vectors)."""
    from bot.app.core import backup_layout
    from bot.app.models import utc_now
    from bot.app.stored_model import with_stored_model
    from bot.backups import back_up_from_outside, describe_backup

    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        manifest = asyncio.run(
            back_up_from_outside(backup_layout(with_stored_model(settings)), target, utc_now())
        )
    typer.echo(describe_backup(target, manifest))


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
    settings = cli_settings()
    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        report = asyncio.run(
            restore_into(backup_layout(with_stored_model(settings)), source, force=force)
        )

    async def work(lore: Lore) -> str:
        finished = await lore.bot.maintenance.finish_restore(reembed=report.reembed)
        return describe_restore(source, report, finished)

    typer.echo(run_core(work))


def main() -> None:
    """Console-script entry point: whatever a command did not handle is still one line.
    Everything the command writes (data, logs, backups) is owner-only (umask 077)."""
    keep_files_private()
    run_program(app)
