"""Where a command's output goes: `Output` is the sink its body writes to; `TerminalOutput`
prints to this process's stdout and stderr, with a progress bar for folder ingests, and
asks its yes/no questions at this process's terminal.

The bot's control server writes the same calls as frames to the socket, and the CLI plays
them into a `TerminalOutput`: a command prints the same lines wherever it runs.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, Protocol

import click
import typer
from tqdm import tqdm

__all__ = ["Output", "TerminalOutput"]


class Output(Protocol):
    """A command's lines and progress."""

    def echo(self, text: str, *, err: bool = False) -> None:
        """One line for stdout, or for stderr when `err`."""

    def progress(self, total: int, description: str) -> None:
        """A bar of `total` steps begins."""

    def advance(self) -> None:
        """One step of the bar is done."""

    def progress_end(self) -> None:
        """The bar is finished."""

    async def confirm(self, question: str) -> bool | None:
        """Ask the person at the command's terminal; None when there is no terminal."""


class TerminalOutput:
    """Lines to this process's stdout/stderr; the bar (tqdm) on stderr, lines written above it."""

    def __init__(self) -> None:
        self._bar: tqdm[Any] | None = None

    def echo(self, text: str, *, err: bool = False) -> None:
        """Print a line (above the bar while one is shown)."""
        if self._bar is None:
            typer.echo(text, err=err)
        else:
            tqdm.write(text, file=sys.stderr if err else sys.stdout)

    def progress(self, total: int, description: str) -> None:
        """Show a bar (replacing any earlier one)."""
        self.progress_end()
        self._bar = tqdm(total=total, desc=description, unit="file")

    def advance(self) -> None:
        """Move the bar one step."""
        if self._bar is not None:
            self._bar.update(1)

    def progress_end(self) -> None:
        """Close the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    async def confirm(self, question: str) -> bool | None:
        """y/N at this terminal (no, when the input ends); None without a terminal."""
        if not sys.stdin.isatty():
            return None
        self.progress_end()
        try:
            return await asyncio.to_thread(typer.confirm, question, default=False)
        except click.Abort:
            return False
