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

from graphs.guards.ngrams import BUCKETS, bucket_features, code_points, row_features, row_sums

__all__ = ["MAX_WINDOWS", "WINDOW", "NgramModel", "injection_probability", "load_model"]

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
        if len(text) <= WINDOW:
            return self._window(text)
        step = WINDOW // 2
        starts = list(range(0, len(text) - step, step))
        if len(starts) <= MAX_WINDOWS:
            return max(self._windows(text, starts))
        spread = np.linspace(0, len(text) - WINDOW, MAX_WINDOWS).round().astype(np.intp)
        logits = self.bias + row_sums(_window_rows(text, spread), self.weights)
        return float(1.0 / (1.0 + np.exp(-logits.max())))

    def _window(self, text: str) -> float:
        return self._probability(*bucket_features(text))

    def _probability(self, buckets: npt.NDArray[np.intp], value: float) -> float:
        logit = self.bias + float(self.weights[buckets].sum()) * value
        return float(1.0 / (1.0 + np.exp(-logit)))

    def _windows(self, text: str, starts: list[int]) -> list[float]:
        """`_window` of `text[start : start + WINDOW]` for each start: the full windows
        hashed together (`row_features`), a shorter last one alone."""
        full = [start for start in starts if start + WINDOW <= len(text)]
        scores = [self._window(text[start : start + WINDOW]) for start in starts[len(full) :]]
        if full:
            rows = _window_rows(text, np.array(full))
            scores += [self._probability(*features) for features in row_features(rows)]
        return scores


def _window_rows(text: str, starts: npt.NDArray[np.intp]) -> npt.NDArray[np.uint64]:
    """The `WINDOW`-character windows of `text` at `starts`, one padded row each, as the
    n-gram hash reads a text (a space before and after)."""
    rows = np.full((len(starts), WINDOW + 2), ord(" "), dtype=np.uint64)
    rows[:, 1:-1] = code_points(text)[starts[:, None] + np.arange(WINDOW)]
    return rows


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
