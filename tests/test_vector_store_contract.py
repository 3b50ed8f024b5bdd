"""One contract suite for every VectorStore: qdrant-edge, qdrant-client local mode, a real server.

The edge store runs in `tmp_path`; the server store runs over qdrant-client's
in-process local mode (same API, no server) and, with `--qdrant-url`, against a
real Qdrant server. Results are checked against numpy brute force: below the
HNSW threshold every search must be exact.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import qdrant_edge as qe
from qdrant_client import AsyncQdrantClient

from storage.edge_store import EdgeVectorStore, StoreLockedError
from storage.ids import PointId
from storage.server_store import ServerVectorStore
from storage.vectors import (
    CollectionSpec,
    Condition,
    FieldMatch,
    IntRange,
    SparseVector,
    TenantFilterMissingError,
    VectorPoint,
    VectorStore,
    VectorStoreError,
)

DIM = 16
Matrix = npt.NDArray[np.float64]

LOCAL_MODE_WARNING = "ignore:Payload indexes have no effect in the local Qdrant:UserWarning"


@dataclass
class Backend:
    """A store under test plus how to look behind it."""

    kind: str
    store: VectorStore
    reopen: Callable[[], Awaitable[VectorStore]]
    indexed_fields: Callable[[str], Awaitable[set[str] | None]]
    names: list[str] = field(default_factory=list)

    def name(self, prefix: str) -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:8]}"
        self.names.append(name)
        return name


async def _edge_backend(root: Path) -> Backend:
    async def reopen() -> VectorStore:
        return EdgeVectorStore(root)

    async def indexed_fields(name: str) -> set[str]:
        await made.store.close()

        def read() -> set[str]:
            shard = qe.EdgeShard.load(str(root / name))
            try:
                return set(shard.info().payload_schema)
            finally:
                shard.close()

        return await asyncio.to_thread(read)

    made = Backend("edge", EdgeVectorStore(root), reopen, indexed_fields)
    return made


def _server_backend(client: AsyncQdrantClient, *, local: bool) -> Backend:
    async def reopen() -> VectorStore:
        return ServerVectorStore(client)

    async def indexed_fields(name: str) -> set[str] | None:
        if local:  # local mode keeps no payload indexes
            return None
        info = await client.get_collection(name)
        return set(info.payload_schema)

    return Backend(
        "local" if local else "server", ServerVectorStore(client), reopen, indexed_fields
    )


@pytest.fixture(
    params=[
        "edge",
        pytest.param("local", marks=pytest.mark.filterwarnings(LOCAL_MODE_WARNING)),
        "server",
    ]
)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    kind: str = request.param
    if kind == "edge":
        made = await _edge_backend(tmp_path / "qdrant")
        yield made
        await made.store.close()
        return
    if kind == "local":
        client = AsyncQdrantClient(location=":memory:")
        yield _server_backend(client, local=True)
        await client.close()
        return
    url = request.config.getoption("--qdrant-url")
    if not url:
        pytest.skip("needs --qdrant-url")
    client = AsyncQdrantClient(url=str(url), check_compatibility=False)
    made = _server_backend(client, local=False)
    yield made
    for name in made.names:
        await client.delete_collection(name)
    await client.close()


def _vectors(rng: np.random.Generator, n: int) -> Matrix:
    return rng.normal(size=(n, DIM))


def _ids(n: int) -> list[PointId]:
    return [PointId(str(uuid.UUID(int=i + 1))) for i in range(n)]


def _brute_force(vectors: Matrix, query: Matrix, mask: npt.NDArray[np.bool_], k: int) -> list[int]:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    candidates = np.flatnonzero(mask)
    return [int(i) for i in candidates[np.argsort(-scores[candidates])][:k]]


async def test_ensure_collection_is_idempotent_and_adds_missing_indexes(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM, keyword_fields=("doc",))
    rng = np.random.default_rng(1)
    store = backend.store
    await store.ensure_collection(spec)
    points = [
        VectorPoint(i, v.tolist(), payload={"doc": "d", "lang": "en"})
        for i, v in zip(_ids(3), _vectors(rng, 3), strict=True)
    ]
    await store.upsert(spec.name, points)
    await store.ensure_collection(spec)
    await store.ensure_collection(replace(spec, keyword_fields=("doc", "lang")))

    assert await store.count(spec.name) == 3
    assert await store.count(spec.name, [FieldMatch("lang", "en")]) == 3
    indexed = await backend.indexed_fields(spec.name)
    if indexed is not None:
        assert indexed == {"doc", "lang"}


async def test_upsert_then_search_returns_nearest_first_with_payload(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM, integer_fields=("n",))
    rng = np.random.default_rng(2)
    vectors = _vectors(rng, 60)
    ids = _ids(60)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(
        spec.name,
        [
            VectorPoint(i, v.tolist(), payload={"n": n, "title": f"t{n}"})
            for n, (i, v) in enumerate(zip(ids, vectors, strict=True))
        ],
    )

    for target in (0, 17, 59):
        query = vectors[target] + rng.normal(scale=0.05, size=DIM)
        hits = await backend.store.search(spec.name, query.tolist(), limit=5)
        expected = _brute_force(vectors, query, np.ones(60, dtype=bool), 5)
        assert [h.id for h in hits] == [ids[i] for i in expected]
        assert hits[0].id == ids[target]
        assert dict(hits[0].payload) == {"n": target, "title": f"t{target}"}
        assert hits[0].score > hits[1].score


async def test_same_id_upsert_overwrites(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM)
    rng = np.random.default_rng(3)
    first, second, other = _vectors(rng, 3)
    pid, other_id = _ids(2)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(
        spec.name,
        [VectorPoint(pid, first.tolist(), payload={"v": 1}), VectorPoint(other_id, other.tolist())],
    )
    await backend.store.upsert(spec.name, [VectorPoint(pid, second.tolist(), payload={"v": 2})])

    assert await backend.store.count(spec.name) == 2
    hits = await backend.store.search(spec.name, second.tolist(), limit=1)
    assert hits[0].id == pid
    assert dict(hits[0].payload) == {"v": 2}
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)


async def test_delete_points_and_delete_where(backend: Backend) -> None:
    spec = CollectionSpec(
        name=backend.name("docs"), dense_size=DIM, keyword_fields=("document_id",)
    )
    rng = np.random.default_rng(4)
    ids = _ids(12)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(
        spec.name,
        [
            VectorPoint(i, v.tolist(), payload={"document_id": f"d{n % 3}"})
            for n, (i, v) in enumerate(zip(ids, _vectors(rng, 12), strict=True))
        ],
    )

    await backend.store.delete_points(spec.name, [ids[0], ids[1], PointId(str(uuid.uuid4()))])
    assert await backend.store.point_ids(spec.name) == set(ids[2:])

    await backend.store.delete_where(spec.name, [FieldMatch("document_id", "d2")])
    remaining = {i for n, i in enumerate(ids) if n >= 2 and n % 3 != 2}
    assert await backend.store.point_ids(spec.name) == remaining
    assert await backend.store.count(spec.name, [FieldMatch("document_id", "d2")]) == 0
    with pytest.raises(VectorStoreError):
        await backend.store.delete_where(spec.name, [])


async def test_field_match_and_int_range_filters(backend: Backend) -> None:
    spec = CollectionSpec(
        name=backend.name("docs"), dense_size=DIM, keyword_fields=("kind",), integer_fields=("day",)
    )
    rng = np.random.default_rng(5)
    n = 300
    vectors = _vectors(rng, n)
    days = np.array(
        [
            20240101 + 100 * int(m) + int(d)
            for m, d in zip(rng.integers(0, 3, n), rng.integers(0, 28, n), strict=True)
        ]
    )
    kinds = np.array(["note" if k else "page" for k in rng.integers(0, 2, n)])
    ids = _ids(n)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(
        spec.name,
        [
            VectorPoint(
                ids[k], vectors[k].tolist(), payload={"day": int(days[k]), "kind": kinds[k]}
            )
            for k in range(n)
        ],
    )

    feb = (days >= 20240201) & (days <= 20240229)
    cases: list[tuple[list[Condition], npt.NDArray[np.bool_]]] = [
        ([IntRange("day", gte=20240201, lte=20240229)], feb),
        ([IntRange("day", gte=20240301)], days >= 20240301),
        ([IntRange("day", lte=20240110)], days <= 20240110),
        ([FieldMatch("kind", "note")], kinds == "note"),
        (
            [FieldMatch("kind", "note"), IntRange("day", gte=20240201, lte=20240229)],
            feb & (kinds == "note"),
        ),
        ([FieldMatch("day", int(days[7]))], days == days[7]),
    ]
    for conditions, mask in cases:
        assert await backend.store.count(spec.name, conditions) == int(mask.sum())
        query = rng.normal(size=DIM)
        hits = await backend.store.search(spec.name, query.tolist(), limit=8, conditions=conditions)
        assert [h.id for h in hits] == [ids[i] for i in _brute_force(vectors, query, mask, 8)]
    assert await backend.store.count(spec.name) == n


async def test_tenant_search_never_crosses_tenants(backend: Backend) -> None:
    spec = CollectionSpec(
        name=backend.name("private"),
        dense_size=DIM,
        tenant_field="user_id",
        integer_fields=("day",),
    )
    rng = np.random.default_rng(6)
    n, tenants = 800, 40
    vectors = _vectors(rng, n)
    owners = rng.integers(0, tenants, n)
    ids = _ids(n)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(
        spec.name,
        [
            VectorPoint(ids[k], vectors[k].tolist(), payload={"user_id": f"u{owners[k]}", "day": 1})
            for k in range(n)
        ],
    )

    for conditions in ([], [IntRange("day", gte=0)], [FieldMatch("tenant", "u1")]):
        with pytest.raises(TenantFilterMissingError):
            await backend.store.search(spec.name, vectors[0].tolist(), conditions=conditions)
    # Raised before the engine sees the query: a wrong-size vector is never looked at.
    with pytest.raises(TenantFilterMissingError):
        await backend.store.search(spec.name, [1.0, 2.0])

    for _ in range(60):
        tenant = int(rng.integers(0, tenants))
        query = rng.normal(size=DIM)
        hits = await backend.store.search(
            spec.name, query.tolist(), limit=10, conditions=[FieldMatch("user_id", f"u{tenant}")]
        )
        assert {h.payload["user_id"] for h in hits} <= {f"u{tenant}"}
        expected = _brute_force(vectors, query, owners == tenant, 10)
        assert [h.id for h in hits] == [ids[i] for i in expected]


async def test_hybrid_search_finds_a_lexical_only_match(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM)
    rng = np.random.default_rng(7)
    base = rng.normal(size=DIM)
    ids = _ids(31)
    common = SparseVector(indices=(1, 2, 3), values=(0.5, 0.3, 0.2))
    distractors = [
        VectorPoint(
            ids[k],
            (base + rng.normal(scale=0.1, size=DIM)).tolist(),
            sparse=common,
            payload={"k": k},
        )
        for k in range(30)
    ]
    target = VectorPoint(
        ids[30], (-base).tolist(), sparse=SparseVector((3, 777), (0.2, 0.9)), payload={"k": 30}
    )
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(spec.name, [*distractors, target])

    dense_only = await backend.store.search(spec.name, base.tolist(), limit=5)
    assert target.id not in {h.id for h in dense_only}
    hybrid = await backend.store.search(
        spec.name, base.tolist(), sparse=SparseVector((777,), (1.0,)), limit=5
    )
    assert target.id in [h.id for h in hybrid[:2]]
    assert next(h for h in hybrid if h.id == target.id).payload == {"k": 30}
    assert len(hybrid) == 5


async def test_lexical_search_ranks_by_bm25_with_idf_within_the_tenant(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM, tenant_field="user_id")
    rng = np.random.default_rng(9)
    n, vocabulary = 120, 40
    ids = _ids(n)
    owners = rng.integers(0, 3, size=n)
    weights = np.zeros((n, vocabulary))
    points = []
    for k in range(n):
        terms = rng.choice(vocabulary, size=int(rng.integers(1, 8)), replace=False)
        weights[k, terms] = rng.uniform(0.2, 2.0, size=len(terms)).round(3)
        sparse = SparseVector(
            tuple(int(t) for t in terms), tuple(float(w) for w in weights[k, terms])
        )
        points.append(
            VectorPoint(ids[k], _vectors(rng, 1)[0].tolist(), sparse, {"user_id": f"u{owners[k]}"})
        )
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(spec.name, points)

    with pytest.raises(TenantFilterMissingError):
        await backend.store.search_lexical(spec.name, SparseVector((1,), (1.0,)))
    # Qdrant's IDF over the whole collection: ln(1 + (N - n_t + 0.5) / (n_t + 0.5)).
    holders = (weights > 0).sum(axis=0)
    idf = np.log(1 + (n - holders + 0.5) / (holders + 0.5))
    for _ in range(20):
        tenant = int(rng.integers(0, 3))
        terms = rng.choice(vocabulary, size=3, replace=False)
        hits = await backend.store.search_lexical(
            spec.name,
            SparseVector(tuple(int(t) for t in terms), (1.0, 1.0, 1.0)),
            limit=8,
            conditions=[FieldMatch("user_id", f"u{tenant}")],
        )
        scores = (weights[:, terms] * idf[terms]).sum(axis=1)
        mine = np.flatnonzero((owners == tenant) & (scores > 0))
        expected = mine[np.argsort(-scores[mine], kind="stable")][:8]
        assert {h.payload["user_id"] for h in hits} <= {f"u{tenant}"}
        assert [h.score for h in hits] == pytest.approx(scores[expected].tolist(), rel=1e-4)
        assert {h.id for h in hits} == {ids[i] for i in expected}
        assert all(h.dense is None for h in hits)

    # Asked for, each hit carries its dense vector as stored: unit length (cosine distance).
    hits = await backend.store.search_lexical(
        spec.name,
        SparseVector(tuple(range(vocabulary)), (1.0,) * vocabulary),
        limit=5,
        conditions=[FieldMatch("user_id", "u0")],
        with_dense=True,
    )
    by_id = {point.id: np.asarray(point.dense) for point in points}
    for hit in hits:
        stored = by_id[hit.id] / np.linalg.norm(by_id[hit.id])
        assert hit.dense is not None
        assert np.asarray(hit.dense) == pytest.approx(stored, abs=1e-5)


async def test_point_ids_and_count_span_many_scroll_pages(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM, integer_fields=("n",))
    rng = np.random.default_rng(8)
    n = 1_500
    ids = _ids(n)
    await backend.store.ensure_collection(spec)
    assert await backend.store.point_ids(spec.name) == set()
    vectors = _vectors(rng, n)
    for start in range(0, n, 500):
        await backend.store.upsert(
            spec.name,
            [
                VectorPoint(ids[k], vectors[k].tolist(), payload={"n": k})
                for k in range(start, start + 500)
            ],
        )

    assert await backend.store.point_ids(spec.name) == set(ids)
    assert await backend.store.count(spec.name) == n
    assert await backend.store.count(spec.name, [IntRange("n", gte=1_000)]) == 500


async def test_dimension_mismatch_says_the_model_changed(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(spec.name, [VectorPoint(_ids(1)[0], [1.0] * DIM)])

    with pytest.raises(VectorStoreError, match="embedding model changed"):
        await backend.store.ensure_collection(replace(spec, dense_size=DIM * 2))

    await backend.store.close()
    reopened = await backend.reopen()
    backend.store = reopened
    with pytest.raises(VectorStoreError, match="embedding model changed"):
        await reopened.ensure_collection(replace(spec, dense_size=DIM * 2))


async def test_a_dropped_collection_comes_back_empty_at_another_size(backend: Backend) -> None:
    spec = CollectionSpec(name=backend.name("docs"), dense_size=DIM)
    await backend.store.ensure_collection(spec)
    await backend.store.upsert(spec.name, [VectorPoint(_ids(1)[0], [1.0] * DIM)])

    await backend.store.drop_collection(spec.name)
    await backend.store.drop_collection(spec.name)  # gone already: nothing to do
    wider = replace(spec, dense_size=DIM * 2)
    await backend.store.ensure_collection(wider)
    assert await backend.store.count(spec.name) == 0
    await backend.store.upsert(spec.name, [VectorPoint(_ids(1)[0], [1.0] * DIM * 2)])
    assert await backend.store.count(spec.name) == 1


async def test_unknown_collection_is_a_clear_error(backend: Backend) -> None:
    with pytest.raises(VectorStoreError, match="ensure_collection"):
        await backend.store.count("never_opened")


# --- edge only --------------------------------------------------------------------------------


async def test_edge_refuses_a_collection_name_that_is_not_a_directory_name(tmp_path: Path) -> None:
    async with EdgeVectorStore(tmp_path / "qdrant") as store:
        with pytest.raises(VectorStoreError, match="safe directory name"):
            await store.ensure_collection(CollectionSpec(name="../escape", dense_size=DIM))
    assert not (tmp_path / "escape").exists()


async def test_edge_points_persist_across_close_and_reopen(tmp_path: Path) -> None:
    spec = CollectionSpec(name="docs", dense_size=DIM, tenant_field="user_id")
    rng = np.random.default_rng(9)
    vectors = _vectors(rng, 20)
    ids = _ids(20)
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(spec)
        await store.upsert(
            spec.name,
            [
                VectorPoint(i, v.tolist(), payload={"user_id": "u"})
                for i, v in zip(ids, vectors, strict=True)
            ],
        )

    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(spec)
        assert await store.point_ids(spec.name) == set(ids)
        hits = await store.search(
            spec.name, vectors[4].tolist(), limit=1, conditions=[FieldMatch("user_id", "u")]
        )
        assert hits[0].id == ids[4]


LOCKED_PROBE = """
import asyncio, sys
from pathlib import Path
from storage.edge_store import EdgeVectorStore, StoreLockedError
from storage.vectors import CollectionSpec

