"""A BEIR dataset read by path (corpus, queries, qrels) and the two measures we report.

nDCG@k uses linear gains (a judgement of 2 counts twice a 1), as trec_eval and BEIR do;
Recall@k is the share of a query's relevant documents (judgement > 0) found in the top k.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

K = 10

Qrels = dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class Record:
    """One corpus document."""

    id: str
    title: str
    text: str


def corpus(dataset: Path, limit: int | None = None) -> Iterator[Record]:
    """The corpus records in file order (the first `limit` only, with a limit)."""
    with (dataset / "corpus.jsonl").open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if limit is not None and number >= limit:
                return
            record = json.loads(line)
            yield Record(record["_id"], record.get("title") or "", record["text"])


def queries(dataset: Path) -> dict[str, str]:
    """Query id -> text, for every split."""
    found: dict[str, str] = {}
    with (dataset / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            found[record["_id"]] = record["text"]
    return found


def qrels(dataset: Path, split: str) -> Qrels:
    """Query id -> {corpus id: judgement} of one split (test, train, dev); {} if absent."""
    path = dataset / "qrels" / f"{split}.tsv"
    found: Qrels = defaultdict(dict)
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            found[row["query-id"]][row["corpus-id"]] = int(row["score"])
    return dict(found)


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = K) -> float:
    """nDCG@k with linear gains."""
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(gain / math.log2(i + 2) for i, gain in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, int], k: int = K) -> float:
    """Share of the relevant documents in the top k."""
    wanted = sum(1 for score in relevant.values() if score > 0)
    hits = sum(1 for doc in ranked[:k] if relevant.get(doc, 0) > 0)
    return hits / wanted if wanted else 0.0


def mean_scores(runs: Mapping[str, Sequence[str]], judged: Qrels) -> tuple[float, float]:
    """Mean nDCG@10 and Recall@10 of ranked corpus ids per query, over the judged queries."""
    if not judged:
        return 0.0, 0.0
    ndcg = sum(ndcg_at_k(runs.get(q, ()), rel) for q, rel in judged.items()) / len(judged)
    recall = sum(recall_at_k(runs.get(q, ()), rel) for q, rel in judged.items()) / len(judged)
    return ndcg, recall


def splits(dataset: Path) -> dict[str, Qrels]:
    """tune / held-out / test qrels of a dataset (SciFact has no dev split: a third of
    its train queries, by a hash of the query id, is held out instead)."""
    test = qrels(dataset, "test")
    train = qrels(dataset, "train")
    dev = qrels(dataset, "dev")
    if dev:
        return {"tune": train, "held-out": dev, "test": test}
    tune = {q: r for q, r in train.items() if _bucket(q) < 2}
    held = {q: r for q, r in train.items() if _bucket(q) == 2}
    return {"tune": tune, "held-out": held, "test": test}


def _bucket(query_id: str) -> int:
    return hashlib.sha256(query_id.encode()).digest()[0] % 3
