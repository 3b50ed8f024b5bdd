"""Retrieval and answers in nine languages on Lore's own set (benchmarks/multilingual_set.json).

The set (written by hand before any tuning) holds 66 notes in en, de, fr, es, it, pt, ru,
zh, ja and two mixed-language chats, and 108 questions: in each language about notes in
that language (`same`), about English notes and, in English, about notes in the other
languages (`cross`), and about the chats (`mixed`). Each question names the one note that
answers it; half the questions of every group are held out (`split`).

For each model and lexical scheme the notes are ingested once as shared notes through
Lore's real ingest into a data directory under `--cache` (outside the repository), then
every question is searched by the production `Retriever` (dense only, and hybrid with the
default fusion). A note counts at its best passage. Printed per language and split:
nDCG@10 and Recall@10 (one relevant note: nDCG@10 = 1 / log2(rank + 1)), and "cited": the
share of questions the offline answerer answers (no refusal) with the right note as its
first citation, from the hybrid search's first 5 passages as the agent graph passes them,
with the model's calibrated threshold.

    .venv/bin/python benchmarks/multilingual.py [--models KEY ...] [--schemes english
        multilingual-1] [--cache DIR] [--splits tune held-out]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from offline_answers import answer, tool_result

from bot.app import open_lore
from bot.settings import Settings, load_settings
from bot.sources import Source
from graphs.fusion import Fusion
from graphs.llm.offline import OfflineModel
from graphs.retrieval import RetrievedPassage, Retriever
from storage.documents import DocumentRepository
from storage.embeddings import Embedder
from storage.index_identity import IDENTITY_FILE
from storage.knowledge_index import KnowledgeIndex
from storage.lexical import DEFAULT_LEXICAL_SCHEME, LexicalEncoder, LexicalScheme
from storage.model_files import DEFAULT_MODEL, model_choice

REPO = Path(__file__).resolve().parents[1]
SET = REPO / "benchmarks" / "multilingual_set.json"
LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "ru", "zh", "ja")
K = 10
ANSWER_PASSAGES = 5


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    lang: str
    kind: str
    split: str
    text: str
    answer: str


@dataclass(frozen=True, slots=True)
class Outcome:
    question: Question
    rank: int | None  # 1-based rank of the answering note, None when not in the list
    cited: bool


def load_set() -> tuple[list[dict[str, str]], list[Question]]:
    data = json.loads(SET.read_text("utf-8"))
    return data["documents"], [Question(**q) for q in data["questions"]]


async def build(root: Path, model: str, scheme: LexicalScheme) -> dict[str, str]:
    """Ingest every note into `root` once; Lore document id -> note id."""
    marker = root / "notes.json"
    if marker.is_file():
        found: dict[str, str] = json.loads(marker.read_text("utf-8"))
        return found
    notes, _ = load_set()
    settings = _settings(root, model)
    async with open_lore(settings):
        pass
    if scheme != DEFAULT_LEXICAL_SCHEME:  # as a data directory of an earlier release
        path = settings.data_dir / IDENTITY_FILE
        raw = json.loads(path.read_text("utf-8"))
        raw["lexical"] = scheme
        path.write_text(json.dumps(raw), "utf-8")
    ours: dict[str, str] = {}
    started = time.perf_counter()
    async with open_lore(settings) as lore:
        for note in notes:
            text = f"# {note['title']}\n\n{note['text']}"
            result = await lore.bot.maintenance.load_shared(Source(text=text))
            ours[str(result.document_id)] = note["id"]
    seconds = time.perf_counter() - started
    print(f"  ingested {len(notes)} notes with {model}/{scheme} in {seconds:.0f}s")
    marker.write_text(json.dumps(ours), "utf-8")
    return ours


def _settings(root: Path, model: str) -> Settings:
    return load_settings(
        _env_file=None,
        data_dir=root / "data",
        MODELS_DIR=root.parent / "models",
        sample_docs_dir="",
        embedding_model=model,
    )


def ranked_notes(hits: Sequence[RetrievedPassage], notes: Mapping[str, str]) -> list[str]:
    ranked: list[str] = []
    for hit in hits:
        note = notes.get(hit.passage.document_id)
        if note is not None and note not in ranked:
            ranked.append(note)
    return ranked


async def run_questions(
    retriever: Retriever,
    notes: Mapping[str, str],
    questions: Sequence[Question],
    model: OfflineModel | None,
) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for question in questions:
        hits = await retriever.search(question.text, user_id=None, limit=30)
        ranked = ranked_notes(hits, notes)
        rank = ranked.index(question.answer) + 1 if question.answer in ranked else None
        cited = False
        if model is not None:
            shown = hits[:ANSWER_PASSAGES]
            completion, _ = await answer(model, question.text, tool_result(shown))
            first = re.search(r"\[(\d+)\]", completion.text)
            if completion.finish_reason != "refusal" and first is not None:
                index = int(first.group(1)) - 1
                note = notes.get(shown[index].passage.document_id) if index < len(shown) else None
                cited = note == question.answer
        outcomes.append(Outcome(question, rank, cited))
    return outcomes


def scores(outcomes: Sequence[Outcome]) -> tuple[float, float, float, int]:
    if not outcomes:
        return 0.0, 0.0, 0.0, 0
    ndcg = sum(1 / math.log2(o.rank + 1) for o in outcomes if o.rank and o.rank <= K)
    recall = sum(1 for o in outcomes if o.rank and o.rank <= K)
    cited = sum(o.cited for o in outcomes)
    n = len(outcomes)
    return ndcg / n, recall / n, cited / n, n


def report(title: str, outcomes: Sequence[Outcome], splits: Sequence[str]) -> None:
    print(f"\n{title}")
    header = " ".join(f"{split:>22}" for split in splits)
    print(f"{'':<14} {header}")
    print(f"{'':<14} " + " ".join(f"{'nDCG  R@10 cited   n':>22}" for _ in splits))
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        q = outcome.question
        groups[f"{q.lang}"].append(outcome)
        groups[f"kind {q.kind}"].append(outcome)
        groups["all"].append(outcome)
    for name in [*LANGUAGES, "kind same", "kind cross", "kind mixed", "all"]:
        cells = []
        for split in splits:
            chosen = [o for o in groups[name] if o.question.split == split]
            ndcg, recall, cited, n = scores(chosen)
            cells.append(f"{ndcg:5.3f} {recall:5.3f} {cited:5.3f} {n:3d}")
        print(f"{name:<14} " + " ".join(f"{cell:>22}" for cell in cells))


async def run_model(args: argparse.Namespace, model: str, scheme: LexicalScheme) -> None:
    root = args.cache.resolve() / f"multilingual-{model}-{scheme}"
    notes = await build(root, model, scheme)
    _, questions = load_set()
    questions = [q for q in questions if q.split in args.splits]
    choice = model_choice(model)
    threshold = args.threshold if args.threshold is not None else choice.answer_threshold
    fusion = Fusion(dense_weight=choice.dense_weight, dense_floor=choice.cosine_floor)
    async with open_lore(_settings(root, model)) as lore:
        assert lore.lexical.scheme == scheme
        documents = DocumentRepository(lore.database)
        if args.grid:
            await grid(lore.index, documents, lore.embedder, scheme, notes, questions)
            return
        for name, lexical, fused in (
            ("dense", None, None),
            ("hybrid", LexicalEncoder(scheme=scheme), fusion),
        ):
            retriever = Retriever(
                index=lore.index,
                documents=documents,
                embedder=lore.embedder,
                lexical=lexical,
                fusion=fused,
            )
            coverage = (
                args.min_coverage if args.min_coverage is not None else choice.answer_min_coverage
            )
            offline = (
                OfflineModel(threshold=threshold, min_coverage=coverage)
                if name == "hybrid"
                else None
            )
            started = time.perf_counter()
            outcomes = await run_questions(retriever, notes, questions, offline)
            ms = (time.perf_counter() - started) * 1000 / max(len(questions), 1)
            label = f"{model}, lexical {scheme}, {name}"
            if fused is not None:
                label += f" (dense weight {fused.dense_weight}, floor {fused.dense_floor})"
                label += f", threshold {threshold}, min coverage {coverage}"
            report(f"{label} ({ms:.0f} ms/question)", outcomes, args.splits)


async def grid(  # noqa: PLR0917 - one benchmark helper
    index: KnowledgeIndex,
    documents: DocumentRepository,
    embedder: Embedder,
    scheme: LexicalScheme,
    notes: Mapping[str, str],
    questions: Sequence[Question],
) -> None:
    """Hybrid nDCG@10 over dense weights and cosine floors, on the tune split only."""
    tune = [q for q in questions if q.split == "tune"]
    print(f"\nhybrid nDCG@10 on the tune split ({len(tune)} questions): weight x floor")
    floors = (0.0, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8)
    print(f"{'weight':>6} " + " ".join(f"{floor:>6}" for floor in floors))
    for weight in (0.5, 0.6, 0.7, 0.8, 0.9):
        cells = []
        for floor in floors:
            retriever = Retriever(
                index=index,
                documents=documents,
                embedder=embedder,
                lexical=LexicalEncoder(scheme=scheme),
                fusion=Fusion(dense_weight=weight, dense_floor=floor),
            )
            ndcg, *_ = scores(await run_questions(retriever, notes, tune, None))
            cells.append(f"{ndcg:6.3f}")
        print(f"{weight:>6} " + " ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=[DEFAULT_MODEL])
    parser.add_argument("--schemes", nargs="+", default=[DEFAULT_LEXICAL_SCHEME])
    parser.add_argument("--cache", type=Path, default=REPO.parent / "cache" / "multilingual")
    parser.add_argument("--splits", nargs="+", default=["tune", "held-out"])
    parser.add_argument("--threshold", type=float, help="the answerer's, not the model's")
    parser.add_argument("--min-coverage", type=float, help="the answerer's, not the model's")
    parser.add_argument("--grid", action="store_true", help="fusion weight x floor, tune split")
    args = parser.parse_args()
    for model in args.models:
        for scheme in args.schemes:
            asyncio.run(run_model(args, model, scheme))


if __name__ == "__main__":
    main()