async def main() -> None:
    try:
        await EdgeVectorStore(Path(sys.argv[1])).ensure_collection(CollectionSpec("docs", 16))
    except StoreLockedError as exc:
        print("LOCKED", exc)

asyncio.run(main())
"""


async def test_edge_store_held_by_another_process_is_locked(tmp_path: Path) -> None:
    spec = CollectionSpec(name="docs", dense_size=DIM)
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(spec)
        probe = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            LOCKED_PROBE,
            str(tmp_path),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await probe.communicate()
        assert probe.returncode == 0, err.decode()
        assert out.decode().startswith("LOCKED")
        assert "another Lore process" in out.decode()
        assert str(tmp_path / "docs") in out.decode()

        with pytest.raises(StoreLockedError, match="another Lore process"):
            await EdgeVectorStore(tmp_path).ensure_collection(spec)

    async with EdgeVectorStore(tmp_path) as store:  # released on close
        await store.ensure_collection(spec)
        assert await store.count(spec.name) == 0


async def test_edge_builds_hnsw_above_threshold_and_stays_correct(tmp_path: Path) -> None:
    spec = CollectionSpec(name="docs", dense_size=DIM, hnsw_threshold=400)
    rng = np.random.default_rng(10)
    vectors = _vectors(rng, 300)
    ids = _ids(300)
    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(spec)
        await store.upsert(
            spec.name,
            [VectorPoint(i, v.tolist()) for i, v in zip(ids[:150], vectors[:150], strict=True)],
        )
    assert _indexed_vectors(tmp_path / "docs") == 0

    async with EdgeVectorStore(tmp_path) as store:
        await store.ensure_collection(replace(spec, hnsw_threshold=100))
        await store.upsert(
            spec.name,
            [VectorPoint(i, v.tolist()) for i, v in zip(ids[150:], vectors[150:], strict=True)],
        )
        hits = await store.search(spec.name, vectors[200].tolist(), limit=1)
        assert hits[0].id == ids[200]
        assert await store.count(spec.name) == 300
        await store.wait_for_index_builds()  # the index is built in the background
    assert _indexed_vectors(tmp_path / "docs") >= 150


def _indexed_vectors(path: Path) -> int:
    shard = qe.EdgeShard.load(str(path))
    try:
        return shard.info().indexed_vectors_count
    finally:
        shard.close()


# --- server only ------------------------------------------------------------------------------


async def _answer_forbidden_echoing_headers(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    body = b'{"status":{"error":"forbidden, you sent ' + head.replace(b"\r\n", b" ") + b'"}}'
    writer.write(
        b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
    )
    await writer.drain()
    writer.close()


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection:UserWarning")
async def test_server_errors_are_translated_without_the_api_key() -> None:
    server = await asyncio.start_server(_answer_forbidden_echoing_headers, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    store = ServerVectorStore.connect(f"http://127.0.0.1:{port}", "sekrit-key-123", timeout=5)
    try:
        with pytest.raises(VectorStoreError) as caught:
            await store.ensure_collection(CollectionSpec(name="docs", dense_size=DIM))
    finally:
        await store.close()
        server.close()
        await server.wait_closed()
    message = str(caught.value)
    assert "403" in message
    assert "'docs'" in message
    assert "sekrit-key-123" not in message


async def test_server_unreachable_is_a_vector_store_error() -> None:
    server = await asyncio.start_server(_answer_forbidden_echoing_headers, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    store = ServerVectorStore.connect(f"http://127.0.0.1:{port}", None, timeout=2)
    try:
        with pytest.raises(VectorStoreError, match="ensure_collection on collection 'docs'"):
            await store.ensure_collection(CollectionSpec(name="docs", dense_size=DIM))
    finally:
        await store.close()
