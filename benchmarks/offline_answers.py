"""Benchmark: calibrate and measure the offline answerer's refusal threshold on docs/.

Run with `.venv/bin/python -m benchmarks.offline_answers` (`-v` prints every answer;
`--model KEY` with another embedding model: each spreads its cosines differently).
Builds a real Lore core in a temporary directory, ingests docs/*.md as shared
knowledge, then for on-topic questions (answered in docs/, four of them paraphrased),
off-topic ones and "near misses" (on Lore's subject, answer not in docs/) runs the real
hybrid search (limit 5), turns the hits into the search tool's JSON as the agent graph
does, and runs `OfflineModel`'s answer step. Prints the best-hit relevance (cosine)
distributions, a threshold sweep with and without the coverage gate, and the rates at
the defaults, plus whether the first citation names the expected page.

One run (2 cores, docs/ as of this commit): on-topic best relevance 0.29-0.87 (median 0.66),
off-topic 0.08-0.36, near-miss 0.38-0.60. At the defaults (threshold 0.30, min_coverage
0.25): 24/26 on-topic answered, 13/15 off-topic refused ("What's the weather in Berlin
tomorrow?" and "Translate good morning into Japanese" match `Europe/Berlin` and "Good
morning"), 1/6 near misses refused; first citation on the expected page 23/26 (21/26
before the sentence selection of `graphs.llm.offline_quotes` scored every heading).
How often the answer quotes the expected fact: `benchmarks/answer_facts.py`.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bot.app import open_lore
from bot.people import LOCAL_OWNER
from bot.settings import load_settings
from bot.sources import Source
from graphs.llm.offline import DEFAULT_MIN_COVERAGE, OfflineModel
from graphs.llm.types import ChatMessage, Completion, ModelEvent, ToolCall, ToolSpec
from graphs.retrieval import RetrievedPassage
from storage.model_files import DEFAULT_MODEL, model_choice

__all__ = ["NEAR_MISS", "OFF_TOPIC", "ON_TOPIC", "main"]

DOCS = Path(__file__).resolve().parent.parent / "docs"

#: (question, the docs/ page that answers it)
ON_TOPIC: tuple[tuple[str, str], ...] = (
    ("Does Lore need an API key?", "faq.md"),
    ("Does Lore work without internet access?", "faq.md"),
    ("Why is my scanned PDF refused?", "faq.md"),
    ("Why does Lore say Already saved?", "faq.md"),
    ("Can I run lore ingest while the bot is running?", "faq.md"),
    ("How do I back up Lore?", "faq.md"),
    ("How much memory does Lore need?", "faq.md"),
    ("How do I remove a document from Lore?", "faq.md"),
    ("Where does Lore keep its data?", "getting-started.md"),
    ("How do I run the tests?", "getting-started.md"),
    ("Which file types can Lore ingest?", "ingesting.md"),
    ("How are documents split into chunks?", "ingesting.md"),
    ("What is the largest file Lore accepts?", "ingesting.md"),
    ("What does CHUNK_OVERLAP_TOKENS do?", "configuration.md"),
    ("How do I use a Qdrant server instead of the embedded engine?", "configuration.md"),
    ("What does lore stats show?", "cli.md"),
    ("What is the exit status of lore commands?", "cli.md"),
    ("Which URLs does Lore refuse to fetch?", "privacy-and-safety.md"),
    ("Do group chats search private notes?", "privacy-and-safety.md"),
    ("How does hybrid search with RRF work?", "architecture.md"),
    ("What does the re-index job do?", "architecture.md"),
    ("Why are Qdrant point ids deterministic?", "architecture.md"),
    # paraphrases that share few words with the docs
    ("Can I use Lore on a plane with no wifi?", "faq.md"),
    ("Is anything I store sent to a cloud service?", "faq.md"),
    ("What if the process dies in the middle of saving a document?", "faq.md"),
    ("How big may an uploaded PDF be?", "ingesting.md"),
)
OFF_TOPIC: tuple[str, ...] = (
    "What is the capital of Peru?",
    "How do I bake sourdough bread?",
    "Who won the 2018 football world cup?",
    "What is the boiling point of water at altitude?",
    "How do I change a flat bicycle tyre?",
    "Recommend a good science fiction novel",
    "What's the weather in Berlin tomorrow?",
    "How many moons does Jupiter have?",
    "Translate good morning into Japanese",
    "What is the best way to learn the piano?",
    "How do I file my tax return?",
    "Who painted the Mona Lisa?",
    "What are the symptoms of the flu?",
    "How long should I boil an egg?",
    "What is the stock price of Apple?",
)
#: On Lore's subject but not answered in docs/: a cosine threshold cannot tell these apart
#: from answerable questions; reported, not calibrated on.
NEAR_MISS: tuple[str, ...] = (
    "How do I connect Lore to Discord?",
    "Does Lore support PostgreSQL as its database?",
    "Can Lore transcribe voice messages?",
    "Does Lore have a web dashboard?",
    "How much does a Lore subscription cost?",
    "Can Lore summarise YouTube videos?",
)
SWEEP = tuple(round(0.20 + 0.02 * step, 2) for step in range(18)) + tuple(
    round(0.74 + 0.01 * step, 2) for step in range(14)
)
TOOLS = (ToolSpec("search_knowledge", "Search the shared knowledge."),)


def tool_result(hits: Sequence[RetrievedPassage]) -> str:
    """The search tool's JSON for `hits`, in the shape the agent graph sends."""
    passages = [
        {
            "ref": ref,
            "document_id": hit.passage.document_id,
            "title": hit.passage.document_title,
            "source": Path(hit.passage.source_ref).name,
            "section": " > ".join(hit.passage.heading_path),
            "text": hit.passage.text,
            "relevance": round(hit.relevance, 4),
            "private": hit.private,
        }
        for ref, hit in enumerate(hits, start=1)
    ]
    return json.dumps({"passages": passages})


