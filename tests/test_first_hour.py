"""Polish a newcomer meets in the first hour: counts read as English, a link with another
scheme gets a clear refusal, and library warnings stay off the terminal but reach the log."""

from __future__ import annotations

import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import pypdf
import pytest

from adapters.console import ConsoleChat
from bot.app import Lore
from bot.errors import IngestRefusedError
from bot.ingest_requests import READABLE_TYPES, plan_ingest
from bot.library_output import LibraryChatterFilter, route_library_output
from bot.sources import chunks_text
from tests.chat_turns import OWNER, remember
from tests.sample_files import broken_pdf_bytes

ROOT = Path(__file__).resolve().parent.parent


def test_one_chunk_is_one_chunk() -> None:
    assert [chunks_text(n) for n in (0, 1, 2, 14)] == [
        "0 chunks",
        "1 chunk",
        "2 chunks",
        "14 chunks",
    ]


async def test_a_one_chunk_note_is_reported_as_one_chunk(lore: Lore) -> None:
    result = await remember(lore.bot, None, "The kettle is descaled on Mondays.")
    assert result.chunk_count == 1
    assert result.chunks_text == "1 chunk"


@pytest.mark.parametrize(
    "source", ["ftp://files.example.org/handbook.pdf", "file:///etc/passwd", "gopher://x.org/1"]
)
async def test_a_link_with_another_scheme_is_refused_as_a_link_not_a_missing_file(
    lore: Lore, source: str
) -> None:
    [request] = (await plan_ingest(source)).sources
    assert request.url == source
    assert request.path is None
    with pytest.raises(IngestRefusedError) as refused:
        await lore.bot.ingest(OWNER, request, shared=True)
    assert str(refused.value) == "I can only fetch http:// and https:// links."
    assert (await lore.bot.maintenance.stats()).shared_documents == 0


async def test_a_path_is_still_a_path(tmp_path: Path) -> None:
    note = tmp_path / "notes.md"
    note.write_text("# Notes\n\nThe kettle is descaled on Mondays.\n")
    [request] = (await plan_ingest(str(note))).sources
    assert (request.path, request.url) == (note, None)


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr does when a person runs Lore."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def handlers(tmp_path: Path) -> Iterator[tuple[Terminal, Path, io.StringIO]]:
    """A terminal handler, a log file handler and a piped stream on the root logger."""
    terminal, piped, log_file = Terminal(), io.StringIO(), tmp_path / "lore.log"
    added = [
        logging.StreamHandler(terminal),
        logging.FileHandler(log_file, encoding="utf-8"),
        logging.StreamHandler(piped),
    ]
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)
    for handler in added:
        root.addHandler(handler)
    yield terminal, log_file, piped
    for handler in added:
        root.removeHandler(handler)
        handler.close()
    root.setLevel(level)
    logging.captureWarnings(False)


def read_pdf(data: bytes) -> str:
    """The text of a PDF as pypdf reads it (the library that Lore's extraction uses)."""
    return "".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def test_library_warnings_reach_the_log_but_not_the_terminal(
    handlers: tuple[Terminal, Path, io.StringIO],
) -> None:
    terminal, log_file, piped = handlers
    route_library_output(level="INFO")
    text = read_pdf(broken_pdf_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("a library is unhappy", UserWarning, stacklevel=1)
    logging.getLogger("graphs.ingest").warning("Lore's own warning")
    logging.getLogger("telegram.ext").error("a library error")

    assert "descaled" in text
    logged = log_file.read_text("utf-8")
    assert "startxref" in logged
    assert "a library is unhappy" in logged
    shown = terminal.getvalue()
    assert "startxref" not in shown
    assert "a library is unhappy" not in shown
    assert "Lore's own warning" in shown
    assert "a library error" in shown
    assert "startxref" in piped.getvalue()  # a service's collected stderr keeps everything


def test_at_debug_the_terminal_shows_everything(
    handlers: tuple[Terminal, Path, io.StringIO],
) -> None:
    terminal, _, _ = handlers
    route_library_output(level="DEBUG")
    read_pdf(broken_pdf_bytes())
    assert "startxref" in terminal.getvalue()
    assert not any(
        isinstance(f, LibraryChatterFilter) for h in logging.getLogger().handlers for f in h.filters
    )


async def test_a_folder_ingest_in_the_terminal_chat_goes_on_after_a_refused_file(
    lore: Lore, tmp_path: Path
) -> None:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "a-empty.md").write_text("")
    (folder / "b-kitchen.md").write_text("# Kitchen\n\nThe kettle is descaled on Mondays.\n")
    shown: list[str] = []

    async def no_input(_prompt: str) -> str | None:
        return None

    chat = ConsoleChat(lore.bot, read_line=no_input, write=shown.append, interactive=False)
    await chat.handle(f"/ingest --shared {folder}")
    output = "".join(shown)
    assert f"Skipped {folder / 'a-empty.md'}: This file is empty" in output
    assert "Saved: Kitchen (1 chunk)" in output
    assert (await lore.bot.maintenance.stats()).shared_documents == 1
    ingesting = " ".join((ROOT / "docs" / "ingesting.md").read_text("utf-8").split())
    assert "a folder ingest stops at the refused file" not in ingesting
    assert "for a refused file and goes on with the others" in ingesting


async def test_a_folder_ingest_in_the_terminal_chat_counts_its_files_and_names_the_others(
    lore: Lore, tmp_path: Path
) -> None:
    folder = tmp_path / "handbook"
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "notes.md").write_text("# Hidden\n\nNot for Lore.\n")
    (folder / "kitchen.md").write_text("# Kitchen\n\nThe kettle is descaled on Mondays.\n")
    (folder / "printer.txt").write_text("The printer takes TN-2420 toner.\n")
    (folder / "backup.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    empty = tmp_path / "empty"
    empty.mkdir()
    shown: list[str] = []

    async def no_input(_prompt: str) -> str | None:
        return None

    chat = ConsoleChat(lore.bot, read_line=no_input, write=shown.append, interactive=False)
    await chat.handle(f"/ingest --shared {folder}")
    lines = "".join(shown).splitlines()
    assert lines[0] == (
        f"Skipped {folder / 'backup.zip'}: Lore does not read .zip files "
        f"(it reads {READABLE_TYPES})."
    )
    assert lines[1].startswith("1/2 ✅ Saved: Kitchen (1 chunk)")
    assert lines[2].startswith("2/2 ✅ Saved: The printer takes TN-2420 toner.")
    assert lines[3] == "Done: 2 saved, 1 skipped."
    assert "Hidden" not in "".join(shown)

    shown.clear()
    await chat.handle(f"/ingest {empty}")
    assert "".join(shown).strip() == (
        f"There is nothing to ingest in {empty}: it holds no file Lore reads "
        f"({READABLE_TYPES}; hidden files are left out)."
    )
    assert (await lore.bot.maintenance.stats()).shared_documents == 2
