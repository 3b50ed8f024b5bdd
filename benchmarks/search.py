"""Search latency in embedded mode: shared and private search at 10k and 100k chunks.

Each scale gets a fresh data directory with N chunks in the shared collection and N in
the private one (spread over 1,000 users), written through Lore's repositories and
knowledge index: SQLite rows plus points with random unit dense vectors and lexical
vectors of random text (latency does not depend on what the vectors mean). Reported
side by side, p50/p95 in ms: the engine alone (dense; lexical; hybrid with RRF), and the
whole `Retriever.search` a chat turn makes (query embedding, the searches of its ranking,
fusion, SQLite hydration) for each ranking: dense, hybrid-rrf and hybrid (the default).
HNSW_THRESHOLD is set above the largest scale, so every search here is exact.

    .venv/bin/python benchmarks/search.py [--scales 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np

from bot.app import Lore, open_lore
from bot.settings import load_settings
from graphs.fusion import Fusion
from graphs.ingest.points import make_point
from graphs.retrieval import Retriever
from storage.documents import (
    Collection,
    DocumentRecord,
    DocumentRepository,
    NewChunk,
    SourceType,
)
from storage.embeddings import LexicalEncoder
from storage.ids import ChunkHash, UserId, new_document_id, point_id
from storage.timestamps import now_iso
from storage.users import Role, UserRepository

USERS = 1_000
CHUNKS_PER_DOCUMENT = 50
WORDS = [f"term{n}" for n in range(5_000)]


async def populate(lore: Lore, chunks: int, rng: random.Random) -> list[UserId]:
    documents = DocumentRepository(lore.database)
    lexical = LexicalEncoder()
    registry = UserRepository(lore.database)
    users = [
        (await registry.register("console", f"user{n}", f"user{n}", Role.MEMBER)).id
        for n in range(USERS)
    ]
    vectors = np.random.default_rng(1).standard_normal((chunks, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for collection in Collection:
        for start in range(0, chunks, CHUNKS_PER_DOCUMENT):
            owner = (
                users[(start // CHUNKS_PER_DOCUMENT) % USERS]
                if collection.value == "private"
                else None
            )
            record = DocumentRecord(
                new_document_id(),
                owner,
                f"doc {start}",
                SourceType.NOTE,
                f"note:{start}",
                f"{collection.value}-{start}",
                "/dev/null",
                "markdown",
                "indexing",
                now_iso(),
                now_iso(),
            )
            rows, points = [], []
            for index in range(CHUNKS_PER_DOCUMENT):
                text = " ".join(rng.choices(WORDS, k=60))
                digest = ChunkHash(f"{start + index:032x}")
                pid = point_id(record.id, digest)
                rows.append(NewChunk(index, text, digest, (), 60, pid))
                points.append(
                    make_point(
                        pid,
                        document_id=record.id,
                        owner_id=owner,
                        chunk_index=index,
                        dense=vectors[start + index].tolist(),
                        sparse=lexical.encode_document(text),
                    )
                )
            await documents.save(record, rows, replace=False)
            await lore.index.upsert(collection, points)
            await documents.mark_indexed([p.id for p in points])
    return users


async def timed(call: Callable[[], Awaitable[object]], count: int) -> tuple[float, float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


async def run_scale(chunks: int, queries: int) -> None:
    rng = random.Random(chunks)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None, data_dir=Path(tmp), sample_docs_dir="", hnsw_threshold=1_000_000
        )
        async with open_lore(settings) as lore:
            started = time.perf_counter()
            users = await populate(lore, chunks, rng)
            print(
                f"\n{chunks} chunks per collection written in {time.perf_counter() - started:.0f} s"
            )
            lexical = LexicalEncoder()
            documents = DocumentRepository(lore.database)
            query = await lore.embedder.embed_query("how do I keep my notes private?")
            sparse = lexical.encode_query("term12 term400 term3000")
            cases: list[tuple[str, Callable[[], Awaitable[object]]]] = [
                ("engine shared dense", lambda: lore.index.search_shared(query, limit=10)),
                (
                    "engine private dense",
                    lambda: lore.index.search_private(query, user_id=rng.choice(users), limit=10),
                ),
                (
                    "engine shared hybrid",
                    lambda: lore.index.search_shared(query, sparse=sparse, limit=10),
                ),
                (
                    "engine shared lexical",
                    lambda: lore.index.lexical_shared(sparse, limit=100),
                ),
                (
                    "engine private lexical",
                    lambda: lore.index.lexical_private(
                        sparse, user_id=rng.choice(users), limit=100
                    ),
                ),
                (
                    "engine private hybrid",
                    lambda: lore.index.search_private(
                        query, user_id=rng.choice(users), sparse=sparse, limit=10
                    ),
                ),
            ]
            rankings: list[tuple[str, LexicalEncoder | None, Fusion | None]] = [
                ("dense", None, None),
                ("hybrid-rrf", lexical, None),
                ("hybrid", lexical, Fusion()),
            ]
            for mode, encoder, fusion in rankings:
                retriever = Retriever(
                    index=lore.index,
                    documents=documents,
                    embedder=lore.embedder,
                    lexical=encoder,
                    fusion=fusion,
                )
                cases.append(
                    (
                        f"retriever {mode} (both)",
                        lambda r=retriever: r.search(
                            "term12 term400 notes", user_id=rng.choice(users), limit=8
                        ),
                    )
                )
                cases.append(
                    (
                        f"retriever {mode} (private)",
                        lambda r=retriever: r.search(
                            "term12 term400 notes",
                            user_id=rng.choice(users),
                            include_shared=False,
                            limit=8,
                        ),
                    )
                )
            print(f"{'search':<30} {'p50 ms':>8} {'p95 ms':>8}")
            for name, call in cases:
                p50, p95 = await timed(call, queries)
                print(f"{name:<30} {p50:>8.2f} {p95:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    for scale in args.scales:
        asyncio.run(run_scale(scale, args.queries))


if __name__ == "__main__":
    main()
