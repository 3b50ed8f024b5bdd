"""Training texts for the learned injection scorer: hand-written examples and slot grammars.

Two data files beside this module, written for this project:
- `guard_examples.tsv`: hand-written attacks per rule family and language (label 1) and
  ordinary knowledge-base questions in each language, many with attack vocabulary
  (label 0). Escapes as in the shared corpora: `\\\\`, `\\n`, `\\r`.
- `guard_slots.json`: per language, slot lists (verbs, objects, topics...) and frames
  that combine them, for attacks (`attack_frames`, "*" for languages without their own)
  and for ordinary questions (`benign_frames`). `compose(rng, count)` draws texts from
  them, so the scorer sees each family's vocabulary in many arrangements instead of a few
  memorised sentences.

The held-out sets `guard_holdout.tsv` and `guard_holdout_b.tsv` to `guard_holdout_d.tsv` (same
format as the examples) were written separately and are never trained on.
"""

from __future__ import annotations

import csv
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Examples", "compose", "read_benign_families", "read_examples"]

HERE = Path(__file__).resolve().parent
_SLOT = re.compile(r"\{(\w+)\}")
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"n": "\n", "r": "\r", "\\": "\\"}


@dataclass(frozen=True, slots=True)
class Examples:
    """Hand-written texts: (family, language, text) attacks and (language, text) benign."""

    attacks: tuple[tuple[str, str, str], ...]
    benign: tuple[tuple[str, str], ...]


def read_examples(path: Path = HERE / "guard_examples.tsv") -> Examples:
    """The labelled texts of a TSV file with columns label, family, lang, text."""
    attacks: list[tuple[str, str, str]] = []
    benign: list[tuple[str, str]] = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            text = _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group()), row["text"])
            if row["label"] == "1":
                attacks.append((row["family"], row["lang"], text))
            else:
                benign.append((row["lang"], text))
    return Examples(tuple(attacks), tuple(benign))


def read_benign_families(path: Path) -> dict[str, str]:
    """The benign texts of a TSV file like `read_examples` reads, each with its family
    column ("benign", or "benign_hard" for questions in attack vocabulary), in file order."""
    families: dict[str, str] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            if row["label"] != "1":
                text = _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group()), row["text"])
                families[text] = row["family"]
    return families


def _grammar() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((HERE / "guard_slots.json").read_text(encoding="utf-8"))
    return loaded


def _fill(frame: str, lang: str, grammar: dict[str, Any], rng: random.Random) -> str:
    slots: dict[str, list[str]] = grammar["slots"][lang]
    roles = grammar["role_labels"].get(lang, ["User", "Assistant"])

    def pick(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "Ask":
            return str(rng.choice(slots["ask"])).format(topic=rng.choice(slots["topic"]))
        if name in {"user", "assistant"}:
            return str(roles[0] if name == "user" else roles[1])
        return str(rng.choice(slots[name])) if slots.get(name) else ""

    return " ".join(_SLOT.sub(pick, frame).split())


def compose(
    rng: random.Random, per_family: int
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """(family, language, text) attacks and (language, text) benign texts, drawn from the
    slot grammars: `per_family` per family in English, a third of that elsewhere."""
    grammar = _grammar()
    attacks: list[tuple[str, str, str]] = []
    benign: list[tuple[str, str]] = []
    for lang in grammar["slots"]:
        frames = grammar["attack_frames"].get(lang, grammar["attack_frames"]["*"])
        count = per_family if lang == "en" else max(10, per_family // 3)
        for family, options in frames.items():
            attacks += [
                (family, lang, _fill(rng.choice(options), lang, grammar, rng)) for _ in range(count)
            ]
        benign += [
            (lang, _fill(rng.choice(grammar["benign_frames"]), lang, grammar, rng))
            for _ in range(count * 4)
        ]
    return attacks, benign
