"""The ingest graph end to end on the real core: every source kind, dedupe, updates, refusals."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from bot.app import Lore
from bot.errors import IngestRefusedError
from bot.sources import Source
from graphs.ingest.state import IngestOutcome, RawSource
from storage.documents import Collection
from tests.chat_turns import OWNER, local_member, remember, user_id
from tests.fakes.http_server import ScriptedServer, static
from tests.sample_files import docx_bytes, pdf_bytes

GUIDE = """# Garden guide

## Tomatoes

Tomatoes need full sun, deep watering twice a week and a stake to climb.

## Basil

Basil grows best beside tomatoes and should be pinched before it flowers.

## Compost

Turn the compost heap every two weeks so that it stays aerobic and warm.
"""

ARTICLE = b"""<html><head><title>Sourdough basics</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Sourdough basics</h1>
<p>A sourdough starter is a culture of wild yeast and lactic acid bacteria kept in flour
and water. Feed the starter daily with equal weights of flour and water, and bake when it
doubles within six hours of feeding.</p>
<p>Long cold fermentation in the fridge gives the bread a more sour taste and a better crust.</p>
</article><footer>Copyright 2026, cookie settings</footer></body></html>"""


async def counts(lore: Lore) -> tuple[int, int, int, int]:
    stats = await lore.bot.maintenance.stats()
    return (
        stats.shared_documents + stats.private_documents,
        stats.chunks,
        (stats.knowledge_points),
        stats.private_points,
    )


async def uploads(lore: Lore) -> list[Path]:
    root = lore.settings.uploads_dir
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


async def test_a_note_is_saved_searchable_and_kept_on_disk(lore: Lore) -> None:
    ann = await local_member(lore.bot, "ann")
    steps: list[str] = []
    result = await lore.bot.ingest(
        ann,
        Source(text="The wifi password for the cabin is on the fridge."),
        on_progress=steps.append,
    )
    assert result.outcome is IngestOutcome.SAVED
    assert result.chunk_count == 1
    assert steps[-1].startswith("⏳ Saved: ")
    hits = await lore.bot.search(ann, "where is the cabin wifi password?")
    assert hits[0].passage.document_id == result.document_id
    assert hits[0].private


@pytest.mark.parametrize(
    ("name", "data", "query", "expected"),
    [
        ("guide.md", GUIDE.encode(), "how often to turn compost", "Turn the compost heap"),
        (
            "notes.txt",
            b"Invoices are due on the 5th of each month.\n",
            "when are invoices due",
            "Invoices are due",
        ),
        ("bread.html", ARTICLE, "how to feed a sourdough starter", "Feed the starter daily"),
        ("report.pdf", None, "quarterly revenue of the bakery", "revenue grew"),
        ("plan.docx", None, "who owns the launch checklist", "Maria owns the launch checklist"),
    ],
)
async def test_each_file_type_is_ingested_and_found(
    lore: Lore, tmp_path: Path, name: str, data: bytes | None, query: str, expected: str
) -> None:
    if data is None:
        data = (
            pdf_bytes(["Bakery report", "In the third quarter revenue grew by 12 percent."])
            if name.endswith(".pdf")
            else docx_bytes("Launch plan", [("Owners", "Maria owns the launch checklist.")])
        )
    path = tmp_path / name
    path.write_bytes(data)
    result = await remember(lore.bot, None, path=path)
    assert result.outcome is IngestOutcome.SAVED
    assert result.pending_chunks == 0
    hits = await lore.bot.search(OWNER, query, private=False, limit=3)
    assert hits, "the new document should be found"
    assert hits[0].passage.document_id == result.document_id
    assert expected in hits[0].passage.text


async def test_invariant_6_originals_are_kept(lore: Lore, tmp_path: Path) -> None:
    bob = await local_member(lore.bot, "bob")
    owner = await user_id(lore.bot, bob)
    note = await remember(lore.bot, bob, "Bob's bike lock code is 4711.")
    path = tmp_path / "guide.md"
    path.write_text(GUIDE)
    file = await remember(lore.bot, None, path=path)
    async with ScriptedServer(routes={"/bread": static(ARTICLE, "text/html")}) as site:
        page = await remember(lore.bot, bob, url=site.url("/bread"))
    root = lore.settings.uploads_dir
    assert (root / owner / note.document_id).is_dir()
    assert [p.read_text() for p in (root / owner / note.document_id).iterdir()] == [
        "Bob's bike lock code is 4711."
    ]
    assert [p.read_text() for p in (root / "shared" / file.document_id).iterdir()] == [GUIDE]
    assert [p.read_bytes() for p in (root / owner / page.document_id).iterdir()] == [ARTICLE]
    for result in (note, file, page):
        row = await lore.database.fetch_one(
            "SELECT original_path FROM documents WHERE id = ?", (result.document_id,)
        )
        assert row is not None
        assert Path(row["original_path"]).is_file()


async def test_same_content_is_recognised_not_stored_twice(lore: Lore, tmp_path: Path) -> None:
    cy = await local_member(lore.bot, "cy")
    first = await remember(lore.bot, cy, GUIDE)
    again = await remember(lore.bot, cy, GUIDE)
    assert again.outcome is IngestOutcome.DUPLICATE
    assert again.document_id == first.document_id
    # The same content for another owner is that owner's own document.
    other = await remember(lore.bot, None, text=GUIDE)
    assert other.outcome is IngestOutcome.SAVED
    assert await counts(lore) == (2, 2 * first.chunk_count, first.chunk_count, first.chunk_count)


async def test_a_changed_source_re_embeds_only_changed_chunks(lore: Lore, tmp_path: Path) -> None:
    # Sibling sections are never merged, so each H2 becomes its own chunk.
    sections = GUIDE.replace("# Garden guide\n\n", "")
    path = tmp_path / "guide.md"
    path.write_text(sections)
    first = await remember(lore.bot, None, path=path)
    assert first.chunk_count == 3
    compost = sections.index("## Compost")
    path.write_text(sections[:compost].replace("twice a week", "every morning"))
    second = await remember(lore.bot, None, path=path)
    assert second.outcome is IngestOutcome.UPDATED
    assert second.document_id == first.document_id
    assert (second.chunk_count, second.embedded_chunks, second.removed_chunks) == (2, 1, 2)
    assert await counts(lore) == (1, 2, 2, 0)
    hits = await lore.bot.search(OWNER, "how often to water tomatoes", private=False, limit=1)
    assert "every morning" in hits[0].passage.text
    assert not await lore.bot.search(OWNER, "compost heap aerobic", private=False, limit=5) or all(
        "compost" not in hit.passage.text.lower()
        for hit in await lore.bot.search(OWNER, "compost heap aerobic", private=False, limit=5)
    )


BAD_INPUTS = [
    ("program.exe", b"MZ\x90\x00binary", "only reads"),
    ("empty.md", b"   \n\n", "no text"),
    ("latin.txt", "Caf\xe9 cr\xe8me".encode("latin-1"), "UTF-8"),
    ("huge.txt", b"a" * (600 * 1024), "MB"),
    ("blank.pdf", None, "scanned"),
    ("bomb.docx", None, "would expand"),
]


@pytest.mark.parametrize(("name", "data", "words"), BAD_INPUTS)
async def test_bad_files_are_refused_and_leave_nothing(
    lore: Lore, tmp_path: Path, name: str, data: bytes | None, words: str
) -> None:
    if data is None:
        from tests.sample_files import blank_pdf_bytes, zip_bomb_docx_bytes  # noqa: PLC0415

        data = blank_pdf_bytes() if name.endswith(".pdf") else zip_bomb_docx_bytes()
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(IngestRefusedError, match=words):
        await remember(lore.bot, None, path=path)
    assert await counts(lore) == (0, 0, 0, 0)
    assert await uploads(lore) == []


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://10.0.0.1/admin", "private"),
        ("http://169.254.169.254/latest/meta-data/", "metadata|link-local"),
        ("ftp://example.com/file.txt", "http"),
        ("http://127.0.0.1:9/closed", "reach|connect|fetch"),
    ],
)
async def test_refused_or_unreachable_urls_leave_nothing(lore: Lore, url: str, words: str) -> None:
    with pytest.raises(IngestRefusedError, match=words):
        await remember(lore.bot, None, url=url)
    assert await counts(lore) == (0, 0, 0, 0)
    assert await uploads(lore) == []


async def test_a_page_that_redirects_to_a_private_address_is_refused(lore: Lore) -> None:
    from tests.fakes.http_server import answer  # noqa: PLC0415

    async def to_metadata(seen: object, reader: object, writer: object) -> None:
        await answer(writer, "302 Found", Location="http://169.254.169.254/")  # type: ignore[arg-type]

    async with ScriptedServer(routes={"/go": to_metadata}) as site:
        with pytest.raises(IngestRefusedError):
            await remember(lore.bot, None, url=site.url("/go"))
        assert [r.path for r in site.requests] == ["/go"]
    assert await counts(lore) == (0, 0, 0, 0)


async def test_stats_count_both_collections(lore: Lore) -> None:
    dee = await local_member(lore.bot, "dee")
    await remember(lore.bot, dee, "private fact one")
    await remember(lore.bot, None, text="shared fact two")
    assert await lore.index.count(Collection.KNOWLEDGE) == 1
    assert await lore.index.count(Collection.PRIVATE) == 1


async def test_nothing_keeps_an_ingested_file_in_memory(lore: Lore, tmp_path: Path) -> None:
    """The extraction worker started for a file outlives its ingest, and so do the event-loop
    callbacks of its pipes; they must not keep that ingest's state (the file's bytes, its
    text, its vectors) alive for the life of the process."""
    marker = b"quokka-lantern-7731"
    first = tmp_path / "first.pdf"
    first.write_bytes(pdf_bytes([f"The {marker.decode()} hangs in the north tower."]))
    second = tmp_path / "second.md"
    second.write_text("# Keys\n\nThe spare keys are in the blue tin on the top shelf.\n")
    await lore.bot.ingest(OWNER, Source(path=first), shared=True)  # starts a worker
    await lore.bot.ingest(OWNER, Source(path=second), shared=True)  # the same worker, reused
    gc.collect()
    held = [o for o in gc.get_objects() if isinstance(o, RawSource) and marker in o.data]
    assert held == []
