"""Query embeddings batched across concurrent turns, and a bounded cache of recent ones."""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from graphs.query_batching import CACHE_SIZE, QueryBatcher
from storage.embeddings import Embedder
from storage.model_files import DEFAULT_MODEL, ensure_model_dir, model_choice

QUESTIONS = [
    "When does the office open?",
    "Where do visitors park?",
    "What is the guest wifi password?",
    "Who approves holiday requests?",
    "How do I keep my notes private?",
    "Which printer is on the second floor?",
    "When is the rent due?",
    "How do I reset my password?",
]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    models: Path = tmp_path_factory.mktemp("models")
    model_dir = asyncio.run(ensure_model_dir(models, model_choice(DEFAULT_MODEL)))
    return asyncio.run(Embedder.load(model_dir, threads=1))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


async def hashed(texts: Sequence[str]) -> list[list[float]]:
    """A cheap stand-in model: four numbers from each text's hash."""
    return [[float(b) for b in hashlib.sha256(t.encode()).digest()[:4]] for t in texts]


async def test_concurrent_queries_are_embedded_together_each_with_its_own_vector(
    embedder: Embedder,
) -> None:
    batcher = QueryBatcher(embedder.embed_passages)
    vectors = await asyncio.gather(*(batcher.embed_query(q) for q in QUESTIONS))
    assert batcher.batches == [len(QUESTIONS)]
    for question, vector in zip(QUESTIONS, vectors, strict=True):
        alone = await embedder.embed_query(question)
        assert cosine(vector, alone) > 0.9999
    assert cosine(vectors[0], vectors[1]) < 0.99


async def test_queries_arriving_during_a_batch_go_together_in_the_next() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def gated(texts: Sequence[str]) -> list[list[float]]:
        started.set()
        await release.wait()
        return await hashed(texts)

    batcher = QueryBatcher(gated)
    first = asyncio.create_task(batcher.embed_query(QUESTIONS[0]))
    await started.wait()
    later = [asyncio.create_task(batcher.embed_query(q)) for q in QUESTIONS[1:4]]
    await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(first, *later)
    assert batcher.batches == [1, 3]
    assert results == await hashed(QUESTIONS[:4])


async def test_a_lone_query_is_not_held_back() -> None:
    batcher = QueryBatcher(hashed)
    assert await batcher.embed_query("alone") == (await hashed(["alone"]))[0]
    assert batcher.batches == [1]


async def test_the_same_question_asked_at_once_is_embedded_once() -> None:
    batcher = QueryBatcher(hashed)
    a, b, c = await asyncio.gather(
        batcher.embed_query("same"), batcher.embed_query("same"), batcher.embed_query("other")
    )
    assert a == b != c
    assert batcher.batches == [2]


async def test_batches_are_capped() -> None:
    batcher = QueryBatcher(hashed, max_batch=3)
    await asyncio.gather(*(batcher.embed_query(q) for q in QUESTIONS))
    assert batcher.batches == [3, 3, 2]


async def test_a_repeated_question_comes_from_the_cache() -> None:
    batcher = QueryBatcher(hashed)
    first = await batcher.embed_query("When does the office open?")
    first.append(99.0)  # the caller's list is its own
    again = await batcher.embed_query("When does the office open?")
    assert again == (await hashed(["When does the office open?"]))[0]
    assert batcher.batches == [1]


async def test_the_cache_is_bounded_and_drops_the_least_recently_used() -> None:
    batcher = QueryBatcher(hashed, cache_size=3)
    for question in QUESTIONS[:3]:
        await batcher.embed_query(question)
    await batcher.embed_query(QUESTIONS[0])  # used again: now the most recent
    await batcher.embed_query(QUESTIONS[3])  # drops QUESTIONS[1]
    assert batcher.cached == 3
    assert batcher.batches == [1, 1, 1, 1]
    await batcher.embed_query(QUESTIONS[0])
    assert batcher.batches == [1, 1, 1, 1]
    await batcher.embed_query(QUESTIONS[1])
    assert batcher.batches == [1, 1, 1, 1, 1]


async def test_the_default_cache_holds_256_queries() -> None:
    batcher = QueryBatcher(hashed)
    await asyncio.gather(*(batcher.embed_query(f"question {n}") for n in range(CACHE_SIZE + 50)))
    assert CACHE_SIZE == 256
    assert batcher.cached == 256


async def test_a_failed_batch_fails_its_callers_and_the_next_query_works() -> None:
    failing = True

    async def flaky(texts: Sequence[str]) -> list[list[float]]:
        if failing:
            raise RuntimeError("model crashed")
        return await hashed(texts)

    batcher = QueryBatcher(flaky)
    results = await asyncio.gather(
        batcher.embed_query("a"), batcher.embed_query("b"), return_exceptions=True
    )
    assert [str(r) for r in results] == ["model crashed", "model crashed"]
    assert batcher.cached == 0
    failing = False
    assert await batcher.embed_query("a") == (await hashed(["a"]))[0]


async def test_a_wrong_number_of_vectors_is_an_error() -> None:
    async def short(texts: Sequence[str]) -> list[list[float]]:
        return (await hashed(texts))[:-1]

    batcher = QueryBatcher(short)
    with pytest.raises(RuntimeError, match="2 queries embedded as 1 vectors"):
        await asyncio.gather(batcher.embed_query("a"), batcher.embed_query("b"))


async def test_a_cancelled_caller_leaves_the_others_their_answer() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def gated(texts: Sequence[str]) -> list[list[float]]:
        started.set()
        await release.wait()
        return await hashed(texts)

    batcher = QueryBatcher(gated)
    impatient = asyncio.create_task(batcher.embed_query("shared"))
    patient = asyncio.create_task(batcher.embed_query("shared"))
    await started.wait()
    impatient.cancel()
    release.set()
    assert await patient == (await hashed(["shared"]))[0]
    assert impatient.cancelled()
