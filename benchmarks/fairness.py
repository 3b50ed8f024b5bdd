"""Fairness: one member's answer latency while another member's large document ingests, next
to the same member's latency while nothing else runs, in one run.

One temporary DATA_DIR with Lore's defaults (the offline answerer, the packaged embedding
model, chunks of 256 tokens). Member B has a note; member A uploads a generated Markdown
document of `--chunks` chunks (each section one full chunk). B asks `--questions` questions,
one after another, each a text of its own (the cache of query embeddings never answers one):

- idle: nothing else runs;
- loaded: A's document is being embedded the whole time (the run checks that it still is
  when the last question is answered, and says how far it got).

Printed side by side: p50/p95/max of B's whole turn in ms (`Bot.handle_message` to its
`TurnDone`), how many of B's turns were answered from B's note, and the loaded/idle ratios;
then A's document: chunks embedded while B asked, and the model's turns (query batches that
went ahead of a waiting document slice).

    .venv/bin/python -m benchmarks.fairness [--chunks 2000] [--questions 30]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bot.app import Lore, open_lore
from bot.events import ChatRef, Identity, TurnDone
from bot.settings import load_settings
from bot.sources import Source

__all__ = ["main"]

NOTE = "The boiler room key hangs on the hook behind the blue door."
QUESTIONS = (
    "Where does the boiler room key hang?",
    "Where is the key to the boiler room kept?",
    "Which door is the boiler room key behind?",
)


@dataclass(frozen=True, slots=True)
class Phase:
    """One side of the comparison: B's turn latencies and outcomes."""

    name: str
    latencies_ms: list[float]
    answered: int

    def quantile(self, q: float) -> float:
        """The q-quantile of the latencies (nearest rank)."""
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True, slots=True)
class Upload:
    """What became of A's document while B asked."""

    chunks: int
    still_running: bool
    slices: int  # embedded while B asked
    ahead: int  # query batches that went ahead of a waiting slice
    last_line: str


def document(chunks: int) -> bytes:
    """A Markdown document whose every section is about one full chunk of 256 tokens."""
    sentence = "Valve {n} in room {room} should read {bar} bar; log it every morning. "
    sections = [
        f"## Valve {n}\n\n" + sentence.format(n=n, room=n % 40, bar=n % 9 + 1) * 14
        for n in range(chunks)
    ]
    return ("# Plant handbook\n\n" + "\n\n".join(sections)).encode()


async def ask(lore: Lore, who: Identity, text: str) -> tuple[float, bool]:
    """One turn: its latency in ms, and whether it was answered with a citation."""
    chat = ChatRef(who.platform, who.platform_user_id, False)
    started = time.perf_counter()
    done = None
    async for event in lore.bot.handle_message(who, chat, text):
        if isinstance(event, TurnDone):
            done = event
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, done is not None and done.outcome == "answered" and bool(done.citations)


async def questions(lore: Lore, who: Identity, count: int, phase: str) -> Phase:
    """`count` questions, one after another, each a new text."""
    latencies, answered = [], 0
    for number in range(count):
        text = f"{QUESTIONS[number % len(QUESTIONS)][:-1]}, {phase} question {number}?"
        elapsed, ok = await ask(lore, who, text)
        latencies.append(elapsed)
        answered += ok
    return Phase(phase, latencies, answered)


async def run(chunks: int, count: int) -> None:
    with tempfile.TemporaryDirectory(prefix="lore-fairness-") as tmp:
        settings = load_settings(
            _env_file=None,
            data_dir=Path(tmp) / "data",
            sample_docs_dir="",
            max_file_bytes=64 * 1024 * 1024,
            rate_limit_turns=10_000,
        )
        async with open_lore(settings) as lore:
            owner = Identity("console", "owner", "Owner")
            uploader = await lore.bot.local_member(owner, "alice", create=True)
            asker = await lore.bot.local_member(owner, "bob", create=True)
            await lore.bot.ingest(asker, Source(text=NOTE))
            await questions(lore, asker, 3, "warm-up")
            idle = await questions(lore, asker, count, "idle")

            embedding, lines = asyncio.Event(), []

            def progress(line: str) -> None:
                lines.append(line)
                if "Embedding" in line:
                    embedding.set()

            data = document(chunks)
            task = asyncio.create_task(
                lore.bot.ingest(
                    uploader, Source(data=data, file_name="handbook.md"), on_progress=progress
                )
            )
            await embedding.wait()
            slices_before = lore.embedding.counts.passage_slices
            loaded = await questions(lore, asker, count, "loaded")
            counts = lore.embedding.counts
            upload = Upload(
                chunks=chunks,
                still_running=not task.done(),
                slices=counts.passage_slices - slices_before,
                ahead=counts.queries_ahead_of_passages,
                last_line=lines[-1],
            )
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    report(idle, loaded, upload)


def report(idle: Phase, loaded: Phase, upload: Upload) -> None:
    print(f"Member B's answer latency, {len(idle.latencies_ms)} questions per phase (ms)")
    print(f"{'phase':<34}{'p50':>9}{'p95':>9}{'max':>9}{'answered':>11}")
    for phase, label in (
        (idle, "idle"),
        (loaded, f"while A ingests {upload.chunks:,} chunks"),
    ):
        print(
            f"{label:<34}{phase.quantile(0.5):>9.0f}{phase.quantile(0.95):>9.0f}"
            f"{max(phase.latencies_ms):>9.0f}"
            f"{f'{phase.answered}/{len(phase.latencies_ms)}':>11}"
        )
    print(
        f"{'loaded / idle':<34}{loaded.quantile(0.5) / idle.quantile(0.5):>9.2f}"
        f"{loaded.quantile(0.95) / idle.quantile(0.95):>9.2f}"
        f"{max(loaded.latencies_ms) / max(idle.latencies_ms):>9.2f}"
    )
    print()
    print(
        f"A's document: {'still embedding' if upload.still_running else 'FINISHED'} when B's "
        f"last answer came; {upload.slices} slices embedded meanwhile; "
        f"{upload.ahead} query batches went ahead of a waiting slice"
    )
    print(f"A's last status line: {upload.last_line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=2000, help="chunks of A's document")
    parser.add_argument("--questions", type=int, default=30, help="B's questions per phase")
    args = parser.parse_args()
    asyncio.run(run(args.chunks, args.questions))


if __name__ == "__main__":
    main()