async def answer(model: OfflineModel, question: str, result: str) -> tuple[Completion, int]:
    """Run the answer step on one search result; the completion and the number of deltas."""
    call = ToolCall("call-1", "search_knowledge", json.dumps({"query": question}))
    messages = [
        ChatMessage("system", "You are Lore. Today is 2025-01-01."),
        ChatMessage("user", question),
        ChatMessage("assistant", "", tool_calls=(call,)),
        ChatMessage("tool", result, tool_call_id=call.id, name=call.name),
    ]
    events: list[ModelEvent] = [event async for event in model.stream(messages, tools=TOOLS)]
    final = events[-1]
    assert isinstance(final, Completion)
    return final, len(events) - 1


async def _refuses(model: OfflineModel, question: str, result: str) -> bool:
    completion, _ = await answer(model, question, result)
    return completion.finish_reason == "refusal"


def _describe(label: str, values: Sequence[float]) -> None:
    cuts = statistics.quantiles(values, n=4)
    print(
        f"{label:<10} n={len(values):<3} min={min(values):.3f} q1={cuts[0]:.3f} "
        f"median={cuts[1]:.3f} q3={cuts[2]:.3f} max={max(values):.3f}"
    )


async def _search_all(root: Path, model: str) -> dict[str, list[RetrievedPassage]]:
    settings = load_settings(
        _env_file=None, data_dir=root, sample_docs_dir="", embedding_model=model
    )
    async with open_lore(settings) as lore:
        for path in sorted(DOCS.glob("*.md")):
            await lore.bot.maintenance.load_shared(Source(path=path))
        questions = [q for q, _ in ON_TOPIC] + list(OFF_TOPIC) + list(NEAR_MISS)
        return {q: await lore.bot.search(LOCAL_OWNER, q, limit=5, private=False) for q in questions}


