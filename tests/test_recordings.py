"""Recordings are transcribed offline with whisper in the extraction workers: the transcript
is the document's text, in blocks under the time they start at, with the language whisper
heard; the original is kept, and so is the transcript, so nothing is transcribed twice.
Over a limit (length declared or decoded, a broken file) one clear line and nothing kept.
The speech is espeak-ng's, made once and committed (tests/fixtures/speech)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adapters.console import ConsoleChat
from bot.app import Lore, open_lore
from bot.errors import IngestRefusedError
from bot.sources import Source
from graphs.ingest.state import IngestOutcome
from storage.speech_models import SpeechModelError, ensure_speech_model
from tests.chat_turns import ask, invite, remember
from tests.conftest import SettingsFactory
from tests.media_files import ogg_declaring
from tests.test_bounded_input import stored

SPEECH = Path(__file__).resolve().parent / "fixtures" / "speech"
BIKE_SHED = (SPEECH / "bike_shed.ogg").read_bytes()


async def test_a_recording_is_transcribed_cited_at_its_time_and_never_transcribed_again(
    lore: Lore,
) -> None:
    member = await invite(lore.bot, "alice")
    steps: list[str] = []
    saved = await lore.bot.ingest(
        member, Source(data=BIKE_SHED, file_name="shed.ogg"), on_progress=steps.append
    )
    assert saved.outcome is IngestOutcome.SAVED
    assert steps[:2] == ["⏳ Got it, reading...", "🎙 Transcribing 0:00 of 0:04…"]
    [record] = await lore.bot.sources(member)
    assert record.format == "audio"
    assert record.language == "en"
    assert record.title == "The spare key for the bike shed is in the blue box in the kitchen."
    kept = Path(record.original_path)
    assert kept.read_bytes() == BIKE_SHED  # the original recording is kept (invariant 6)
    transcript = (kept.parent / ".recognised.md").read_text("utf-8")
    assert transcript == f"# 0:00\n\n{record.title}"

    turn = await ask(lore.bot, member, "Where is the spare key for the bike shed?")
    assert [(c.title, c.location) for c in turn.done.citations] == [(record.title, "at 0:00")]

    steps.clear()
    again = await lore.bot.ingest(
        member, Source(data=BIKE_SHED, file_name="shed.ogg"), on_progress=steps.append
    )
    assert again.outcome is IngestOutcome.DUPLICATE
    assert not any(step.startswith("🎙") for step in steps)  # known bytes: not heard again


async def test_a_three_hour_recording_a_long_one_and_a_broken_one_are_refused_in_one_line(
    make_settings: SettingsFactory,
) -> None:
    async with open_lore(make_settings(max_audio_seconds=3)) as lore:
        member = await invite(lore.bot, "alice")
        three_hours = ogg_declaring((SPEECH / "question.ogg").read_bytes(), 3 * 3600)
        assert len(three_hours) < 10_000
        broken = BIKE_SHED[:300] + bytes(range(256)) * 40
        refusals = []
        for data, name in ((three_hours, "long.ogg"), (BIKE_SHED, "shed.ogg"), (broken, "x.ogg")):
            with pytest.raises(IngestRefusedError) as refused:
                await remember(lore.bot, member, data=data, file_name=name)
            refusals.append(str(refused.value))
        assert await stored(lore) == (0, 0, [])
    assert refusals == [
        "This recording is 3:00:00 long; Lore transcribes at most 0:03 of one recording. "
        "Please send a shorter one, or cut it in parts.",
        # Declared right, but longer than the limit once decoded.
        "This recording is 0:04 long; Lore transcribes at most 0:03 of one recording. "
        "Please send a shorter one, or cut it in parts.",
        "This recording could not be read; it may be damaged or not really a sound file.",
    ]


async def test_the_english_only_model_is_a_setting_and_an_mp3_reads_the_same(
    make_settings: SettingsFactory,
) -> None:
    async with open_lore(make_settings(speech_model="whisper-tiny.en")) as lore:
        member = await invite(lore.bot, "bob")
        mp3 = (SPEECH / "printer.mp3").read_bytes()
        await remember(lore.bot, member, data=mp3, file_name="printer.mp3")
        [record] = await lore.bot.sources(member)
    assert record.language == "en"  # tiny.en hears English only
    assert record.title.startswith("The printer on the second floor takes the black toner")


async def test_a_speech_model_file_that_differs_stops_transcription_naming_it(
    tmp_path: Path, models_dir: Path
) -> None:
    assembled = await ensure_speech_model(models_dir, "whisper-tiny.en")
    copy = tmp_path / "models" / assembled.name
    shutil.copytree(assembled, copy)
    with (copy / "config.json").open("a", encoding="utf-8") as changed:
        changed.write(" ")
    with pytest.raises(SpeechModelError, match=r"config\.json has SHA-256 .*delete .* to rebuild"):
        await ensure_speech_model(tmp_path / "models", "whisper-tiny.en")


async def test_the_terminals_ingest_reads_a_recording_and_a_question_cites_it(
    lore: Lore, tmp_path: Path
) -> None:
    recording = tmp_path / "printer.mp3"
    recording.write_bytes((SPEECH / "printer.mp3").read_bytes())
    shown: list[str] = []

    async def no_input(_prompt: str) -> str | None:
        return None

    chat = ConsoleChat(lore.bot, read_line=no_input, write=shown.append, interactive=False)
    await chat.handle(f"/ingest --shared {recording}")
    assert "✅ Saved: The printer on the second floor takes the black toner" in "".join(shown)
    shown.clear()
    await chat.handle("Which toner does the printer on the second floor take?")
    assert "black toner" in "".join(shown)
    assert ", at 0:00 - " in "".join(shown)  # the source line says where in the recording
