"""The lexical side in the members' languages: each text stemmed in its own language (and in
English), Chinese and Japanese cut into bigrams, English exactly as before, and a data
directory indexed before keeps its English-only lexical vectors until `lore reindex --all`."""

from __future__ import annotations

import json

from bot.app import open_lore
from bot.reindex_all import reindex_all
from bot.sources import Source
from storage.documents import Collection
from storage.index_identity import IDENTITY_FILE, read_identity
from storage.lexical import DEFAULT_LEXICAL_SCHEME, LexicalEncoder, cjk_bigrams
from storage.text_language import detect_language
from storage.vectors import SparseVector
from tests.conftest import SettingsFactory

FLOWERS = "# Garten\n\nBlumen gießt der Hausmeister dienstags und freitags."
FLOWER_QUESTION = "Wann bekommt eine Blume Wasser?"


def _overlap(query: SparseVector, document: SparseVector) -> float:
    weights = dict(zip(document.indices, document.values, strict=True))
    return sum(weights.get(index, 0.0) for index in query.indices)


def test_english_text_gets_the_terms_it_always_got() -> None:
    text = "The laser printer on the second floor takes HP 305A toner cartridges."
    english, multilingual = LexicalEncoder(scheme="english"), LexicalEncoder()
    assert multilingual.encode_document(text) == english.encode_document(text)
    question = "Which toner cartridges does the printer on the second floor take?"
    assert multilingual.encode_query(question) == english.encode_query(question)


def test_a_german_question_meets_a_german_note_on_its_stems() -> None:
    english, multilingual = LexicalEncoder(scheme="english"), LexicalEncoder()
    assert _overlap(english.encode_query(FLOWER_QUESTION), english.encode_document(FLOWERS)) == 0
    assert (
        _overlap(multilingual.encode_query(FLOWER_QUESTION), multilingual.encode_document(FLOWERS))
        > 0
    )


def test_an_english_word_in_a_german_question_meets_an_english_note() -> None:
    encoder = LexicalEncoder()
    note = encoder.encode_document("The printer on floor 2 takes HP 305A toner cartridges.")
    assert _overlap(encoder.encode_query("Welchen Toner braucht der Drucker?"), note) > 0


def test_chinese_and_japanese_are_cut_into_bigrams() -> None:
    assert cjk_bigrams("打印机用HP墨盒") == " 打印 印机 机用 HP 墨盒 "
    encoder = LexicalEncoder()
    parcels = encoder.encode_document("公司的快递统一放在一楼前台。前台每天下午五点关门。")
    assert _overlap(encoder.encode_query("快递放在哪里？"), parcels) > 0
    bottles = encoder.encode_document("ペットボトルはキャップとラベルを外して、水曜日に出します。")
    assert _overlap(encoder.encode_query("ペットボトルは何曜日に捨てますか？"), bottles) > 0
    assert _overlap(encoder.encode_query("ペットボトルは何曜日に捨てますか？"), parcels) == 0


def test_the_language_of_a_question_and_of_a_note() -> None:
    assert detect_language("Wer kümmert sich um die Wartung des Heizkessels?") == "de"
    assert detect_language("Кто пишет протокол собрания?") == "ru"
    assert detect_language("ペットボトルは何曜日に捨てますか？") == "ja"
    assert detect_language("快递放在哪里？几点前要去拿？") == "zh"
    assert detect_language("12:30 / 42") is None
    assert detect_language("ok", min_confidence=0.5) is None


async def _lexical_hits(settings_factory: SettingsFactory) -> list[str]:
    async with open_lore(settings_factory()) as lore:
        query = lore.lexical.encode_query(FLOWER_QUESTION)
        hits = await lore.vector_store.search_lexical(Collection.KNOWLEDGE.value, query, limit=5)
        return [str(hit.id) for hit in hits]


async def test_an_older_index_keeps_english_lexical_vectors_until_reindex_all(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings()
    async with open_lore(settings):
        pass
    path = settings.data_dir / IDENTITY_FILE
    raw = json.loads(path.read_text("utf-8"))
    del raw["lexical"]  # as every release before the choice wrote it
    path.write_text(json.dumps(raw), "utf-8")

    async with open_lore(settings) as lore:
        assert lore.lexical.scheme == "english"
        await lore.bot.maintenance.load_shared(Source(text=FLOWERS))
    assert await _lexical_hits(make_settings) == []
    stored = read_identity(settings.data_dir)
    assert stored is not None
    assert stored.lexical == "english"

    async with open_lore(settings, rebuild_vectors=True) as lore:
        assert lore.lexical.scheme == DEFAULT_LEXICAL_SCHEME
        await reindex_all(lore, show_progress=False)
    rebuilt = read_identity(settings.data_dir)
    assert rebuilt is not None
    assert rebuilt.lexical == DEFAULT_LEXICAL_SCHEME
    assert len(await _lexical_hits(make_settings)) == 1
