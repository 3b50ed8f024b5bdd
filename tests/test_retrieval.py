"""Ranking: tuned fusion of dense and lexical lists, document aggregation, the reranker stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from bot.app import Lore, open_lore
from bot.errors import StartupError
from graphs.fusion import Candidate, Fusion
from graphs.ingest.points import embedding_text
from graphs.retrieval import RetrievedPassage, Retriever
from storage.documents import DocumentRepository
from storage.ids import PointId
from storage.lexical import LexicalEncoder
from storage.reranker import CrossEncoder, RerankerError
from tests.chat_turns import OWNER, remember
from tests.conftest import SettingsFactory
from tests.cross_encoder_model import build_cross_encoder

NOTES = [
    "# Tomatoes\n\nWater tomato plants deeply twice a week; mulch keeps the soil moist.",
    "# Compost\n\nA compost heap needs air: turn it every fortnight and keep it damp.",
    "# Wifi\n\nThe cabin wifi password is written on the fridge door.",
    "# Bicycle\n\nPump the tyres to four bar and oil the chain after rain.",
    "# Bread\n\nSourdough bread rises overnight in a cool kitchen.",
    "# Router\n\nTo reset the router hold the button for ten seconds, then wait.",
    "# Zygomorphic\n\nOrchid flowers are zygomorphic: one plane of symmetry.",
]
QUESTION = "how do I look after tomato plants in the garden?"


def _id(n: int) -> PointId:
    return PointId(f"00000000-0000-0000-0000-{n:012d}")


def test_fusion_scales_each_side_by_its_best_score() -> None:
    fusion = Fusion(dense_weight=0.5)
    ranked = fusion.rank(
        [
            Candidate(_id(1), False, dense=0.8, lexical=None),
            Candidate(_id(2), True, dense=0.4, lexical=10.0),
            Candidate(_id(3), False, dense=None, lexical=5.0),
            Candidate(_id(4), False, dense=-0.2, lexical=None),
        ]
    )
    assert [(c.id, round(s, 6)) for c, s in ranked] == [
        (_id(2), 0.75),  # 0.5 * 0.4/0.8 + 0.5 * 10/10
        (_id(1), 0.5),  # 0.5 * 1 + 0
        (_id(3), 0.25),  # 0 + 0.5 * 5/10
        (_id(4), 0.0),  # a negative cosine counts as no match
    ]
    assert Fusion(dense_weight=0.9).rank(ranked_input := [c for c, _ in ranked])[0][0].id == _id(1)
    assert Fusion(dense_weight=0.1).rank(ranked_input)[0][0].id == _id(2)


async def _ingest_notes(lore: Lore) -> None:
    for text in NOTES:
        await remember(lore.bot, None, text)


def _retriever(lore: Lore, **options: object) -> Retriever:
    return Retriever(
        index=lore.index,
        documents=DocumentRepository(lore.database),
        embedder=lore.embedder,
        lexical=LexicalEncoder(),
        **options,  # type: ignore[arg-type]
    )


async def test_hybrid_finds_a_rare_word_and_keeps_cosine_as_relevance(lore: Lore) -> None:
    await _ingest_notes(lore)
    fused = await _retriever(lore, fusion=Fusion()).search("zygomorphic", user_id=None, limit=3)
    dense = await Retriever(
        index=lore.index,
        documents=DocumentRepository(lore.database),
        embedder=lore.embedder,
        lexical=None,
    ).search("zygomorphic", user_id=None, limit=len(NOTES))
    assert fused[0].passage.document_title == "Zygomorphic"
    cosine = {hit.passage.point_id: hit.relevance for hit in dense}
    for hit in fused:
        assert hit.relevance == pytest.approx(cosine[hit.passage.point_id])
    assert [hit.score for hit in fused] == sorted((hit.score for hit in fused), reverse=True)


async def test_a_passage_only_the_lexical_search_found_ranks_by_its_true_cosine(
    lore: Lore,
) -> None:
    await _ingest_notes(lore)
    await remember(lore.bot, None, "# Glossary\n\nA quokka is a small wallaby.")
    query = "how do I reset the router button? quokka"
    every = await Retriever(
        index=lore.index,
        documents=DocumentRepository(lore.database),
        embedder=lore.embedder,
        lexical=None,
    ).search(query, user_id=None, limit=len(NOTES) + 1)
    cosine = {hit.passage.point_id: hit.relevance for hit in every}
    dense_top = {hit.passage.point_id for hit in every[:2]}
    fused = await _retriever(lore, fusion=Fusion(depth=1)).search(query, user_id=None, limit=2)
    [found_lexically] = [hit for hit in fused if hit.passage.point_id not in dense_top]
    [found_both] = [hit for hit in fused if hit.passage.point_id in dense_top]
    assert found_lexically.passage.document_title == "Glossary"
    # Its fused score used its true cosine: 0.6 x cosine / best + 0.4 x BM25 / best...
    lexical = await lore.index.lexical_shared(LexicalEncoder().encode_query(query), limit=2)
    bm25 = {point.id: point.score for point in lexical}
    expected = 0.6 * cosine[found_lexically.passage.point_id] / every[0].relevance + 0.4 * (
        bm25[found_lexically.passage.point_id] / max(bm25.values())
    )
    assert cosine[found_lexically.passage.point_id] > 0.05
    assert found_lexically.score == pytest.approx(expected, abs=1e-5)
    # ...but its relevance stays 0.0, as the offline answerer's thresholds expect.
    assert found_lexically.relevance == 0.0
    assert found_both.relevance == pytest.approx(cosine[found_both.passage.point_id], abs=1e-5)


def _expected_scores(model_dir: Path, query: str, hits: list[RetrievedPassage]) -> list[float]:
    """The stand-in's logits, one pair at a time (no padding), straight from onnxruntime."""
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    session = ort.InferenceSession(str(model_dir / "model.onnx"))
    scores = []
    for hit in hits:
        passage = hit.passage
        text = embedding_text(passage.document_title, passage.heading_path, passage.text)
        encoding = tokenizer.encode(query, text)
        feed = {
            "input_ids": np.asarray([encoding.ids], np.int64),
            "attention_mask": np.asarray([encoding.attention_mask], np.int64),
            "token_type_ids": np.asarray([encoding.type_ids], np.int64),
        }
        scores.append(float(session.run(["logits"], feed)[0][0, 0]))
    return scores


