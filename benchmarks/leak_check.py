"""Benchmark: what the prompt-leak checks cost, and how often they fire on Lore's own docs.

Run with `.venv/bin/python -m benchmarks.leak_check` (`-v` lists what fired).

1. Cost: `LeakCheck.assess` on answers of 500, 2,000 and 4,000 characters, and the whole
   `StreamLeakGuard` run over the same answers streamed in 4-character deltas (what
   `generate` adds to one model call), both in ms on one core; the machine's noise is in
   the spread of three repeats.
2. Firing on ordinary text: every paragraph of docs/*.md (80 characters or more) taken as
   an answer written without its passage retrieved, the worst case, since these pages
   document Lore's tools and rules; then the same with the paragraph retrieved (exempt),
   which is how a cited answer reaches verify. Prints refused and held (suspicious).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

from graphs.agent.leak_stream import StreamLeakGuard
from graphs.agent.leaks import LeakCheck

__all__ = ["main"]

DOCS = Path(__file__).resolve().parent.parent / "docs"
CANARY = "lore-canary-0123456789abcdef"
SENTENCE = (
    "The office opens at 8 am and closes at 6 pm on weekdays [1]; on public holidays the "
    "building stays closed, and the parking garage opens for badge holders only [2]. "
)


def _answer(chars: int) -> str:
    return (SENTENCE * (chars // len(SENTENCE) + 1))[:chars]


def _ms(work: object, repeats: int = 3) -> tuple[float, float]:
    """(median, spread) in ms of calling `work` `repeats` times."""
    assert callable(work)
    times = []
    for _ in range(repeats):
        started = time.process_time()
        work()
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times), max(times) - min(times)


def _stream(check: LeakCheck, text: str) -> None:
    shown: list[str] = []
    guard = StreamLeakGuard(check, shown.append)
    for start in range(0, len(text), 4):
        guard.feed(text[start : start + 4])
    guard.finish()
    assert "".join(shown) == text


def _paragraphs() -> list[tuple[str, str]]:
    return [
        (page.name, paragraph)
        for page in sorted(DOCS.glob("*.md"))
        for paragraph in re.split(r"\n\s*\n", page.read_text(encoding="utf-8"))
        if len(paragraph) >= 80
    ]


def main(argv: list[str]) -> None:
    verbose = "-v" in argv
    check = LeakCheck(CANARY)
    print("answer chars | assess ms (spread) | streamed in 4-char deltas ms (spread)")
    for chars in (500, 2000, 4000):
        text = _answer(chars)
        one, one_spread = _ms(lambda text=text: check.assess(text))
        whole, whole_spread = _ms(lambda text=text: _stream(check, text))
        print(f"{chars:>12} | {one:>8.2f} ({one_spread:.2f}) | {whole:>8.1f} ({whole_spread:.1f})")

    paragraphs = _paragraphs()
    for label, exempt in (("without the passage", False), ("with it retrieved", True)):
        refused = held = 0
        for page, paragraph in paragraphs:
            checker = LeakCheck(CANARY, [paragraph] if exempt else [])
            assessment = checker.assess(paragraph)
            refused += assessment.reason is not None
            held += assessment.reason is None and assessment.suspicious
            if verbose and assessment.reason is not None:
                print(f"  {page}: {assessment.reason}: {paragraph[:90]!r}")
        print(
            f"docs/ paragraphs as answers, {label}: {len(paragraphs)}, refused {refused}, "
            f"held {held}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
