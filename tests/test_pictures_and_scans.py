"""Pictures, screenshots and scanned PDFs are read by OCR in the extraction workers, bounded by
limits that grow with the work: decoded pixels per picture, scanned pages per document, CPU
seconds per page. Over a limit: one clear line and nothing stored (invariant 8). Pictures are
drawn by the tests with Pillow's own font."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import Lore, open_lore
from bot.errors import IngestRefusedError
from bot.reindex_all import reindex_all
from bot.sources import Source
from graphs.ingest.errors import DecompressionBombError, ExtractionLimitError
from graphs.ingest.extract_pool import ExtractionLimits, ExtractionPool
from graphs.ingest.extract_protocol import MediaLimits, ReadingStep
from graphs.ingest.formats import ExtractedText, SourceFormat
from graphs.ingest.state import IngestOutcome
from tests.chat_turns import ask, invite, remember
from tests.conftest import SettingsFactory
from tests.media_files import drawn_text, mixed_pdf, png_bomb, png_bytes, scanned_pdf
from tests.test_bounded_input import stored

CAP = 10_000_000
SCREENSHOT = ["Error 502: Bad Gateway", "upstream nginx timed out", "call Bob at 4417"]


@pytest.fixture
async def pool() -> AsyncIterator[ExtractionPool]:
    async with ExtractionPool(ExtractionLimits(cpu_seconds=5, memory_mb=2048, workers=1)) as p:
        yield p


async def read(
    pool: ExtractionPool, data: bytes, fmt: SourceFormat, name: str
) -> tuple[ExtractedText, list[ReadingStep]]:
    steps: list[ReadingStep] = []
    extracted = await pool.extract(
        data, fmt, filename=name, charset=None, max_decompressed_bytes=CAP, on_step=steps.append
    )
    return extracted, steps


async def test_a_screenshots_lines_are_read_in_order_under_a_base_allowance_it_outgrows(
    pool: ExtractionPool,
) -> None:
    # 5 s of CPU would not even load the OCR models on a busy machine: the picture claims
    # its page's allowance once it knows there is one page to read.
    extracted, steps = await read(
        pool, png_bytes(drawn_text(SCREENSHOT)), SourceFormat.IMAGE, "x.png"
    )
    assert extracted.text == "\n".join(SCREENSHOT)
    assert extracted.title == SCREENSHOT[0]
    assert extracted.recognised
    assert steps == [ReadingStep("image", 0, 1)]


async def test_a_40000_by_40000_png_is_refused_before_its_pixels_are_decoded(
    pool: ExtractionPool,
) -> None:
    bomb = png_bomb(40_000, 40_000)
    assert len(bomb) < 1000
    with pytest.raises(DecompressionBombError, match=r"40,000 x 40,000 pixels .* up to 40 mega"):
        await read(pool, bomb, SourceFormat.IMAGE, "huge.png")
    extracted, _ = await read(pool, png_bytes(drawn_text(SCREENSHOT)), SourceFormat.IMAGE, "ok.png")
    assert extracted.text.startswith("Error 502")  # the same worker reads the next picture


async def test_a_mixed_pdf_reads_its_text_page_and_ocrs_its_scanned_page_only(
    pool: ExtractionPool,
) -> None:
    pdf = mixed_pdf(["Typed minutes of the May meeting."], ["The spare key hangs by the boiler."])
    extracted, steps = await read(pool, pdf, SourceFormat.PDF, "minutes.pdf")
    assert extracted.text == (
        "# Page 1\n\nTyped minutes of the May meeting.\n\n"
        "# Page 2\n\nThe spare key hangs by the boiler."
    )
    assert steps == [ReadingStep("page", 2, 2)]  # only the scanned page was OCR'd
    assert extracted.recognised


async def test_a_500_page_scan_is_refused_before_any_page_is_read(pool: ExtractionPool) -> None:
    pdf = scanned_pdf([["A page of a long scan"]], copies=500, size=(120, 170))
    with pytest.raises(ExtractionLimitError) as refused:
        await read(pool, pdf, SourceFormat.PDF, "archive.pdf")
    assert str(refused.value) == (
        "This PDF has 500 pages without a text layer (scanned); Lore reads at most 50 such "
        "pages of one document. Please send it in parts."
    )


async def test_the_cpu_seconds_per_page_bound_the_reading() -> None:
    limits = ExtractionLimits(
        cpu_seconds=1, memory_mb=2048, workers=1, media=MediaLimits(ocr_cpu_seconds_per_page=0.01)
    )
    async with ExtractionPool(limits) as pool:
        # About 5 s of CPU: the OCR models load, then 30 lines are read.
        page = drawn_text([f"Line {n} of a long page of text" for n in range(30)], size=(900, 1800))
        with pytest.raises(ExtractionLimitError, match="more work to read than Lore allows"):
            await read(pool, png_bytes(page), SourceFormat.IMAGE, "x.png")


async def test_a_picture_without_text_is_told_so_and_nothing_is_stored(lore: Lore) -> None:
    member = await invite(lore.bot, "alice")
    blank = png_bytes(drawn_text([]))
    with pytest.raises(IngestRefusedError) as refused:
        await remember(lore.bot, member, data=blank, file_name="wall.png")
    assert str(refused.value) == (
        "I could not find any readable text in this picture, so I did not save it."
    )
    assert await stored(lore) == (0, 0, [])


async def test_a_scanned_pdf_is_cited_with_its_page_and_its_ocr_text_is_never_read_again(
    make_settings: SettingsFactory,
) -> None:
    pdf = mixed_pdf(["Minutes of the May meeting."], ["The spare key hangs by the boiler."])
    async with open_lore(make_settings(extract_cpu_seconds=5)) as lore:
        member = await invite(lore.bot, "alice")
        steps: list[str] = []
        saved = await lore.bot.ingest(
            member, Source(data=pdf, file_name="minutes.pdf"), on_progress=steps.append
        )
        assert "🔎 Reading page 2 of 2…" in steps
        turn = await ask(lore.bot, member, "Where does the spare key hang?")
        assert [(c.title, c.location) for c in turn.done.citations] == [
            ("Minutes of the May meeting.", "page 2")
        ]

        # The same file again is recognised by its bytes, before any reading.
        steps.clear()
        again = await lore.bot.ingest(
            member, Source(data=pdf, file_name="minutes.pdf"), on_progress=steps.append
        )
        assert again.outcome is IngestOutcome.DUPLICATE
        assert not any(step.startswith("🔎") for step in steps)
        [record] = await lore.bot.sources(member)
    assert record.id == saved.document_id
    original = Path(record.original_path)
    assert (original.parent / ".recognised.md").is_file()
    original.write_bytes(b"not a pdf any more")  # cutting it again must not read the scan

    new_cut = make_settings(chunk_tokens=48, chunk_overlap_tokens=8)
    async with open_lore(new_cut, rebuild_vectors=True) as lore:
        summary = await reindex_all(lore, show_progress=False)
        assert summary.startswith("Re-chunked 1 documents into ")
        assert "kept their chunks" not in summary
        turn = await ask(lore.bot, member, "Where does the spare key hang?")
        assert [c.location for c in turn.done.citations] == ["page 2"]


async def test_another_members_question_is_answered_while_a_hostile_scan_is_refused(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(max_file_bytes=1024 * 1024)
    async with open_lore(settings) as lore:
        alice = await invite(lore.bot, "alice")
        bob = await invite(lore.bot, "bob")
        await remember(lore.bot, bob, text="The boiler is serviced every May.")
        scan = scanned_pdf([["A page of a long scan"]], copies=500, size=(120, 170))
        hostile = asyncio.create_task(remember(lore.bot, alice, data=scan, file_name="all.pdf"))
        bomb = asyncio.create_task(remember(lore.bot, alice, data=png_bomb(), file_name="x.png"))
        turn = await ask(lore.bot, bob, "When is the boiler serviced?")
        refusals = await asyncio.gather(hostile, bomb, return_exceptions=True)
        assert turn.done.outcome == "answered"
        assert [c.title for c in turn.done.citations] == ["The boiler is serviced every May."]
        assert all(isinstance(refusal, IngestRefusedError) for refusal in refusals)
        assert "500 pages without a text layer" in str(refusals[0])
        assert "40,000 x 40,000 pixels" in str(refusals[1])
        documents, _, files = await stored(lore)
        assert documents == 1  # Bob's note only
        assert len(files) == 1
