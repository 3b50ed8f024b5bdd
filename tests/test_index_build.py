"""No freezes: the embedded engine's HNSW index is built in a child process on a copy of
the shard, while the live shard keeps answering searches and taking writes, and a chat turn
is answered with its citation meanwhile.

The build's child process is a real process; the tests hold it stopped (SIGSTOP) while
they search, write and ask, which proves those calls never wait for the build, then let it
finish and check that the swapped-in shard is indexed and has every write."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from dataclasses import replace
from pathlib import Path

import numpy as np
import psutil
import pytest
import qdrant_edge as qe

from bot.app import Lore, open_lore
from graphs.ingest.points import make_point
from storage.documents import Collection, DocumentRecord, DocumentRepository, NewChunk, SourceType
from storage.edge_store import EdgeVectorStore
from storage.ids import ChunkHash, new_document_id, point_id
from storage.lexical import LexicalEncoder
from storage.timestamps import now_iso
from storage.vectors import CollectionSpec, FieldMatch, VectorPoint
from tests.chat_turns import OWNER, ask, remember
from tests.conftest import SettingsFactory

pytestmark = pytest.mark.timeout(300)

DIM = 32
SPEC = CollectionSpec(name="docs", dense_size=DIM, keyword_fields=("kind",), hnsw_threshold=1000)


def _points(rng: np.random.Generator, count: int, kind: str) -> list[VectorPoint]:
    vectors = rng.normal(size=(count, DIM))
    return [
        VectorPoint(str(uuid.uuid4()), vector.tolist(), payload={"kind": kind})
        for vector in vectors
    ]


async def _build_child() -> psutil.Process:
    """The index build's child process, once it has started."""
    me = psutil.Process()
    while True:
        for child in me.children(recursive=True):
            try:
                if "storage.edge_index_build" in " ".join(child.cmdline()):
                    return child
            except psutil.NoSuchProcess:
                continue
        await asyncio.sleep(0.005)


async def _stop(child: psutil.Process) -> None:
    """SIGSTOP the child and wait until the kernel shows it stopped (on a loaded machine a
    runnable process takes the signal only when it is next scheduled)."""
    os.kill(child.pid, signal.SIGSTOP)
    while child.status() != psutil.STATUS_STOPPED:  # noqa: ASYNC110 - another process
        await asyncio.sleep(0.005)


def _indexed_vectors(path: Path) -> int:
    shard = qe.EdgeShard.load(str(path))
    try:
        return shard.info().indexed_vectors_count
    finally:
        shard.close()


