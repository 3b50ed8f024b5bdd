"""Deleting one document from the terminal (`lore delete`): the y/N question and what is said
when it is declined or cannot be asked. The question is asked at the terminal of whoever ran
the command, also when the running bot does the deletion (`bot.control`); the deletion itself
is the `Bot`'s (`Bot.delete_document`), as in the chat."""

from __future__ import annotations

from storage.documents import DocumentRecord

__all__ = ["NOT_DELETED", "NO_TERMINAL", "deletion_question"]

NO_TERMINAL = (
    "Nothing was deleted: there is no terminal to confirm at. Add --yes to delete without asking."
)
NOT_DELETED = "Nothing was deleted."


def deletion_question(document: DocumentRecord) -> str:
    """The y/N question for deleting `document`."""
    where = "the shared knowledge" if document.owner_id is None else "private notes"
    return f"Delete {document.title} ({document.handle}, {where})? This cannot be undone."
