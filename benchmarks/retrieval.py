"""Retrieval quality on a BEIR dataset: nDCG@10 and Recall@10, dense-only and hybrid, one run.

The corpus is ingested through Lore's real ingest graph (chunking, embedding, SQLite,
the embedded Qdrant engine) into a temporary data directory; each query is answered
by Lore's `Retriever`, once ranking by dense vectors only and once hybrid (dense +
lexical fused with RRF). A document's score is its best chunk's rank.

    .venv/bin/python benchmarks/retrieval.py [DATASET_DIR] [--chunk-tokens 256] [--limit N]

DATASET_DIR holds corpus.jsonl, queries.jsonl and qrels/test.tsv (BEIR layout); the
default is ../shared/datasets/scifact relative to the repository.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bot.app import Lore, open_lore
from bot.settings import load_settings
from graphs.ingest.state import IngestRequest
from graphs.retrieval import Retriever
from storage.documents import DocumentRepository
from storage.embeddings import LexicalEncoder

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO / "../shared/datasets/scifact"
K = 10
CHUNK_HITS = 100


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels[row["query-id"]][row["corpus-id"]] = int(row["score"])
    return qrels


def ndcg_at_k(ranked: list[str], relevant: dict[str, int], k: int = K) -> float:
    gains = [relevant.get(doc, 0) for doc in ranked[:k]]
    dcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: list[str], relevant: dict[str, int], k: int = K) -> float:
    hits = sum(1 for doc in ranked[:k] if relevant.get(doc, 0) > 0)
    return hits / sum(1 for score in relevant.values() if score > 0)


async def ingest_corpus(lore: Lore, corpus: Path, limit: int | None) -> dict[str, str]:
    """Ingest every record as a shared note; map Lore document ids back to corpus ids."""
    ours_to_theirs: dict[str, str] = {}
    started = time.perf_counter()
    with corpus.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if limit is not None and number >= limit:
                break
            record = json.loads(line)
            text = f"# {record.get('title') or record['_id']}\n\n{record['text']}"
            result = await lore.bot.ingest(IngestRequest(None, text=text))
            ours_to_theirs[result.document_id] = record["_id"]
    elapsed = time.perf_counter() - started
    stats = await lore.bot.stats()
    print(f"ingested {len(ours_to_theirs)} documents, {stats.chunks} chunks in {elapsed:.0f} s")
    return ours_to_theirs


async def evaluate(
    retriever: Retriever,
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    ids: dict[str, str],
) -> tuple[float, float, float]:
    ndcgs, recalls = [], []
    started = time.perf_counter()
    for query_id, relevant in qrels.items():
        hits = await retriever.search(queries[query_id], user_id=None, limit=CHUNK_HITS)
        ranked: list[str] = []
        for hit in hits:  # best chunk first; a document counts once
            doc = ids.get(hit.passage.document_id)
            if doc is not None and doc not in ranked:
                ranked.append(doc)
        ndcgs.append(ndcg_at_k(ranked, relevant))
        recalls.append(recall_at_k(ranked, relevant))
    per_query_ms = (time.perf_counter() - started) * 1000 / max(len(qrels), 1)
    return sum(ndcgs) / len(ndcgs), sum(recalls) / len(recalls), per_query_ms


async def run(dataset: Path, chunk_tokens: int, overlap: int, limit: int | None) -> None:
    queries = {}
    with (dataset / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            queries[record["_id"]] = record["text"]
    qrels = load_qrels(dataset / "qrels" / "test.tsv")
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None,
            data_dir=Path(tmp),
            sample_docs_dir="",
            chunk_tokens=chunk_tokens,
            chunk_overlap_tokens=overlap,
        )
        async with open_lore(settings) as lore:
            ids = await ingest_corpus(lore, dataset / "corpus.jsonl", limit)
            if limit is not None:
                known = set(ids.values())
                qrels = {q: rel for q, rel in qrels.items() if all(doc in known for doc in rel)}
            documents = DocumentRepository(lore.database)
            print(f"queries: {len(qrels)}, chunk tokens {chunk_tokens}/{overlap}")
            print(f"{'ranking':<8} {'nDCG@10':>8} {'R@10':>7} {'ms/query':>9}")
            for name, lexical in (("dense", None), ("hybrid", LexicalEncoder())):
                retriever = Retriever(
                    index=lore.index, documents=documents, embedder=lore.embedder, lexical=lexical
                )
                ndcg, recall, ms = await evaluate(retriever, queries, qrels, ids)
                print(f"{name:<8} {ndcg:>8.3f} {recall:>7.3f} {ms:>9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--chunk-tokens", type=int, default=256)
    parser.add_argument("--overlap", type=int, default=48)
    parser.add_argument("--limit", type=int, default=None, help="ingest only the first N docs")
    args = parser.parse_args()
    asyncio.run(run(args.dataset.resolve(), args.chunk_tokens, args.overlap, args.limit))


if __name__ == "__main__":
    main()