async def test_reranker_orders_by_the_model_score_and_keeps_relevance(
    lore: Lore, tmp_path: Path
) -> None:
    await _ingest_notes(lore)
    model_dir = build_cross_encoder(tmp_path / "reranker", [*NOTES, QUESTION], seed=3)
    reranker = await CrossEncoder.load(model_dir)
    plain = await _retriever(lore, fusion=Fusion()).search(QUESTION, user_id=None, limit=5)
    reranked = await _retriever(
        lore, fusion=Fusion(), reranker=reranker, rerank_candidates=5
    ).search(QUESTION, user_id=None, limit=5)

    assert {h.passage.point_id for h in reranked} == {h.passage.point_id for h in plain}
    expected = dict(
        zip(
            (h.passage.point_id for h in plain),
            _expected_scores(model_dir, QUESTION, plain),
            strict=True,
        )
    )
    assert [h.score for h in reranked] == pytest.approx(
        [expected[h.passage.point_id] for h in reranked], abs=1e-4
    )
    assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
    assert [h.passage.point_id for h in reranked] != [h.passage.point_id for h in plain]
    relevance = {h.passage.point_id: h.relevance for h in plain}
    assert {h.passage.point_id: h.relevance for h in reranked} == relevance


async def test_reranker_reads_more_candidates_than_it_returns(lore: Lore, tmp_path: Path) -> None:
    await _ingest_notes(lore)
    model_dir = build_cross_encoder(tmp_path / "reranker", [*NOTES, QUESTION], seed=3)
    reranker = await CrossEncoder.load(model_dir)
    every = await _retriever(
        lore, fusion=Fusion(), reranker=reranker, rerank_candidates=len(NOTES)
    ).search(QUESTION, user_id=None, limit=len(NOTES))
    top_two = await _retriever(
        lore, fusion=Fusion(), reranker=reranker, rerank_candidates=len(NOTES)
    ).search(QUESTION, user_id=None, limit=2)
    assert [h.passage.point_id for h in top_two] == [h.passage.point_id for h in every[:2]]


async def test_reranker_setting_is_wired_and_a_bad_directory_stops_startup(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    with pytest.raises(StartupError, match=r"RERANKER_MODEL_DIR.*has no model\.onnx"):
        async with open_lore(make_settings(reranker_model_dir=empty)):
            pass
    model_dir = build_cross_encoder(tmp_path / "reranker", [*NOTES, QUESTION], seed=3)
    async with open_lore(make_settings(reranker_model_dir=model_dir)) as lore:
        await _ingest_notes(lore)
        hits = await lore.bot.search(OWNER, QUESTION, limit=3, private=False)
    expected = _expected_scores(model_dir, QUESTION, hits)
    assert [h.score for h in hits] == pytest.approx(expected, abs=1e-4)


async def test_a_model_that_is_not_a_cross_encoder_is_refused(tmp_path: Path) -> None:
    model_dir = build_cross_encoder(tmp_path / "reranker", NOTES)
    (model_dir / "tokenizer.json").write_text("{not json", "utf-8")
    with pytest.raises(RerankerError, match="cannot load the reranker"):
        await CrossEncoder.load(model_dir)