async def main() -> None:
    """Search every question once, then sweep thresholds and report the default."""
    key = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else DEFAULT_MODEL
    calibrated = model_choice(key).answer_threshold
    print(f"embedding model {key}, its threshold {calibrated}")
    with tempfile.TemporaryDirectory() as tmp:
        hits = await _search_all(Path(tmp), key)
    best = {q: max((h.relevance for h in found), default=0.0) for q, found in hits.items()}
    on = [best[q] for q, _ in ON_TOPIC]
    off = [best[q] for q in OFF_TOPIC]
    near = [best[q] for q in NEAR_MISS]
    lexical_only_top = sum(1 for found in hits.values() if found and found[0].relevance == 0.0)
    print("best-hit relevance (cosine):")
    _describe("on-topic", on)
    _describe("off-topic", off)
    _describe("near-miss", near)
    if max(off) < min(on):
        print(f"separable: suggested threshold {(max(off) + min(on)) / 2:.2f} (gap midpoint)")
    print(f"top-ranked hit found only by the lexical side (relevance 0.0): {lexical_only_top}")

    tool_results = {q: tool_result(found) for q, found in hits.items()}
    print("\nanswer step over the sweep: answered on-topic / refused off-topic / refused near-miss")
    print(f"{'threshold':>9} {'min_coverage 0':>18} {f'min_coverage {DEFAULT_MIN_COVERAGE}':>20}")
    for threshold in SWEEP:
        cells = []
        for min_coverage in (0.0, DEFAULT_MIN_COVERAGE):
            model = OfflineModel(threshold=threshold, min_coverage=min_coverage)
            refused = {q: await _refuses(model, q, tool_results[q]) for q in tool_results}
            cells.append(
                f"{sum(not refused[q] for q, _ in ON_TOPIC):>2}/{len(ON_TOPIC)}"
                f" {sum(refused[q] for q in OFF_TOPIC):>2}/{len(OFF_TOPIC)}"
                f" {sum(refused[q] for q in NEAR_MISS)}/{len(NEAR_MISS)}"
            )
        print(f"{threshold:>9.2f} {cells[0]:>18} {cells[1]:>20}")

    for min_coverage in (0.0, DEFAULT_MIN_COVERAGE):
        model = OfflineModel(threshold=calibrated, min_coverage=min_coverage)
        results = {q: await answer(model, q, tool_results[q]) for q in hits}
        _report(model, results, hits, best)
        if "-v" in sys.argv and min_coverage == DEFAULT_MIN_COVERAGE:
            for question, (completion, deltas) in results.items():
                print(f"\n### {question} (best {best[question]:.3f}, {deltas} deltas)")
                print(completion.text)


def _report(
    model: OfflineModel,
    results: dict[str, tuple[Completion, int]],
    hits: dict[str, list[RetrievedPassage]],
    best: dict[str, float],
) -> None:
    def refused(question: str) -> bool:
        return results[question][0].finish_reason == "refusal"

    print(f"\nthreshold {model.threshold}, min_coverage {model.min_coverage}:")
    answered_on = [q for q, _ in ON_TOPIC if not refused(q)]
    right_page = sum(1 for q, page in ON_TOPIC if _first_cited_page(results[q][0], hits[q]) == page)
    print(f"  answer rate on-topic:    {len(answered_on)}/{len(ON_TOPIC)}")
    print(f"  refusal rate off-topic:  {sum(map(refused, OFF_TOPIC))}/{len(OFF_TOPIC)}")
    print(f"  refusal rate near-miss:  {sum(map(refused, NEAR_MISS))}/{len(NEAR_MISS)}")
    print(f"  first citation on the expected page: {right_page}/{len(ON_TOPIC)}")
    deltas = [results[q][1] for q in answered_on]
    print(f"  text deltas per answer: min {min(deltas)}, max {max(deltas)}")
    for question, _ in ON_TOPIC:
        if refused(question):
            print(f"  refused on-topic: {question} (best {best[question]:.3f})")
    for question in OFF_TOPIC + NEAR_MISS:
        if not refused(question):
            print(f"  answered: {question} (best {best[question]:.3f})")


def _first_cited_page(completion: Completion, found: Sequence[RetrievedPassage]) -> str | None:
    """The docs/ file name of the first "[n]" in the answer."""
    cited = re.search(r"\u201d \[(\d+)\]", completion.text)
    if cited is None:
        return None
    return Path(found[int(cited.group(1)) - 1].passage.source_ref).name


if __name__ == "__main__":
    asyncio.run(main())
