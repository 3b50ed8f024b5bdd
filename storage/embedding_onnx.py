"""Run an ONNX sentence-embedding model (all-MiniLM-L6-v2) with ONNX Runtime, memory bounded.

Tokenize (truncated at the model's context), run, mean-pool over the attention mask,
normalise, exactly what fastembed does for these models but with memory bounded:

* no growing CPU arena (`memory_arena=False`, the default): ORT's arena keeps the peak of
  the largest batch ever run for the life of the process, gigabytes at 256-token batches;
* batches are sized by total tokens (`batch_tokens`, padded length times texts), not by a
  count of texts, and texts are sorted by length first so padding stays small;
* freed heap pages go back to the system (`malloc_trim`) every `_TRIM_TOKENS` padded tokens
  run, counted across runs and calls: a model that runs each text alone would otherwise
  never trim (embedding a 483-chunk PDF grew the process by 26 MB, with the trims by 12
  MB); trimming after every run costs ~7% more CPU (the pages fault in again), every 2048
  tokens nothing measurable;
* a model whose activations are quantised per run (dynamic int8, `batch_invariant=False`)
  embeds every text in a run of its own: beside other texts its vector would shift a
  little (cosine 0.990-0.995), and the same text must always get the same vector, whoever
  else's text is embedded with it. Measured on SciFact: passages 12.7/s either way;
  queries 63/s alone against 123/s together.

MiniLM reads queries and passages alike (no prefixes). onnxruntime is imported when a
model is loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from storage.heap import trim_heap
from storage.model_files import ModelManifest

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = ["OnnxEngine"]

#: Return freed heap pages to the system once this many padded tokens have run since the
#: last time.
_TRIM_TOKENS = 2048
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxEngine:
    """An ONNX Runtime session over a model directory's `model.onnx` (not thread-safe: the
    `Embedder` runs one call at a time)."""

    def __init__(
        self,
        session: ort.InferenceSession,
        tokenizer: Tokenizer,
        *,
        name: str,
        max_tokens: int,
        batch_tokens: int,
        batch_invariant: bool,
    ) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = [item.name for item in session.get_inputs() if item.name in _INPUTS]
        self._output = session.get_outputs()[0].name
        self._name = name
        self._max_tokens = max_tokens
        self._untrimmed_tokens = 0  # padded tokens run since the heap was last trimmed
        # One text a run where sharing a run would change a text's vector.
        self._batch_tokens = batch_tokens if batch_invariant else 1

    @classmethod
    def load(
        cls,
        model_dir: Path,
        manifest: ModelManifest,
        tokenizer: Tokenizer,
        *,
        threads: int | None,
        batch_tokens: int,
        memory_arena: bool,
        batch_invariant: bool,
    ) -> OnnxEngine:
        """Open `model_dir/model.onnx`; raises `ValueError` when its output's dimension is
        not the manifest's (onnxruntime raises its own errors on a broken file)."""
        import onnxruntime as ort  # noqa: PLC0415 - heavy, only where embeddings are made

        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = memory_arena
        options.enable_mem_pattern = memory_arena  # per-shape plans, kept forever
        session = ort.InferenceSession(
            str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        dimension = _output_dimension(session)
        if dimension is not None and dimension != manifest.dimension:
            raise ValueError(
                f"model.onnx gives {dimension} dimensions, the model's config says "
                f"{manifest.dimension}"
            )
        return cls(
            session,
            tokenizer,
            name=manifest.key,
            max_tokens=manifest.max_tokens,
            batch_tokens=batch_tokens,
            batch_invariant=batch_invariant,
        )

    @property
    def memory_arena(self) -> bool:
        """Whether ONNX Runtime keeps its growing CPU arena (as the loaded session says)."""
        return bool(self._session.get_session_options().enable_cpu_mem_arena)

    def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        """Unit vectors for `texts`, in order (MiniLM embeds queries as passages)."""
        del query  # the same function for both
        token_ids = [self._ids(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        result: list[list[float]] = [[] for _ in texts]
        for batch in _batches(order, lambda i: len(token_ids[i]), self._batch_tokens):
            matrix = self._run([token_ids[i] for i in batch])
            for row, index in zip(matrix.tolist(), batch, strict=True):
                result[index] = row
            self._untrimmed_tokens += len(batch) * len(token_ids[batch[-1]])
            if self._untrimmed_tokens >= _TRIM_TOKENS:
                trim_heap()
                self._untrimmed_tokens = 0
        return result

    def _ids(self, text: str) -> list[int]:
        """Token ids with [CLS] and [SEP], cut to the model's context like fastembed does."""
        ids: list[int] = self._tokenizer.encode(text).ids
        limit = self._max_tokens + 2
        if len(ids) > limit:
            ids = [*ids[: limit - 1], ids[-1]]
        return ids

    def _run(self, batch: list[list[int]]) -> NDArray[np.float32]:
        width = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feed = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(mask),
        }
        [hidden] = self._session.run([self._output], {name: feed[name] for name in self._inputs})
        states = np.asarray(hidden, dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: NDArray[np.float32] = pooled / np.clip(norms, 1e-12, None)
        return normalised


def _batches(order: list[int], length: Callable[[int], int], budget: int) -> list[list[int]]:
    """Split indices sorted by length into runs whose padded size stays within `budget`."""
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        # Sorted ascending: the newest text is the batch's longest.
        if current and (len(current) + 1) * length(index) > budget:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def _output_dimension(session: ort.InferenceSession) -> int | None:
    shape = session.get_outputs()[0].shape
    last = shape[-1] if shape else None
    return last if isinstance(last, int) else None
