"""Measure the payment-data guards (hardening row I) on the shared corpora, side by side.

Usage: .venv/bin/python benchmarks/payment_data.py [CORPORA_DIR] [--show-misses]
(or .venv/bin/python -m benchmarks.payment_data ...)

CORPORA_DIR defaults to ../shared/corpora (read by path, never copied). One run prints:

- pii_cards.tsv and pii_ibans.tsv: per-line recall and precision of `find_payment_cards`
  and `find_ibans` on the raw line (no normalisation), and which guard `check_input`
  names first (an IBAN line must be refused as an IBAN, never as a card; a near-miss
  IBAN must not be refused at all);
- every card of pii_cards.tsv rewritten in other layouts (dots, slashes, underscores,
  spaced dashes, en dashes, no-break spaces, 4-3-3-3-x groups, one digit at a time,
  zero-width joins, full-width, Arabic-Indic and Devanagari digits): share caught, and
  share left with no card after `mask_payment_cards`;
- benign_questions.txt and benign_hard.txt: false positives of the payment guards in
  `check_input` and of `mask_payment_cards`;
- throughput of `mask_payment_cards` on the benign texts.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

# Run as a script (python benchmarks/payment_data.py) or as a module (-m benchmarks...).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.guards import DEFAULT_CORPORA, rate, read_lines, read_tsv
from graphs.guards import GUARD_IBAN, GUARD_PAYMENT_CARD, check_input, find_ibans
from graphs.guards.payment import find_payment_cards, luhn_is_valid, mask_payment_cards

__all__ = ["main"]

_PAYMENT_GUARDS = {GUARD_IBAN, GUARD_PAYMENT_CARD}
_DIGITS = "0123456789"
_SCRIPTS = {
    "full-width": "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19",
    "arabic-indic": "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669",
    "devanagari": "\u0966\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f",
}


def _groups(digits: str, sizes: Sequence[int]) -> list[str]:
    out, start = [], 0
    for size in sizes:
        if start >= len(digits):
            break
        out.append(digits[start : start + size])
        start += size
    if start < len(digits):
        out.append(digits[start:])
    return out


def _in_script(script: str) -> Callable[[str], str]:
    table = str.maketrans(_DIGITS, script)
    return lambda digits: " ".join(_groups(digits.translate(table), [4] * 5))


LAYOUTS: dict[str, Callable[[str], str]] = {
    "spaces 4-4-4-4": lambda d: " ".join(_groups(d, [4] * 5)),
    "dots": lambda d: ".".join(_groups(d, [4] * 5)),
    "slashes": lambda d: "/".join(_groups(d, [4] * 5)),
    "underscores": lambda d: "_".join(_groups(d, [4] * 5)),
    "spaced dashes": lambda d: " - ".join(_groups(d, [4] * 5)),
    "en dashes": lambda d: "\u2013".join(_groups(d, [4] * 5)),
    "no-break spaces": lambda d: "\u00a0".join(_groups(d, [4] * 5)),
    "dashes 4-3-3-3-x": lambda d: "-".join(_groups(d, [4, 3, 3, 3])),
    "one digit at a time": " ".join,
    "zero-width joins": lambda d: "\u200b".join(_groups(d, [4] * 5)),
    **{name: _in_script(script) for name, script in _SCRIPTS.items()},
}


def report_lines(name: str, rows: Sequence[tuple[str, int]], show_misses: bool) -> None:
    cards = name.startswith("pii_cards")
    detector = find_payment_cards if cards else find_ibans
    true_pos = false_pos = false_neg = 0
    verdicts: Counter[str] = Counter()
    wrong_guard = 0
    for text, expected in rows:
        found = bool(detector(text))
        true_pos += found and bool(expected)
        false_pos += found and not expected
        false_neg += not found and bool(expected)
        guard = check_input(text).guard or "allowed"
        verdicts[f"{'positive' if expected else 'near miss'} -> {guard}"] += 1
        wanted = (GUARD_PAYMENT_CARD if cards else GUARD_IBAN) if expected else "allowed"
        if guard != wanted and (expected or guard in _PAYMENT_GUARDS):
            wrong_guard += 1
            if show_misses:
                print(f"    {guard} for {text!r} (expected {wanted})")
    precision = true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0
    recall = true_pos / (true_pos + false_neg) if true_pos + false_neg else 1.0
    print(f"{name}: {len(rows)} lines, raw text")
    print(f"  detector precision {100 * precision:6.2f}%   recall {100 * recall:6.2f}%")
    print(f"  check_input verdicts        {dict(sorted(verdicts.items()))}")
    print(f"  lines with the wrong guard  {wrong_guard}")


def report_layouts(rows: Sequence[tuple[str, int]]) -> None:
    numbers = sorted(
        {
            "".join(c for c in text if c.isdigit())
            for text, expected in rows
            if expected == 1 and luhn_is_valid("".join(c for c in text if c.isdigit()))
        }
    )
    print(f"card layouts: {len(numbers)} distinct cards of pii_cards.tsv in {len(LAYOUTS)} layouts")
    for name, layout in LAYOUTS.items():
        texts = [f"my card is {layout(number)}, thanks" for number in numbers]
        caught = sum(check_input(text).guard == GUARD_PAYMENT_CARD for text in texts)
        cleaned = sum(
            mask_payment_cards(text).cards == 1
            and not find_payment_cards(mask_payment_cards(text).text)
            for text in texts
        )
        print(
            f"  {name:<22} caught {rate(caught, len(texts))}   masked {rate(cleaned, len(texts))}"
        )


def report_benign(name: str, texts: Sequence[str], show_misses: bool) -> None:
    refused = [t for t in texts if check_input(t).guard in _PAYMENT_GUARDS]
    masked = [t for t in texts if mask_payment_cards(t).cards]
    print(f"{name} (must pass)")
    print(f"  payment guards false pos.   {rate(len(refused), len(texts))}")
    print(f"  masking false pos.          {rate(len(masked), len(texts))}")
    if show_misses:
        for text in {*refused, *masked}:
            print(f"    FP {text[:150]!r}")


def report_throughput(texts: Sequence[str]) -> None:
    started = time.perf_counter()
    for text in texts:
        mask_payment_cards(text)
    elapsed = time.perf_counter() - started
    chars = sum(map(len, texts))
    speed = f"{len(texts) / elapsed:,.0f} texts/s, {chars / elapsed / 1e6:.1f} M chars/s"
    print(f"mask_payment_cards: {speed}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("corpora", nargs="?", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args(argv)
    corpora: Path = args.corpora
    card_rows = read_tsv(corpora / "pii_cards.tsv")
    report_lines("pii_cards.tsv", card_rows, args.show_misses)
    report_lines("pii_ibans.tsv", read_tsv(corpora / "pii_ibans.tsv"), args.show_misses)
    report_layouts(card_rows)
    benign = read_lines(corpora / "benign_questions.txt")
    hard = read_lines(corpora / "benign_hard.txt")
    report_benign("benign_questions.txt", benign, args.show_misses)
    report_benign("benign_hard.txt", hard, args.show_misses)
    report_throughput([*benign, *hard])


if __name__ == "__main__":
    main()
