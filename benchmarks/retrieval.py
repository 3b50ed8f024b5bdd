"""Retrieval quality on BEIR SciFact and NFCorpus: nDCG@10 and Recall@10 per ranking, one run.

Each corpus is ingested once through Lore's real ingest graph (chunking, embedding,
SQLite, the embedded Qdrant engine) into a cache outside the repository
(`benchmarks/retrieval_cache.py`; the first run takes 20-40 minutes per corpus on a
small box, later runs seconds). Every query is then answered by the production
`Retriever` on that data directory, once per ranking: dense only, the previous hybrid
(dense + lexical fused with RRF in the engine), and the current default (score-normalised
weighted fusion, `graphs.fusion`). A document counts at its best
passage. nDCG uses linear gains, as BEIR and trec_eval do.

Splits: `test` is what everyone reports; `held-out` is ours (SciFact: a third of the train
queries, by a hash of the query id; NFCorpus: dev), never used to choose settings (see
`benchmarks/fusion_tuning.py`, which tunes on the rest of train).

    .venv/bin/python benchmarks/retrieval.py [--datasets scifact nfcorpus] [--cache DIR]
        [--model minilm-l6-int8-local] [--splits test held-out]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Mapping
from pathlib import Path

import beir
import retrieval_cache as rc
from fusion_tuning import DATASETS

from bot.app import open_lore
from graphs.fusion import Fusion
from graphs.retrieval import Retriever
from storage.documents import DocumentRepository
from storage.lexical import LexicalEncoder
from storage.model_files import DEFAULT_MODEL

REPO = Path(__file__).resolve().parents[1]
PASSAGES = 100  # passages asked per query; documents are ranked by their best passage


def corpus_ids(entry: rc.Entry) -> dict[str, list[str]]:
    """Lore document id -> the corpus ids ingested as it (identical texts share one)."""
    documents: list[list[str]] = json.loads((entry.root / "documents.json").read_text("utf-8"))
    found: dict[str, list[str]] = {}
    chunks = rc.load_chunks(entry)
    with (entry.root / "chunks.jsonl").open(encoding="utf-8") as handle:
        for line, doc in zip(handle, chunks.doc_of_chunk.tolist(), strict=True):
            found[json.loads(line)["doc"]] = documents[doc]
    return found


async def run_split(
    retriever: Retriever,
    texts: Mapping[str, str],
    judged: beir.Qrels,
    ids: Mapping[str, list[str]],
) -> tuple[float, float, float]:
    """Mean nDCG@10, Recall@10 and milliseconds per query."""
    runs: dict[str, list[str]] = {}
    started = time.perf_counter()
    for query in judged:
        ranked: list[str] = []
        for hit in await retriever.search(texts[query], user_id=None, limit=PASSAGES):
            for doc in ids.get(hit.passage.document_id, ()):
                if doc not in ranked:
                    ranked.append(doc)
        runs[query] = ranked
    per_query = (time.perf_counter() - started) * 1000 / max(len(judged), 1)
    ndcg, recall = beir.mean_scores(runs, judged)
    return ndcg, recall, per_query


async def run_dataset(args: argparse.Namespace, dataset: Path) -> None:
    model, splits = args.model, args.splits
    chunk_tokens, overlap = args.chunk_tokens, args.overlap
    entry = await rc.ensure_entry(args.cache.resolve(), dataset, model, chunk_tokens, overlap)
    texts = beir.queries(dataset)
    ids = corpus_ids(entry)
    judged = {name: q for name, q in beir.splits(dataset).items() if name in splits}
    async with open_lore(entry.settings) as lore:
        documents = DocumentRepository(lore.database)
        stats = await lore.bot.maintenance.stats()
        sizes = ", ".join(f"{name} {len(q)} queries" for name, q in judged.items())
        print(f"\n{dataset.name}: {len(ids)} documents, {stats.chunks} chunks; {sizes}")
        print(f"model {model}, chunks {chunk_tokens}/{overlap} tokens")
        print(f"{'ranking':<14} {'split':<9} {'nDCG@10':>8} {'R@10':>7} {'ms/query':>9}")
        rankings: list[tuple[str, LexicalEncoder | None, Fusion | None]] = [
            ("dense", None, None),
            ("hybrid-rrf", LexicalEncoder(), None),
            ("hybrid", LexicalEncoder(), Fusion()),
            # The queries as every release before the multilingual lexical scheme cut them.
            ("hybrid-en-lex", LexicalEncoder(scheme="english"), Fusion()),
        ]
        for name, lexical, fusion in rankings:
            retriever = Retriever(
                index=lore.index,
                documents=documents,
                embedder=lore.embedder,
                lexical=lexical,
                fusion=fusion,
            )
            for split, qrels in judged.items():
                ndcg, recall, ms = await run_split(retriever, texts, qrels, ids)
                print(f"{name:<14} {split:<9} {ndcg:>8.3f} {recall:>7.3f} {ms:>9.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["scifact", "nfcorpus"])
    parser.add_argument("--cache", type=Path, default=REPO.parent / "cache" / "retrieval")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--splits", nargs="+", default=["test", "held-out"])
    parser.add_argument("--chunk-tokens", type=int, default=256)
    parser.add_argument("--overlap", type=int, default=48)
    args = parser.parse_args()
    for name in args.datasets:
        dataset = Path(name) if "/" in name else DATASETS / name
        asyncio.run(run_dataset(args, dataset.resolve()))


if __name__ == "__main__":
    main()
