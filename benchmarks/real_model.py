"""Lore with a real (small) model: does any uncited or invented claim reach a person?

Starts the shared llama.cpp server (SmolLM2-135M-Instruct, `../shared/tools/llm/`) on a free
loopback port, or uses `--llm-url`, and runs through the whole core:

- the eval suites (`--suites`, default tool_selection and task_completion) in a throw-away
  data directory with their fixture knowledge, as `lore eval` does;
- a question set over Lore's own manual (`benchmarks/real_model_questions.json`: `docs/`
  ingested as shared knowledge), each question from a fresh member.

Per case it prints the tools called, the outcome, who answered (the model, or the sources
because the model's answer failed a check: `sources:<why>`), whether the answer cites, the
claims delivered without a citation, the claims delivered that their cited sources do not
hold under a stricter reading than Lore's own (90% of the content words, every number and
name: `suspect`, printed for a person to read), and seconds. Then the totals: the gates that
must hold for any model are 0 uncited claims, 0 suspect claims confirmed invented, no
tool-call markup shown, every turn ending in an answer or a refusal.

    .venv/bin/python -m benchmarks.real_model [--llm-url URL] [--suites ...] [--no-questions]
                                              [--limit N] [--max-tokens 800]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from benchmarks.llama_server import llama_server
from bot.app import Lore, open_lore
from bot.events import ChatRef, Identity, TurnDone
from bot.people import LOCAL_OWNER
from bot.settings import Settings, load_settings
from bot.sources import Source
from evals.hermetic import hermetic_lore
from evals.runner import load_suite, run_suite
from evals.scoring import Observation, observe
from graphs.agent.answer_markup import looks_like_markup
from graphs.agent.claims import ClaimKind, read_claim, segments
from graphs.agent.grounding import ABOUT_LORE
from graphs.agent.verify import FALLBACK_NOTES
from graphs.llm.offline_stems import content_stems
from storage.documents import DocumentRepository
from storage.evals import EvalRepository
from storage.ids import DocumentId

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = Path(__file__).with_name("real_model_questions.json")
STRICT = 0.9


@dataclass
class Row:
    """One case as the table shows it."""

    suite: str
    case: str
    tools: str
    outcome: str
    by: str
    cited: bool
    uncited: list[str]
    suspect: list[str]
    markup: bool
    seconds: float


async def _texts(lore: Lore, seen: Observation) -> dict[int, str]:
    documents = DocumentRepository(lore.database)
    found: dict[int, str] = {}
    for ref, document_id in seen.cited_documents:
        record = await documents.get(DocumentId(document_id))
        title = record.title if record is not None else ""
        found[ref] = f"{title}\n{await documents.document_text(DocumentId(document_id))}"
    return found


def _strictly_held(sentence: str, text: str) -> bool:
    claim = read_claim(sentence)
    flat = " ".join(text.split()).casefold()
    if any(n not in flat for n in claim.numbers) or any(n not in flat for n in claim.names):
        return False
    held = claim.stems & set(content_stems(flat))
    return not claim.stems or len(held) >= STRICT * len(claim.stems)


def _units(answer: str, quoted: bool) -> list[str]:
    """What a citation covers: a model's sentence; a whole quote (one line, its citation at
    the end) of the offline answerer."""
    if quoted:
        return [line for line in answer.splitlines() if line.strip()]
    return [segment.text for segment in segments(answer)]


async def _row(
    lore: Lore, suite: str, case: str, seen: Observation, *, seconds: float, question: str
) -> Row:
    answer = seen.answer
    for note in FALLBACK_NOTES.values():
        answer = answer.replace(note, "")
    uncited: list[str] = []
    suspect: list[str] = []
    if seen.outcome == "answered":
        texts = await _texts(lore, seen)
        quoted = bool(seen.fallback) or seen.model_tokens == 0
        for unit in _units(answer, quoted):
            claim = read_claim(unit)
            # The offline answerer's own words (its help text, a confirmation) are fixed
            # text, not claims: only its quotes carry citations and are checked.
            if claim.kind is ClaimKind.CHAT or (quoted and not claim.cites):
                continue
            sources = [texts[ref] for ref in claim.cites if ref in texts]
            if not sources:
                # What Lore says of itself, or repeats of the question, needs no number.
                if not _strictly_held(unit, f"{ABOUT_LORE}\n{question}"):
                    uncited.append(unit)
            elif not _strictly_held(unit, "\n".join(sources)):
                suspect.append(unit)
    return Row(
        suite,
        case,
        ",".join(seen.tools) or "-",
        seen.outcome or "none",
        f"sources:{seen.fallback}" if seen.fallback else "model",
        bool(seen.citations),
        uncited,
        suspect,
        looks_like_markup(answer),
        seconds,
    )


def _print(row: Row) -> None:
    print(
        f"{row.suite:16} {row.case:26} {row.outcome:17} {row.by:22} "
        f"cited={'yes' if row.cited else 'no ':3} uncited={len(row.uncited)} "
        f"suspect={len(row.suspect)} {row.seconds:6.1f}s  tools={row.tools}"
    )
    for sentence in row.uncited:
        print(f"    UNCITED: {sentence[:200]!r}")
    for sentence in row.suspect:
        print(f"    SUSPECT: {sentence[:200]!r}")


def _model_settings(base: Settings, url: str, model: str, max_tokens: int) -> dict[str, object]:
    return {
        "llm_base_url": url,
        "llm_model": model,
        "max_answer_tokens": max_tokens,
        "llm_timeout_seconds": 600,
        "daily_budget_usd": base.daily_budget_usd,
    }


async def _suites(url: str, model: str, args: argparse.Namespace, rows: list[Row]) -> None:
    operator = load_settings(**_model_settings(load_settings(), url, model, args.max_tokens))
    async with hermetic_lore(operator) as lore:
        for suite in args.suites:
            cases = load_suite(suite)[: args.limit or None]
            result = await run_suite(
                lore.bot,
                suite,
                cases,
                provider_name=model,
                repository=EvalRepository(lore.database),
                owner=LOCAL_OWNER,
            )
            messages = {case.id: case.message for case in cases}
            for case in result.cases:
                if case.observation is not None:
                    seen, seconds = case.observation, case.seconds
                    row = await _row(
                        lore,
                        suite,
                        case.case_id,
                        seen,
                        seconds=seconds,
                        question=messages[case.case_id],
                    )
                    rows.append(row)
                    _print(row)
            print(f"# {suite}: {result.passed}/{result.total} cases passed their expectations")


async def _questions(url: str, model: str, args: argparse.Namespace, rows: list[Row]) -> None:
    spec = json.loads(QUESTIONS.read_text("utf-8"))["questions"][: args.limit or None]
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lore-real-")))
        settings = load_settings(
            data_dir=folder / "data",
            sample_docs_dir="",
            **_model_settings(load_settings(), url, model, args.max_tokens),
        )
        lore = await stack.enter_async_context(open_lore(settings, operator=True))
        for path in sorted((ROOT / "docs").glob("*.md")):
            await lore.bot.ingest(LOCAL_OWNER, Source(path=path), shared=True)
        for question in spec:
            who = Identity("console", f"q-{uuid.uuid4().hex[:8]}", "Member")
            code = await lore.bot.create_invite(LOCAL_OWNER)
            await lore.bot.redeem_invite(who, code.code)
            chat = ChatRef("console", who.platform_user_id)
            started = time.perf_counter()
            events = [e async for e in lore.bot.handle_message(who, chat, question["message"])]
            seconds = time.perf_counter() - started
            row = await _row(
                lore,
                "docs",
                question["id"],
                observe(events),
                seconds=seconds,
                question=question["message"],
            )
            rows.append(row)
            _print(row)


async def _cache_probe(url: str, model: str, args: argparse.Namespace) -> None:
    """Three questions in one chat: how much of each prompt the server's cache reused."""
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="lore-cache-")))
        settings = load_settings(
            data_dir=folder / "data",
            sample_docs_dir="",
            **_model_settings(load_settings(), url, model, args.max_tokens),
        )
        lore = await stack.enter_async_context(open_lore(settings, operator=True))
        await lore.bot.ingest(LOCAL_OWNER, Source(path=ROOT / "docs" / "faq.md"), shared=True)
        chat = ChatRef(LOCAL_OWNER.platform, "cache-probe")
        print("\n# prompt cache, one chat: turn, prompt tokens, of them cached")
        for number, question in enumerate(
            ["Does Lore need an API key?", "How do I back up Lore?", "How much memory?"], 1
        ):
            events = [e async for e in lore.bot.handle_message(LOCAL_OWNER, chat, question)]
            done = next(e for e in events if isinstance(e, TurnDone))
            print(f"turn {number}: {done.prompt_tokens} prompt, {done.cached_tokens} cached")


