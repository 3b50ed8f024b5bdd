"""A BEIR corpus ingested once through Lore, kept on disk outside the repository.

Building a cache entry ingests every corpus record as a shared note through Lore's real
ingest graph (chunking, embedding, SQLite, the embedded Qdrant engine) into
`<cache>/<dataset>-<model>-c<tokens>o<overlap>/data`, a normal Lore data directory that
later runs open again with `open_lore` to search it through the production `Retriever`.
It then exports what the fusion experiments need into `chunks.npz` (each chunk's corpus
document, dense vector and stored lexical vector, read back from the engine) and
`chunks.jsonl` (each chunk's embedded text), and writes `entry.json` last: an entry
without it is incomplete and is rebuilt. Query vectors are cached per model the same way.
Nothing here belongs in the repository: the default cache is `../cache/retrieval`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import beir
import numpy as np
import qdrant_edge as qe
from numpy.typing import NDArray

from bot.app import open_lore
from bot.settings import Settings, load_settings
from bot.sources import Source
from graphs.ingest.points import embedding_text
from storage.embeddings import Embedder
from storage.model_files import ensure_model_dir, model_choice

FORMAT = 1
ENTRY_FILE = "entry.json"


@dataclass(frozen=True, slots=True)
class Chunks:
    """Every chunk of a cached corpus, row-aligned."""

    point_ids: list[str]
    doc_of_chunk: NDArray[np.int64]  # index into `doc_ids` of each chunk's document
    doc_ids: list[list[str]]  # corpus ids of each Lore document (duplicates share one)
    dense: NDArray[np.float32]  # unit vectors, one row per chunk
    texts: list[str]  # the text that was embedded (title > headings, then the chunk)
    sparse_indices: list[NDArray[np.int64]]  # the lexical vector stored with each chunk
    sparse_values: list[NDArray[np.float32]]


@dataclass(frozen=True, slots=True)
class Entry:
    """One cached corpus: its Lore data directory and exported arrays."""

    root: Path
    settings: Settings

    @property
    def data_dir(self) -> Path:
        return self.root / "data"


def entry_settings(data_dir: Path, model: str, chunk_tokens: int, overlap: int) -> Settings:
    """The settings every run on one cache entry uses (no sample docs, offline model)."""
    return load_settings(
        _env_file=None,
        data_dir=data_dir,
        MODELS_DIR=data_dir.parent.parent / "models",
        sample_docs_dir="",
        embedding_model=model,
        chunk_tokens=chunk_tokens,
        chunk_overlap_tokens=overlap,
    )


async def ensure_entry(
    cache: Path,
    dataset: Path,
    model: str,
    chunk_tokens: int,
    overlap: int,
    *,
    only: frozenset[str] | None = None,
) -> Entry:
    """The cache entry for this dataset and model, built first if missing or incomplete;
    with `only`, of those corpus records alone (`retrieval_subset`)."""
    part = "" if only is None else f"-sub{len(only)}"
    root = cache / f"{dataset.name}-{model}-c{chunk_tokens}o{overlap}{part}"
    settings = entry_settings(root / "data", model, chunk_tokens, overlap)
    entry = Entry(root, settings)
    marker = root / ENTRY_FILE
    if marker.is_file() and json.loads(marker.read_text("utf-8")).get("format") == FORMAT:
        return entry
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    started = time.perf_counter()
    doc_ids = await _ingest(settings, dataset, only)
    ingest_seconds = time.perf_counter() - started
    await asyncio.to_thread(_export, entry, doc_ids)
    info = {"format": FORMAT, "dataset": str(dataset), "ingest_seconds": round(ingest_seconds)}
    marker.write_text(json.dumps(info), "utf-8")
    return entry


async def _ingest(
    settings: Settings, dataset: Path, only: frozenset[str] | None
) -> dict[str, list[str]]:
    """Ingest every record (of `only`); Lore document id -> corpus ids (identical texts share
    a document)."""
    ours: dict[str, list[str]] = {}
    started = time.perf_counter()
    records = (r for r in beir.corpus(dataset) if only is None or r.id in only)
    async with open_lore(settings) as lore:
        for number, record in enumerate(records, start=1):
            text = f"# {record.title or record.id}\n\n{record.text}"
            result = await lore.bot.maintenance.load_shared(Source(text=text))
            ours.setdefault(result.document_id, []).append(record.id)
            if number % 500 == 0:
                rate = number / (time.perf_counter() - started)
                print(f"  {dataset.name}: {number} documents ({rate:.1f}/s)", flush=True)
    return ours


def _export(entry: Entry, ours: dict[str, list[str]]) -> None:
    """Write chunks.npz and chunks.jsonl from the entry's SQLite file and vector shard."""
    order = list(ours)
    position = {doc: n for n, doc in enumerate(order)}
    rows = _chunk_rows(entry.settings.database_path)
    vectors = _stored_vectors(entry.settings.qdrant_dir / "knowledge")
    dense = np.stack([np.asarray(vectors[row[0]][0], dtype=np.float32) for row in rows])
    lengths = np.asarray([len(vectors[row[0]][1]) for row in rows], dtype=np.int64)
    indices = np.concatenate([np.asarray(vectors[row[0]][1], np.int64) for row in rows])
    values = np.concatenate([np.asarray(vectors[row[0]][2], np.float32) for row in rows])
    np.savez(
        entry.root / "chunks.npz",
        point_ids=np.asarray([row[0] for row in rows]),
        doc_of_chunk=np.asarray([position[row[1]] for row in rows], dtype=np.int64),
        dense=dense,
        sparse_lengths=lengths,
        sparse_indices=indices,
        sparse_values=values,
    )
    with (entry.root / "chunks.jsonl").open("w", encoding="utf-8") as out:
        for point, doc, text in rows:
            out.write(json.dumps({"point": point, "doc": doc, "text": text}) + "\n")
    (entry.root / "documents.json").write_text(json.dumps([ours[d] for d in order]), "utf-8")


