"""How a `lore` command runs: its settings and logging, the core opened for one piece of
work and closed (a failure is one line, `bot.cli_errors`), and a store command sent to the
running bot over its control socket when one holds the data directory, else run here.

Like `bot.cli`, it imports the core and its engines inside the functions that use them."""

# ruff: noqa: PLC0415 - heavy imports live in the function bodies, see the docstring

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

from bot.cli_errors import reported_errors
from bot.library_output import route_library_output
from bot.log_redaction import configure_logging

if TYPE_CHECKING:
    from bot.app import Lore
    from bot.control.output import Output
    from bot.settings import Settings
    from bot.sources import Source
    from graphs.ingest.state import IngestResult

__all__ = [
    "Ingest",
    "cli_settings",
    "configure_cli_logging",
    "configured_data_dir",
    "here",
    "in_the_bot",
    "ingest_folder",
    "perform",
    "run_core",
    "say_when_the_model_is_built",
]

T = TypeVar("T")
Ingest = Callable[["Source"], Awaitable["IngestResult"]]


def configure_cli_logging(settings: Settings, *, to_file: bool = False) -> None:
    """Log to stderr; `to_file` (the terminal chat watched at a terminal): to DATA_DIR/logs."""
    if to_file:
        from adapters.console import print_above_prompt
        from bot.chat_logs import log_to_file

        path = log_to_file(settings.data_dir, show=print_above_prompt, level=settings.log_level)
        typer.echo(f"Logs go to {path}")
    configure_logging(settings.log_level, settings.log_level_third_party, settings.secret_values())
    route_library_output(level=settings.log_level)


def run_core(
    work: Callable[[Lore], Awaitable[T]],
    *,
    operator: bool = True,
    chat: bool = False,
    rebuild_vectors: bool = False,
) -> T:
    """Open the core, run one piece of work, close; a failure ends the command with one line
    on stderr (see `bot.cli_errors`).

    `operator`: the person at the terminal acts as an owner (maintenance commands).
    `chat`: the work runs the terminal chat; when a person watches it (stdin or stderr is a
    terminal, as with `printf ... | make run`), logs go to a file."""
    from bot.app import open_lore
    from bot.settings import load_settings

    with reported_errors():
        settings = load_settings()
    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        watched = sys.stdin.isatty() or sys.stderr.isatty()
        configure_cli_logging(settings, to_file=chat and watched)

    if chat:
        say_when_the_model_is_built(settings)

    async def go() -> T:
        async with open_lore(settings, operator=operator, rebuild_vectors=rebuild_vectors) as lore:
            return await work(lore)

    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        return asyncio.run(go())


def say_when_the_model_is_built(settings: Settings) -> None:
    """The terminal chat logs to a file: say on screen why the first start pauses."""
    from bot.app.stored_model import with_stored_model
    from storage.model_files import is_assembled

    with reported_errors(secrets=settings.secret_values(), data_dir=settings.data_dir):
        key = with_stored_model(settings).embedding_model
        if not is_assembled(settings.models_dir, key):
            typer.echo(f"Preparing the embedding model {key} (once, about 10 s)…", err=True)


async def ingest_folder(
    ingest: Ingest,
    folder: Path,
    *,
    shared: bool,
    lines: bool = True,
    description: str = "Ingesting",
) -> int:
    """Ingest every supported file under `folder` with a progress bar on stderr; return how
    many were refused (see `bot.control.operations.ingest_folder`)."""
    from bot.control import operations
    from bot.control.output import TerminalOutput

    return await operations.ingest_folder(
        ingest, folder, TerminalOutput(), shared=shared, lines=lines, description=description
    )


def configured_data_dir() -> Path:
    """DATA_DIR as the settings say (a wrong setting ends the command with one line)."""
    from bot.settings import load_settings

    with reported_errors():
        return load_settings().data_dir


def in_the_bot(data_dir: Path, op: str, args: dict[str, object], out: Output) -> int | None:
    """Run store command `op` in the running bot over its control socket; its exit code, or
    None when no bot listens on `data_dir`."""
    from bot.control.client import connect

    async def send() -> int | None:
        connection = await connect(data_dir)
        if connection is None:
            return None
        async with connection:
            return await connection.run(op, args, out)

    return asyncio.run(send())


def here(op: str, args: dict[str, object], out: Output) -> int:
    """Run store command `op` with this process's own store; its exit code."""
    from bot.control import operations

    async def work(lore: Lore) -> int:
        call = operations.Call(lore.bot, out, operations.Args(args), alone=True)
        return await operations.perform(op, call)

    return run_core(work)


def perform(op: str, **args: object) -> None:
    """Run store command `op` in the running bot (over its control socket) when one holds
    the data directory, else with this process's own store; the same lines and exit code."""
    from bot.control.output import TerminalOutput

    out = TerminalOutput()
    code = in_the_bot(configured_data_dir(), op, args, out)
    if code is None:
        code = here(op, args, out)
    if code:
        raise typer.Exit(code)


def cli_settings() -> Settings:
    """The settings, read once, with logging configured from them."""
    from bot.settings import load_settings

    with reported_errors():
        settings = load_settings()
    configure_cli_logging(settings)
    return settings
