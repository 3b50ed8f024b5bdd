"""Schema steps for what Lore reads in its documents: the language each is in. Released
steps are never edited; add new ones at the end."""

from __future__ import annotations

import aiosqlite

from storage.text_language import detect_language

__all__ = ["add_document_language"]

#: Characters of a document's first chunks the backfill reads (as the detector samples).
_SAMPLE_CHARS = 1200


async def add_document_language(db: aiosqlite.Connection) -> None:
    """The language a document is in (an ISO 639-1 code): the one a model heard while
    reading it (whisper's, for a recording), else the one its text is written in; "" when
    neither could tell. Existing documents are backfilled in the same step from the text of
    their first chunks, as a new document's language is detected from its text."""
    await db.execute("ALTER TABLE documents ADD COLUMN language TEXT NOT NULL DEFAULT ''")
    samples: dict[str, str] = {}
    async with db.execute(
        "SELECT document_id, text FROM chunks WHERE chunk_index < 3"
        " ORDER BY document_id, chunk_index"
    ) as cursor:
        async for document_id, text in cursor:
            sample = samples.get(document_id, "")
            if len(sample) < _SAMPLE_CHARS:
                samples[document_id] = f"{sample}\n{text}"[:_SAMPLE_CHARS]
    found = [
        (language, document_id)
        for document_id, sample in samples.items()
        if (language := detect_language(sample))
    ]
    await db.executemany("UPDATE documents SET language = ? WHERE id = ?", found)
