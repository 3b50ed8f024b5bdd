"""Model changes are safe: vectors carry the identity of the model that made them, a start
with another model refuses in one line, and `lore reindex --all` rebuilds every vector.

"Another model" is written into the data directory's record (`vector-index.json`) and into
the stored points (vectors that are not the loaded model's), which is what a data directory
built with another EMBEDDING_MODEL holds."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import re
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.app import Lore, open_lore
from bot.errors import StartupError
from bot.memory import exchange_text
from bot.reindex_all import reindex_all
from bot.sources import Source
from graphs.ingest.points import embedding_text, make_point
from storage.document_records import ChunkRecord
from storage.documents import Collection, DocumentRepository
from storage.ids import new_turn_id
from storage.index_identity import IDENTITY_FILE, read_identity, write_identity
from storage.lexical import LexicalEncoder
from storage.memory_index import MEMORY_COLLECTION, TENANT_FIELD
from storage.model_files import DEFAULT_MODEL
from storage.turns import TurnOutcome, TurnRecord, TurnRepository
from storage.users import Role, UserRepository
from storage.vectors import FieldMatch, SparseVector
from tests.conftest import SettingsFactory

pytestmark = pytest.mark.timeout(360)

NOTE = "\n\n".join(
    [
        "# Facilities",
        "## Bike storage",
        "Bicycles go in the locked cage under the east stairs; the code is on the reception"
        " desk. " * 6,
        "## Showers",
        "The showers are on the second floor next to the kitchen and have towels on Fridays. " * 6,
        "## Lockers",
        "Lockers by the lifts are free for the day; keys hang in the post room. " * 6,
    ]
)
OTHER_MODEL = "minilm-l6-fp32-local"
LORE = Path(sys.executable).parent / "lore"


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


async def _chunks(lore: Lore) -> list[ChunkRecord]:
    chunks, _ = await DocumentRepository(lore.database).chunk_page(0, 1000)
    return chunks


async def _stored_vector(lore: Lore, chunk: ChunkRecord) -> list[float]:
    text = embedding_text(chunk.document_title, chunk.heading_path, chunk.text)
    hits = await lore.vector_store.search_lexical(
        Collection.KNOWLEDGE.value,
        _lexical(text),
        limit=50,
        with_dense=True,
    )
    [hit] = [hit for hit in hits if hit.id == chunk.point_id]
    assert hit.dense is not None
    return hit.dense


def _lexical(text: str) -> SparseVector:
    return LexicalEncoder().encode_document(text)


async def _model_fidelity(lore: Lore) -> list[float]:
    """Cosine of each stored chunk vector with the loaded model's vector of its text."""
    chunks = await _chunks(lore)
    texts = [embedding_text(c.document_title, c.heading_path, c.text) for c in chunks]
    fresh = await lore.embedder.embed_passages(texts)
    return [
        _cosine(await _stored_vector(lore, chunk), vector)
        for chunk, vector in zip(chunks, fresh, strict=True)
    ]


async def _as_if_another_model(lore: Lore) -> None:
    """Overwrite every chunk's point with a vector the loaded model did not make."""
    for number, chunk in enumerate(await _chunks(lore)):
        other = [0.0] * lore.embedder.dimension
        other[number % len(other)] = 1.0
        text = embedding_text(chunk.document_title, chunk.heading_path, chunk.text)
        point = make_point(
            chunk.point_id,
            document_id=chunk.document_id,
            owner_id=chunk.owner_id,
            chunk_index=chunk.chunk_index,
            dense=other,
            sparse=_lexical(text),
        )
        await lore.vector_store.upsert(Collection.KNOWLEDGE.value, [point])


async def _remember_one_exchange(lore: Lore) -> None:
    users = UserRepository(lore.database)
    user = await users.register("console", "ann", "Ann", Role.MEMBER)
    await TurnRepository(lore.database).log(
        TurnRecord(
            id=new_turn_id(),
            thread_id=f"console:{user.id}:{user.id}",
            user_id=user.id,
            chat_id=user.id,
            platform="console",
            outcome=TurnOutcome.ANSWERED,
            model="offline-extractive",
            question="Where do bikes go?",
            answer="In the locked cage under the east stairs.",
            created_at=datetime.now(UTC) - timedelta(days=30),  # outside the job's window
        )
    )