def _totals(rows: Sequence[Row]) -> None:
    by = Counter(
        "model" if r.by == "model" else "sources" if r.outcome == "answered" else "-" for r in rows
    )
    outcomes = Counter(row.outcome for row in rows)
    print("\n# totals")
    print(f"turns: {len(rows)}; outcomes: {dict(outcomes)}")
    print(
        f"answered by the model: {by['model']}; "
        f"answered from the sources: {by['sources']}; refused: {outcomes['refused']}"
    )
    print(f"uncited claims delivered: {sum(len(r.uncited) for r in rows)} (gate: 0)")
    print(f"suspect claims delivered (read them above): {sum(len(r.suspect) for r in rows)}")
    print(f"answers with markup: {sum(r.markup for r in rows)} (gate: 0)")
    unfinished = [
        r.case for r in rows if r.outcome not in {"answered", "refused", "awaiting_approval"}
    ]
    print(f"turns without an answer or a refusal: {len(unfinished)} {unfinished or ''} (gate: 0)")
    print(f"seconds per turn: {sum(r.seconds for r in rows) / max(1, len(rows)):.1f}")


async def _main(args: argparse.Namespace) -> None:
    rows: list[Row] = []
    async with llama_server(args.llm_url) as server:
        print(f"# model {server.model} at {server.base_url}")
        if args.suites:
            await _suites(server.base_url, server.model, args, rows)
        if args.questions:
            await _questions(server.base_url, server.model, args, rows)
        if args.cache_probe:
            await _cache_probe(server.base_url, server.model, args)
    _totals(rows)


def main() -> None:
    """Run the suites and the question set against the real model (see the docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm-url", help="a running OpenAI-compatible server (…/v1)")
    parser.add_argument("--suites", nargs="*", default=["tool_selection", "task_completion"])
    parser.add_argument("--no-questions", dest="questions", action="store_false")
    parser.add_argument("--cache-probe", action="store_true", help="also the prompt cache")
    parser.add_argument("--limit", type=int, default=0, help="at most N cases of each set")
    parser.add_argument("--max-tokens", type=int, default=800, help="MAX_ANSWER_TOKENS")
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
