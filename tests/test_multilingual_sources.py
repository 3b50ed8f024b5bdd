"""The lines a member reads while a source is saved follow the source's language (the text it
brings: a note, a caption, a forwarded message), else LANGUAGE (`bot.source_words`); the
English lines stay as the docs quote them."""

from __future__ import annotations

import pytest

from bot.app import open_lore
from bot.replies import plain_text
from bot.source_words import count_text, source_words
from bot.sources import IncomingSource, caption_title, note, saved_message
from graphs.ingest.state import IngestOutcome, IngestResult
from graphs.llm.offline_language import ANSWER_LANGUAGES
from storage.ids import DocumentId
from tests.chat_turns import invite
from tests.conftest import SettingsFactory

NOTE_DE = (
    "Den Schlüssel für den Heizraum hat Herr Becker im Erdgeschoss. Die Wartung des"
    " Heizkessels übernimmt jedes Jahr im Oktober die Firma Müller Haustechnik."
)


def result(outcome: IngestOutcome, chunks: int, masked: int = 0) -> IngestResult:
    return IngestResult(outcome, DocumentId("d" * 32), "Heizung", chunks, masked_cards=masked)


def test_the_english_lines_are_the_ones_the_docs_quote() -> None:
    saved = saved_message(result(IngestOutcome.SAVED, 1, masked=2), shared=False)
    again = saved_message(result(IngestOutcome.DUPLICATE, 4), shared=True)
    assert plain_text(saved.body) == (
        "✅ Saved: Heizung (1 chunk) in your private notes. I masked 2 card numbers in it"
        " (only the last four digits are kept)."
    )
    assert plain_text(again.body) == "♻️ Already saved: Heizung (4 chunks) in the shared knowledge."
    assert source_words("en").received == "📥 Received, working on it…"


@pytest.mark.parametrize("language", ANSWER_LANGUAGES)
def test_every_language_has_every_line(language: str) -> None:
    words = source_words(language)
    line = plain_text(
        saved_message(result(IngestOutcome.UPDATED, 3, 1), shared=True, language=language).body
    )
    assert line.startswith(words.updated)
    assert "Heizung" in line
    assert "3" in line
    assert words.shared_place in line
    assert language == "en" or words.received != source_words("en").received


def test_counts_take_their_languages_plural_forms() -> None:
    russian, chinese = source_words("ru").chunks, source_words("zh").chunks
    assert [count_text(russian, n) for n in (1, 3, 5, 11, 21, 22)] == [
        "1 фрагмент",
        "3 фрагмента",
        "5 фрагментов",
        "11 фрагментов",
        "21 фрагмент",
        "22 фрагмента",
    ]
    assert [count_text(chinese, n) for n in (1, 2)] == ["1 个片段", "2 个片段"]
    german = source_words("de").masked
    assert count_text(german, 1).startswith(" Ich habe darin 1 Kartennummer ")


async def test_a_german_note_is_received_and_saved_in_german_a_bare_file_in_language(
    make_settings: SettingsFactory,
) -> None:
    async with open_lore(make_settings(language="fr")) as core:
        mia = await invite(core.bot, "mia")
        german = note(NOTE_DE)
        received = core.bot.received(german)
        saved = await core.bot.save_source(mia, german)
        pdf = IncomingSource(file_ref="f1", file_name="plan.txt", size=40)
        bare = core.bot.received(pdf)
        kept = await core.bot.save_source(mia, pdf, data=b"Floor plan: the boiler room is left.")
        captioned = IncomingSource(
            file_ref="f2", file_name="plan2.txt", size=40, caption="Der Plan vom Keller"
        )
        caption = core.bot.received(captioned)
    assert received == "📥 Erhalten, ich kümmere mich darum…"
    assert plain_text(saved.body).startswith("✅ Gespeichert: ")
    assert plain_text(saved.body).endswith("(1 Abschnitt) in deinen privaten Notizen.")
    assert bare == "📥 Bien reçu, je m’en occupe…"
    assert plain_text(kept.body).startswith("✅ Enregistré\u00a0: ")
    assert plain_text(kept.body).endswith("(1\u00a0extrait) dans vos notes privées.")
    assert caption == source_words("de").received


def test_a_long_note_is_titled_by_its_first_whole_words() -> None:
    long = "The bike shed code is 2468 and the spare pump is behind the door, left side."
    assert note(long).title == "The bike shed code is 2468 and the spare pump is behind the…"
    assert note("  short\n note ").title == "short note"
    assert note("x" * 80).title == "x" * 60 + "…"
    assert caption_title(long, "shed.jpg") == f"{note(long).title} (shed.jpg)"