async def test_a_start_with_another_model_refuses_until_reindex_all(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(embedding_model=DEFAULT_MODEL)  # named: never replaced
    async with open_lore(settings) as lore:
        await lore.bot.maintenance.load_shared(Source(text=NOTE))
        await _remember_one_exchange(lore)
        assert min(await _model_fidelity(lore)) > 0.999
        await _as_if_another_model(lore)
        assert max(await _model_fidelity(lore)) < 0.5
    recorded = read_identity(settings.data_dir)
    assert recorded is not None
    assert recorded.model == DEFAULT_MODEL
    assert recorded.dimension == 384
    write_identity(
        settings.data_dir, dataclasses.replace(recorded, model=OTHER_MODEL, model_sha256="ab" * 32)
    )

    with pytest.raises(StartupError) as refused:
        async with open_lore(settings):
            pass
    message = str(refused.value)
    assert "\n" not in message
    assert OTHER_MODEL in message
    assert DEFAULT_MODEL in message
    assert "`lore reindex --all`" in message

    async with open_lore(settings, rebuild_vectors=True) as lore:
        summary = await reindex_all(lore, show_progress=False)
        chunks = len(await _chunks(lore))
    assert chunks >= 3
    assert summary == (
        f"Re-embedded {chunks} chunks and 1 remembered exchanges with {DEFAULT_MODEL}."
    )
    assert read_identity(settings.data_dir) == recorded

    async with open_lore(settings) as lore:  # starts again, on the rebuilt vectors
        assert min(await _model_fidelity(lore)) > 0.999
        assert await lore.vector_store.count(MEMORY_COLLECTION) == 1
        question = await lore.embedder.embed_query(
            exchange_text("Where do bikes go?", "In the locked cage under the east stairs.")
        )
        user = await UserRepository(lore.database).by_identity("console", "ann")
        assert user is not None
        [hit] = await lore.vector_store.search(
            MEMORY_COLLECTION,
            question,
            limit=1,
            conditions=[FieldMatch(TENANT_FIELD, user.id)],
        )
        assert hit.score > 0.999


def test_first_start_records_the_model(make_settings: SettingsFactory) -> None:
    settings = make_settings()
    assert not (settings.data_dir / IDENTITY_FILE).exists()

    async def start() -> None:
        async with open_lore(settings):
            pass

    asyncio.run(start())
    recorded = read_identity(settings.data_dir)
    assert recorded is not None
    assert (recorded.model, recorded.chunk_tokens) == (DEFAULT_MODEL, settings.chunk_tokens)


def test_lore_reindex_all_at_the_command_line(tmp_path: Path, models_dir: Path) -> None:
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\n"
        f"LOG_LEVEL=WARNING\nEMBEDDING_MODEL={DEFAULT_MODEL}\n"
    )
    (tmp_path / "note.md").write_text(NOTE)

    def lore(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 - our own console script
            [str(LORE), *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    assert lore("ingest", "note.md", "--shared").returncode == 0
    recorded = read_identity(tmp_path / "data")
    assert recorded is not None
    write_identity(tmp_path / "data", dataclasses.replace(recorded, model=OTHER_MODEL))

    refused = lore("stats")
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines() == [
        f"The stored vectors were made by the embedding model {OTHER_MODEL}, but Lore now"
        f" loads {DEFAULT_MODEL}; run `lore reindex --all` to rebuild them with it"
        f" (or set EMBEDDING_MODEL back to {OTHER_MODEL})."
    ]

    rebuilt = lore("reindex", "--all")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert re.fullmatch(
        rf"Re-embedded [1-9]\d* chunks and 0 remembered exchanges with {DEFAULT_MODEL}\.\n",
        rebuilt.stdout,
    )
    assert "Re-embedding" in rebuilt.stderr  # the progress bar
    assert "100%" in rebuilt.stderr
    assert lore("stats").returncode == 0


async def test_an_upgrade_keeps_the_earlier_default_until_reindex_all(
    make_settings: SettingsFactory,
) -> None:
    earlier = "minilm-l6-int8"  # the default before minilm-l6-int8-local
    async with open_lore(make_settings(embedding_model=earlier)) as lore:
        await lore.bot.maintenance.load_shared(Source(text=NOTE))

    async with open_lore(make_settings()) as lore:  # EMBEDDING_MODEL unset: the new default
        assert lore.settings.embedding_model == earlier
        assert lore.embedder.model_name == earlier
        assert min(await _model_fidelity(lore)) > 0.999
    recorded = read_identity(make_settings().data_dir)
    assert recorded is not None
    assert recorded.model == earlier

    async with open_lore(make_settings(), rebuild_vectors=True) as lore:
        summary = await reindex_all(lore, show_progress=False)
    assert summary.endswith(f"with {DEFAULT_MODEL}.")
    async with open_lore(make_settings()) as lore:
        assert lore.embedder.model_name == DEFAULT_MODEL
        assert min(await _model_fidelity(lore)) > 0.999
    moved = read_identity(make_settings().data_dir)
    assert moved is not None
    assert moved.model == DEFAULT_MODEL
