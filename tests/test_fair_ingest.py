"""Row A of the third hardening round (issue 27): one member's long document never stalls
another member's question, a member's sources wait in line with their place shown, a document
has at most MAX_CHUNKS_PER_DOCUMENT chunks, and a search that runs out of time is an error
the member is told about, never a logged "unanswered question"."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import numpy as np
import pytest

from bot.app import Lore, open_lore
from bot.errors import IngestRefusedError
from bot.sources import Source
from graphs.agent.verify import SEARCH_TIMED_OUT
from storage.document_records import Collection
from storage.documents import DocumentRepository
from tests.chat_turns import OWNER, ask, local_member, remember, user_id
from tests.conftest import LOOPBACK, SettingsFactory

SECTIONS = 5_000
PROGRESS = re.compile(rf"⏳ Embedding [\d,]+ of {SECTIONS:,} chunks\.\.\.")


def handbook(sections: int) -> bytes:
    """A Markdown file whose every section is one chunk of about 100 tokens (sibling sections
    never merge)."""
    parts = [
        f"## Valve {number}\n\n"
        + f"Valve {number} sits in room {number % 40}; it should read {number % 9 + 1} bar. " * 6
        for number in range(sections)
    ]
    return ("# Plant handbook\n\n" + "\n\n".join(parts)).encode()


def recorder(lines: list[str], wanted: str, seen: asyncio.Event) -> Callable[[str], None]:
    """A progress sink that keeps every line and sets `seen` once one contains `wanted`."""

    def sink(line: str) -> None:
        lines.append(line)
        if wanted in line:
            seen.set()

    return sink


async def test_row_a_a_question_is_answered_while_another_member_ingests_5000_chunks(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(max_file_bytes=4 * 1024 * 1024)
    async with open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore:
        bot = lore.bot
        uploader, asker = await local_member(bot, "ursula"), await local_member(bot, "arne")
        note = await remember(
            bot, asker, "The boiler room key hangs on the hook behind the blue door."
        )
        big_lines: list[str] = []
        embedding, answered, progressed = asyncio.Event(), asyncio.Event(), asyncio.Event()

        def big_progress(line: str) -> None:
            big_lines.append(line)
            if line == f"⏳ Embedding {SECTIONS} chunks...":
                embedding.set()
            if answered.is_set() and PROGRESS.fullmatch(line):
                progressed.set()  # the handbook went on embedding after the answer

        big = asyncio.create_task(
            bot.ingest(
                uploader,
                Source(data=handbook(SECTIONS), file_name="handbook.md"),
                on_progress=big_progress,
            )
        )
        await embedding.wait()

        turn = await ask(bot, asker, "Where does the boiler room key hang?")
        answered.set()

        assert turn.done.outcome == "answered", turn.events
        assert [c.document_id for c in turn.done.citations] == [note.document_id]
        assert "blue door" in turn.done.answer
        # The answer came while the handbook was still being embedded: its embedding goes on
        # afterwards (on a model held for the whole document, the handbook would be saved first).
        waiting = asyncio.create_task(progressed.wait())
        await asyncio.wait([waiting, big], return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        assert progressed.is_set(), big_lines
        assert lore.embedding.counts.queries_ahead_of_passages >= 1

        # The uploader's next source waits behind the handbook, and says so.
        later_lines: list[str] = []
        queued = asyncio.Event()
        later = asyncio.create_task(
            bot.ingest(
                uploader,
                Source(text="Valve 7 was replaced in May."),
                on_progress=recorder(later_lines, "position 2", queued),
            )
        )
        await queued.wait()
        assert later_lines == [
            "⏳ In line behind 1 earlier source of yours (position 2); I'll start on this as "
            "soon as the one before it is saved."
        ]
        assert not later.done()
        assert not big.done()

        for task in (big, later):
            task.cancel()
        await asyncio.gather(big, later, return_exceptions=True)
        # A cancelled ingest left nothing behind.
        documents = DocumentRepository(lore.database)
        assert await documents.list_for_owner(await user_id(bot, uploader)) == []


async def test_row_a_a_document_over_max_chunks_per_document_is_refused_with_a_clear_message(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(max_chunks_per_document=40)
    async with open_lore(settings) as lore:
        member = await local_member(lore.bot, "mia")
        with pytest.raises(IngestRefusedError) as refused:
            await lore.bot.ingest(member, Source(data=handbook(60), file_name="handbook.md"))
        message = re.fullmatch(
            r"That is too long to keep as one document: it makes (\d+) chunks, and Lore keeps at "
            r"most 40 per document \(the owner sets this with MAX_CHUNKS_PER_DOCUMENT\)\. Please "
            r"split it into smaller parts and send them one by one\.",
            str(refused.value),
        )
        assert message is not None, refused.value
        assert int(message.group(1)) > 40
        documents = DocumentRepository(lore.database)
        assert await documents.list_for_owner(await user_id(lore.bot, member)) == []
        assert await lore.index.count(Collection.PRIVATE) == 0
        saved = await lore.bot.ingest(member, Source(data=handbook(30), file_name="handbook.md"))
        assert 0 < saved.chunk_count <= 40


async def test_row_a_a_search_that_runs_out_of_time_is_an_error_not_an_unanswered_question(
    make_settings: SettingsFactory,
) -> None:
    # One millisecond is less than any search takes (a query embedding alone takes several).
    settings = make_settings(tool_timeout_seconds=0.001)
    async with open_lore(settings) as lore:
        member = await local_member(lore.bot, "tim")
        await remember(lore.bot, member, "The printer on floor two takes A3 paper.")

        turn = await ask(lore.bot, member, "Which paper does the printer on floor two take?")

        assert turn.done.outcome == "error", turn.events
        assert [error.message for error in turn.errors] == [SEARCH_TIMED_OUT]
        assert turn.refusals == []
        assert await lore.bot.unanswered(OWNER) == []


async def test_row_a_documents_of_two_members_take_the_model_in_turns(lore: Lore) -> None:
    book = [f"Chapter {number}: the river rises in the hills." for number in range(64)]
    note = [f"Note {number}: buy more coffee." for number in range(16)]
    finished: list[str] = []
    book_done: list[int] = []

    async def embed(name: str, texts: list[str]) -> list[list[float]]:
        vectors = await lore.embedding.embed_passages(
            texts, done=book_done.append if name == "book" else None
        )
        finished.append(name)
        return vectors

    book_vectors, note_vectors = await asyncio.gather(embed("book", book), embed("note", note))

    # The short note finished first, while the book had taken only a few more slices.
    assert finished == ["note", "book"]
    assert book_done[-1] == len(book)
    assert book_done == sorted(set(book_done))  # slice after slice
    # Slicing changes no vector.
    whole = await lore.embedder.embed_passages(book + note)
    assert np.allclose(book_vectors + note_vectors, whole, atol=1e-5)