async def test_searches_and_writes_are_served_while_the_index_builds(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    first = _points(rng, 1500, "first")
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(SPEC)
        await store.upsert(SPEC.name, first)  # past the threshold: a build starts
        child = await _build_child()
        await _stop(child)
        try:
            # The build cannot progress; all of this must complete anyway.
            hits = await store.search(SPEC.name, list(first[7].dense), limit=1)
            assert hits[0].id == first[7].id
            during = _points(rng, 40, "during")
            await store.upsert(SPEC.name, during)
            await store.delete_points(SPEC.name, [first[0].id, first[1].id])
            found = await store.search(
                SPEC.name, list(during[3].dense), limit=1, conditions=[FieldMatch("kind", "during")]
            )
            assert found[0].id == during[3].id
            assert child.is_running()
            assert child.status() == psutil.STATUS_STOPPED
        finally:
            os.kill(child.pid, signal.SIGCONT)
        await store.wait_for_index_builds()

        expected = {p.id for p in first[2:]} | {p.id for p in during}
        assert await store.point_ids(SPEC.name) == expected
        hits = await store.search(SPEC.name, list(during[5].dense), limit=1)
        assert hits[0].id == during[5].id
    assert _indexed_vectors(tmp_path / SPEC.name) >= 1000
    assert sorted(path.name for path in tmp_path.iterdir()) == [SPEC.name]


async def test_a_build_that_dies_is_discarded_and_nothing_is_lost(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    first = _points(rng, 1500, "first")
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(SPEC)
        await store.upsert(SPEC.name, first)
        child = await _build_child()
        await _stop(child)
        during = _points(rng, 30, "during")
        await store.upsert(SPEC.name, during)
        os.kill(child.pid, signal.SIGKILL)
        await store.wait_for_index_builds()
        assert await store.count(SPEC.name) == 1530
        assert not (tmp_path / f".build-{SPEC.name}").exists()
        # Enough writes later, the next build runs to the end.
        await store.upsert(SPEC.name, _points(rng, 200, "later"))
        await store.wait_for_index_builds()
        assert await store.count(SPEC.name) == 1730
    assert _indexed_vectors(tmp_path / SPEC.name) >= 1000


async def test_closing_during_a_build_keeps_every_point(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    first = _points(rng, 1500, "first")
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(SPEC)
        await store.upsert(SPEC.name, first)
        child = await _build_child()
        await _stop(child)
        await store.upsert(SPEC.name, _points(rng, 10, "during"))
    # Closing killed the stopped build.
    assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(SPEC)
        assert await store.count(SPEC.name) == 1510
        await store.wait_for_index_builds()  # reopening starts the build again
    assert _indexed_vectors(tmp_path / SPEC.name) >= 1000


async def test_a_swap_cut_short_by_a_crash_is_repaired_at_open(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    points = _points(rng, 50, "first")
    spec = replace(SPEC, hnsw_threshold=100_000)
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(spec)
        await store.upsert(spec.name, points)
    # A crash between setting the live shard aside and moving the copy in, with the copy.
    (tmp_path / spec.name).rename(tmp_path / f".old-{spec.name}")
    (tmp_path / f".build-{spec.name}").mkdir()
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(spec)
        assert await store.point_ids(spec.name) == {p.id for p in points}
    assert sorted(path.name for path in tmp_path.iterdir()) == [spec.name]


BIKES = (
    "# Facilities\n\n## Bike storage\n\nBicycles go in the locked cage under the east stairs;"
    " the code is on the reception desk."
)


async def _fill_shared(lore: Lore, chunks: int, rng: np.random.Generator) -> None:
    """Store `chunks` filler chunks in the shared knowledge the way an ingest does (rows
    first, then points, then marked indexed), with random vectors no question is near."""
    documents = DocumentRepository(lore.database)
    lexical = LexicalEncoder()
    vectors = rng.normal(size=(chunks, lore.embedder.dimension))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    words = [f"filler{n}" for n in range(500)]
    document_id = new_document_id()
    record = DocumentRecord(
        document_id, None, "Filler", SourceType.NOTE, "note:filler", "filler", "/dev/null",
        "markdown", "indexing", now_iso(), now_iso(),
    )  # fmt: skip
    rows, points = [], []
    for index, vector in enumerate(vectors):
        text = " ".join(rng.choice(words, size=40))
        digest = ChunkHash(f"{index:032x}")
        rows.append(NewChunk(index, text, digest, (), 40, point_id(document_id, digest), 0.0))
        points.append(
            make_point(
                point_id(document_id, digest),
                document_id=document_id,
                owner_id=None,
                chunk_index=index,
                dense=vector.tolist(),
                sparse=lexical.encode_document(text),
            )
        )
    await documents.save(record, rows, replace=False)
    await lore.index.upsert(Collection.KNOWLEDGE, points)
    await documents.mark_indexed([point.id for point in points])


async def test_a_turn_is_answered_with_its_citation_while_the_index_builds(
    make_settings: SettingsFactory,
) -> None:
    settings = make_settings(hnsw_threshold=1000)
    async with open_lore(settings) as lore:
        note = await remember(lore.bot, None, BIKES)
        await _fill_shared(lore, 1100, np.random.default_rng(5))  # past the threshold
        child = await _build_child()
        await _stop(child)
        try:
            turn = await ask(lore.bot, OWNER, "Where do bicycles go?")
            assert child.status() == psutil.STATUS_STOPPED  # the build cannot have finished
        finally:
            os.kill(child.pid, signal.SIGCONT)
        assert turn.done.outcome == "answered", turn.events
        assert [c.document_id for c in turn.done.citations] == [note.document_id]
        assert "locked cage" in turn.done.answer
        store = lore.vector_store
        assert isinstance(store, EdgeVectorStore)
        await store.wait_for_index_builds()
        again = await ask(lore.bot, OWNER, "Where do bicycles go?")
        assert [c.document_id for c in again.done.citations] == [note.document_id]
    # Every point has a sparse vector, which the engine counts as indexed: the dense vectors
    # are indexed too once the HNSW graph is in.
    assert _indexed_vectors(settings.qdrant_dir / Collection.KNOWLEDGE.value) >= 1101 + 1100
