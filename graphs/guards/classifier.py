"""Score text for prompt injection with a small learned model: hashed character n-grams, linear.

The second tier of the injection guard, for what the phrase rules miss: paraphrases,
other languages, persona set-ups in plain words. The model is logistic regression over
hashed character 1-5-grams (binary, unit length; see `ngrams`) of the folded, leet-read text,
trained by `benchmarks/train_guard_classifier.py` on examples written for each rule
family and language plus parts of the shared corpora; its weights ship with the package
(`graphs/guards/data/injection_ngrams.npz`, float16, about 0.2 MB) and load once, so
nothing is downloaded. A text longer than `WINDOW` characters is scored window by window
(half-overlapping) and the highest window counts, so an injection inside a long harmless
message is not averaged away.

The probability is one input to the verdict (see `injection.assess_injection`): on its
own it only ever hardens a turn (`FLAG_PROBABILITY`), and it refuses only together with
a rule (`REFUSE_PROBABILITY`). Both thresholds are stored with the weights, chosen on the
training split.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

import numpy as np
import numpy.typing as npt

from graphs.guards.ngrams import BUCKETS, window_sums

__all__ = [
    "MAX_WINDOWS",
    "WINDOW",
    "NgramModel",
    "injection_probability",
    "load_model",
    "window_starts",
]

WINDOW: Final = 400
MAX_WINDOWS: Final = 10
_WEIGHTS_FILE: Final = "injection_ngrams.npz"


@dataclass(frozen=True, slots=True)
class NgramModel:
    """The linear model: one weight per bucket, a bias and the two decision thresholds."""

    weights: npt.NDArray[np.float32]
    bias: float
    flag_probability: float
    refuse_probability: float

    def probability(self, text: str) -> float:
        """The probability that `text` (already folded) is an injection; a text longer than
        `WINDOW` characters scores as its most suspicious window: half-overlapping up to
        `MAX_WINDOWS` windows, beyond that `MAX_WINDOWS` windows spread evenly from the
        first character to the last (so the cost stays bounded)."""
        sums = window_sums(text, window_starts(len(text)), WINDOW, self.weights)
        logit = self.bias + float(sums.max())
        return float(1.0 / (1.0 + np.exp(-logit)))


def window_starts(length: int) -> list[int]:
    """Where the scored windows of a text of `length` characters start (see
    `NgramModel.probability`)."""
    if length <= WINDOW:
        return [0]
    step = WINDOW // 2
    starts = list(range(0, length - step, step))
    if len(starts) <= MAX_WINDOWS:
        return starts
    spread: list[int] = np.linspace(0, length - WINDOW, MAX_WINDOWS).round().astype(int).tolist()
    return spread


@cache
def load_model() -> NgramModel:
    """The packaged model (loaded once)."""
    with resources.files("graphs.guards").joinpath("data", _WEIGHTS_FILE).open("rb") as handle:
        stored = np.load(handle)
        weights = stored["weights"].astype(np.float32)
        meta = stored["meta"].astype(np.float64)
    if weights.shape != (BUCKETS,):
        raise ValueError(f"{_WEIGHTS_FILE} holds {weights.shape[0]} weights, expected {BUCKETS}")
    return NgramModel(weights, float(meta[0]), float(meta[1]), float(meta[2]))


def injection_probability(text: str) -> float:
    """The packaged model's probability that `text` (already folded) is an injection."""
    return load_model().probability(text)
