"""Embed a cached corpus's chunks again with another embedding model, for a side-by-side.

The chunks are exactly those Lore's ingest made for the cache entry (their embedded text
is in `chunks.jsonl`); only the dense vectors change, computed by Lore's `Embedder` with
the other model choice in batches, and saved as `dense-<model>.npy` beside the entry.
The lexical vectors do not depend on the model. Reports passages per second.

    .venv/bin/python benchmarks/retrieval_models.py DATASET MODEL [--cache DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import time
from pathlib import Path

import beir
import numpy as np
import retrieval_cache as rc
from numpy.typing import NDArray

from storage.embeddings import Embedder
from storage.model_files import ensure_model_dir, model_choice

REPO = Path(__file__).resolve().parents[1]
#: The model whose ingest cut the cached chunks that every model is compared on.
DEFAULT_ENTRY_MODEL = "minilm-l6-int8-local"
BATCH = 256  # texts per call; the embedder runs them in batches of its own size


async def dense_for(
    entry: rc.Entry, model: str, rows: NDArray[np.int64] | None = None
) -> NDArray[np.float32]:
    """The chunks' dense vectors under `model` (the entry's own, or computed and cached);
    with `rows`, those chunks' only (`retrieval_subset`)."""
    if entry.settings.embedding_model == model:
        dense = rc.load_chunks(entry).dense
        return dense if rows is None else dense[rows]
    part = "" if rows is None else "-rows" + hashlib.sha256(rows.tobytes()).hexdigest()[:12]
    path = entry.root / f"dense-{model}{part}.npy"
    if path.is_file():
        loaded: NDArray[np.float32] = np.load(path)
        return loaded
    texts = rc.load_chunks(entry).texts
    if rows is not None:
        texts = [texts[r] for r in rows.tolist()]
    model_dir = await ensure_model_dir(entry.settings.models_dir, model_choice(model))
    embedder = await Embedder.load(model_dir, threads=entry.settings.embedding_threads)
    vectors: list[list[float]] = []
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        vectors.extend(await embedder.embed_passages(texts[start : start + BATCH]))
        done = len(vectors)
        rate = done / (time.perf_counter() - started)
        print(f"  {entry.root.name} {model}: {done}/{len(texts)} ({rate:.1f}/s)", flush=True)
    matrix = np.asarray(vectors, dtype=np.float32)
    np.save(path, matrix)
    return matrix


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("model")
    parser.add_argument("--cache", type=Path, default=REPO.parent / "cache" / "retrieval")
    args = parser.parse_args()
    dataset = args.dataset.resolve()
    entry = await rc.ensure_entry(args.cache, dataset, DEFAULT_ENTRY_MODEL, 256, 48)
    await dense_for(entry, args.model)
    await rc.query_vectors(entry, beir.queries(dataset), args.model)


if __name__ == "__main__":
    asyncio.run(main())
