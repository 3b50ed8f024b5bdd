"""A fixed part of a cached BEIR corpus, for models too slow to embed all of it on a shared box.

multilingual-e5-small runs at about 2 passages a second on one core here: SciFact's 10,008
chunks and NFCorpus's take hours. The subset is the same for every model (cut from a
whole cached corpus, or ingested alone: `retrieval_cache.ensure_entry(only=...)`): up to
`queries` queries of each split (by a hash of the query id), every document judged for
them, and other documents (by a hash of their id) up to `documents` in all. Rankings on it
compare models side by side; their absolute figures are higher than on the whole corpus
(fewer distractors) and are labelled so.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import beir
import numpy as np
from numpy.typing import NDArray
from retrieval_cache import Chunks

__all__ = ["choose", "choose_documents", "restrict"]


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def choose_documents(
    corpus_ids: list[str], splits: dict[str, beir.Qrels], *, documents: int, queries: int
) -> tuple[set[str], dict[str, beir.Qrels]]:
    """The corpus ids of the subset, and the splits cut to its queries."""
    kept_splits = _kept(splits, queries)
    known = set(corpus_ids)
    chosen = {
        doc
        for judged in kept_splits.values()
        for rel in judged.values()
        for doc in rel
        if doc in known
    }
    others = sorted((doc for doc in known if doc not in chosen), key=_key)
    chosen.update(others[: max(documents - len(chosen), 0)])
    return chosen, kept_splits


def choose(
    chunks: Chunks, splits: dict[str, beir.Qrels], *, documents: int, queries: int
) -> tuple[NDArray[np.int64], dict[str, beir.Qrels]]:
    """The rows (chunk indices) of the subset of a whole cached corpus, and the splits cut
    to its queries (other documents by a hash of their first corpus id)."""
    kept_splits = _kept(splits, queries)
    wanted = {doc for judged in kept_splits.values() for rel in judged.values() for doc in rel}
    position = {corpus_id: n for n, ids in enumerate(chunks.doc_ids) for corpus_id in ids}
    chosen = {position[doc] for doc in wanted if doc in position}
    others = sorted(
        (n for n in range(len(chunks.doc_ids)) if n not in chosen),
        key=lambda n: _key(chunks.doc_ids[n][0]),
    )
    chosen.update(others[: max(documents - len(chosen), 0)])
    rows = np.flatnonzero(np.isin(chunks.doc_of_chunk, np.fromiter(chosen, dtype=np.int64)))
    return rows.astype(np.int64), kept_splits


def _kept(splits: dict[str, beir.Qrels], queries: int) -> dict[str, beir.Qrels]:
    return {
        name: {q: judged[q] for q in sorted(judged, key=_key)[:queries]}
        for name, judged in splits.items()
    }


def restrict(chunks: Chunks, rows: NDArray[np.int64]) -> Chunks:
    """The chunks of `rows` only (document numbering unchanged)."""
    picked = rows.tolist()
    return replace(
        chunks,
        point_ids=[chunks.point_ids[r] for r in picked],
        doc_of_chunk=chunks.doc_of_chunk[rows],
        dense=chunks.dense[rows],
        texts=[chunks.texts[r] for r in picked],
        sparse_indices=[chunks.sparse_indices[r] for r in picked],
        sparse_values=[chunks.sparse_values[r] for r in picked],
    )
