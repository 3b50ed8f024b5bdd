"""Deleting one document from the terminal (`lore delete`): the y/N question, asked only at a
terminal. The deletion itself is the `Bot`'s (`Bot.delete_document`), as in the chat."""

from __future__ import annotations

import asyncio
import sys

import typer

from storage.documents import DocumentRecord

__all__ = ["NO_TERMINAL", "confirm_deletion"]

NO_TERMINAL = (
    "Nothing was deleted: there is no terminal to confirm at. Add --yes to delete without asking."
)


async def confirm_deletion(document: DocumentRecord) -> bool:
    """Ask y/N at a terminal; without one, refuse (the caller exits non-zero)."""
    where = "the shared knowledge" if document.owner_id is None else "private notes"
    if not sys.stdin.isatty():
        typer.echo(NO_TERMINAL, err=True)
        return False
    question = f"Delete {document.title} ({document.handle}, {where})? This cannot be undone."
    if await asyncio.to_thread(typer.confirm, question, default=False):
        return True
    typer.echo("Nothing was deleted.")
    return False
