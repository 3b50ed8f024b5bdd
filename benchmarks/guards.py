"""Measure the input guards on the shared corpora: detection, false positives, throughput.

Usage: python benchmarks/guards.py [CORPORA_DIR] [--show-misses]

CORPORA_DIR defaults to ../shared/corpora relative to the repository root (see its
README.md). The corpora are read by path and never copied. One run prints, side by side:

- injection_dev.txt: share flagged by the injection guard alone and by `check_input`;
- benign_questions.txt and benign_hard.txt: false-positive rates of the injection guard
  alone and of the whole `check_input`, with the guards that fired;
- pii_cards.tsv and pii_ibans.tsv: precision and recall of the detectors per line
  (a line with a non-zero expected count should be caught), and how often the number of
  matches equals the expected count;
- throughput of `check_input` over all the texts above, in checks per second.

`--show-misses` also lists every missed injection and every false positive.
"""

from __future__ import annotations

import argparse
import csv
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from graphs.guards import (
    assess_injection,
    check_input,
    find_ibans,
    find_payment_cards,
    normalize,
)

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = (REPO_ROOT / ".." / "shared" / "corpora").resolve()
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"n": "\n", "r": "\r", "\\": "\\"}


def read_lines(path: Path) -> list[str]:
    """One payload per line, with the corpus escapes (\\\\, \\n, \\r) undone."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group()), line)
        for line in lines
        if line.strip()
    ]


def read_tsv(path: Path) -> list[tuple[str, int]]:
    """(text, expected number of matches) rows of a PII corpus."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [(row["text"], int(row["presidio_expected_matches"])) for row in rows]


def rate(hits: int, total: int) -> str:
    return f"{hits:>5}/{total:<5} {100 * hits / total:6.2f}%" if total else "n/a"


def flagged_by_injection(text: str) -> bool:
    return assess_injection(text).is_injection


def report_injection(injections: Sequence[str], show_misses: bool) -> None:
    guard_hits = [flagged_by_injection(t) for t in injections]
    whole = [check_input(t) for t in injections]
    print("injection_dev.txt (should block or flag)")
    print(f"  injection guard detection   {rate(sum(guard_hits), len(injections))}")
    blocked = sum(not v.allowed for v in whole)
    print(f"  check_input refusal         {rate(blocked, len(injections))}")
    print(f"  refusals by guard           {dict(Counter(v.guard for v in whole if v.guard))}")
    if show_misses:
        for text, hit in zip(injections, guard_hits, strict=True):
            if not hit:
                print(f"    MISS {text[:150]!r}")


def report_benign(name: str, texts: Sequence[str], show_misses: bool) -> None:
    guard_hits = [flagged_by_injection(t) for t in texts]
    whole = [check_input(t) for t in texts]
    refused = [v for v in whole if not v.allowed]
    print(f"{name} (must pass)")
    print(f"  injection guard false pos.  {rate(sum(guard_hits), len(texts))}")
    print(f"  check_input false pos.      {rate(len(refused), len(texts))}")
    print(f"  refusals by guard           {dict(Counter(v.guard for v in refused))}")
    if show_misses:
        for text, verdict in zip(texts, whole, strict=True):
            if not verdict.allowed:
                print(f"    FP {verdict.guard} [{verdict.reason}] {text[:150]!r}")


def report_pii(
    name: str,
    rows: Sequence[tuple[str, int]],
    detector: Callable[[str], Sequence[object]],
    show_misses: bool,
) -> None:
    true_pos = false_pos = false_neg = exact = 0
    for text, expected in rows:
        found = len(detector(normalize(text).visible))
        exact += found == expected
        true_pos += bool(found) and bool(expected)
        false_pos += bool(found) and not expected
        false_neg += not found and bool(expected)
        if show_misses and bool(found) != bool(expected):
            print(f"    {'FP' if found else 'MISS'} {text!r}")
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    print(f"{name}: {len(rows)} lines")
    print(f"  precision {100 * precision:6.2f}%   recall {100 * recall:6.2f}%", end="")
    print(f"   match count equal to expected {rate(exact, len(rows))}")


def report_throughput(texts: Sequence[str]) -> None:
    rounds = 3
    started = time.perf_counter()
    for _ in range(rounds):
        for text in texts:
            check_input(text)
    elapsed = time.perf_counter() - started
    checks = rounds * len(texts)
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"throughput: {checks / elapsed:,.0f} check_input calls/s over {checks} calls")
    print(f"  (mean {mean_chars:.0f} chars, {1e6 * elapsed / checks:.0f} µs per call)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="?", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    corpora: Path = args.corpora
    injections = read_lines(corpora / "injection_dev.txt")
    benign = read_lines(corpora / "benign_questions.txt")
    hard = read_lines(corpora / "benign_hard.txt")
    report_injection(injections, args.show_misses)
    report_benign("benign_questions.txt", benign, args.show_misses)
    report_benign("benign_hard.txt", hard, args.show_misses)
    report_pii(
        "pii_cards.tsv", read_tsv(corpora / "pii_cards.tsv"), find_payment_cards, args.show_misses
    )
    report_pii("pii_ibans.tsv", read_tsv(corpora / "pii_ibans.tsv"), find_ibans, args.show_misses)
    report_throughput([*injections, *benign, *hard])


if __name__ == "__main__":
    main()