def _chunk_rows(database: Path) -> list[tuple[str, str, str]]:
    """(point id, document id, embedded text) of every chunk, in document then chunk order."""
    sql = (
        "SELECT c.point_id, c.document_id, d.title, c.heading_path, c.text FROM chunks c"
        " JOIN documents d ON d.id = c.document_id ORDER BY c.document_id, c.chunk_index"
    )
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        return [
            (point, doc, embedding_text(title, json.loads(path), text))
            for point, doc, title, path, text in connection.execute(sql)
        ]


def _stored_vectors(path: Path) -> dict[str, tuple[list[float], list[int], list[float]]]:
    """Point id -> (dense, sparse indices, sparse values) as the engine holds them."""
    shard = qe.EdgeShard.load(str(path))
    found: dict[str, tuple[list[float], list[int], list[float]]] = {}
    offset: Any = None
    try:
        while True:
            request = qe.ScrollRequest(offset=offset, limit=1000, with_vector=True)
            records, offset = shard.scroll(request)
            for record in records:
                vector: Any = record.vector
                sparse = vector["lexical"]
                found[str(record.id)] = (
                    list(vector["dense"]),
                    list(sparse.indices),
                    list(sparse.values),
                )
            if offset is None:
                return found
    finally:
        shard.close()


def load_chunks(entry: Entry) -> Chunks:
    """The exported arrays of a complete entry."""
    arrays = np.load(entry.root / "chunks.npz")
    # Each item access of an NpzFile reads the array again: read each one once.
    indices, values = arrays["sparse_indices"], arrays["sparse_values"]
    bounds = np.concatenate([[0], np.cumsum(arrays["sparse_lengths"])])
    with (entry.root / "chunks.jsonl").open(encoding="utf-8") as handle:
        texts = [json.loads(line)["text"] for line in handle]
    return Chunks(
        point_ids=[str(p) for p in arrays["point_ids"]],
        doc_of_chunk=arrays["doc_of_chunk"],
        doc_ids=json.loads((entry.root / "documents.json").read_text("utf-8")),
        dense=arrays["dense"],
        texts=texts,
        sparse_indices=[indices[a:b] for a, b in itertools.pairwise(bounds)],
        sparse_values=[values[a:b] for a, b in itertools.pairwise(bounds)],
    )


async def query_vectors(
    entry: Entry, texts: dict[str, str], model: str
) -> dict[str, NDArray[np.float32]]:
    """Dense vectors of every query, cached per model next to the entry (a query not yet
    cached is embedded and added)."""
    path = entry.root / f"queries-{model}.npz"
    known: dict[str, NDArray[np.float32]] = {}
    if path.is_file():
        arrays = np.load(path)
        known = dict(zip((str(q) for q in arrays["ids"]), arrays["vectors"], strict=True))
    missing: Sequence[str] = [q for q in texts if q not in known]
    if missing:
        settings = entry.settings
        model_dir = await ensure_model_dir(settings.models_dir, model_choice(model))
        embedder = await Embedder.load(model_dir, threads=settings.embedding_threads)
        for query in missing:
            known[query] = np.asarray(await embedder.embed_query(texts[query]), dtype=np.float32)
        ids = list(known)
        np.savez(path, ids=np.asarray(ids), vectors=np.asarray([known[q] for q in ids]))
    return {q: known[q] for q in texts}
