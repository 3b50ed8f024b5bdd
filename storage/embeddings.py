"""Turn text into vectors: dense sentence embeddings (ONNX Runtime, offline) and BM25 vectors.

`Embedder` runs a model directory assembled by `storage.model_files` with ONNX Runtime
directly: tokenize (truncated at the model's context), run, mean-pool over the attention
mask, normalise, exactly what fastembed does for these models but with memory bounded:

* no growing CPU arena (`memory_arena=False`, the default): ORT's arena keeps the peak of
  the largest batch ever run for the life of the process, gigabytes at 256-token batches;
* batches are sized by total tokens (`batch_tokens`, padded length times texts), not by a
  count of texts, and texts are sorted by length first so padding stays small;
* one loaded model per process and model directory (`Embedder.load` hands back the same
  instance), and freed heap pages go back to the system (`malloc_trim`) every
  `_TRIM_TOKENS` padded tokens run, counted across runs and calls: a model that runs each
  text alone would otherwise never trim (embedding a 483-chunk PDF grew the process by
  26 MB, with the trims by 12 MB); trimming after every run costs ~7% more CPU (the pages
  fault in again), every 2048 tokens nothing measurable;
* a model whose activations are quantised per run (dynamic int8, `batch_invariant=False`)
  embeds every text in a run of its own: beside other texts its vector would shift a
  little (cosine 0.990-0.995), and the same text must always get the same vector, whoever
  else's text is embedded with it. Measured on SciFact: passages 12.7/s either way;
  queries 63/s alone against 123/s together.

Loading and inference run in worker threads; one lock serialises use of the session so
that concurrent callers queue instead of fighting over the same cores (each run already
uses `threads` cores). onnxruntime and tokenizers are imported when first used, so
importing this module costs nothing. The lexical side is `storage.lexical`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from storage.heap import trim_heap
from storage.model_files import MODEL_CHOICES, ModelFilesError, read_manifest

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = ["DEFAULT_BATCH_TOKENS", "Embedder", "EmbeddingError"]

logger = logging.getLogger(__name__)

#: Padded tokens per onnxruntime run (texts x longest text of the batch). At 1024 an
#: all-MiniLM-L6-v2 run holds ~100 MB of activations, whatever the texts' lengths.
DEFAULT_BATCH_TOKENS = 1024
#: Return freed heap pages to the system once this many padded tokens have run since the
#: last time.
_TRIM_TOKENS = 2048
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: Characters `Embedder.token_spans` tokenizes in one call (the tokenizer's transient state
#: is ~130 bytes a character).
_SPAN_PIECE_CHARS = 16_384
_WORD_START = re.compile(r"[ \n][!-~]")


class EmbeddingError(Exception):
    """The embedding model could not be loaded or failed on an input."""


@dataclass(frozen=True, slots=True)
class _LoadKey:
    model_dir: Path
    model_sha256: str
    threads: int | None
    batch_tokens: int
    memory_arena: bool


_loaded: dict[_LoadKey, Embedder] = {}
_loaded_lock = threading.Lock()


class Embedder:
    """A loaded dense embedding model; build it with `await Embedder.load(model_dir)`."""

    def __init__(
        self,
        session: ort.InferenceSession,
        tokenizer: Tokenizer,
        *,
        model_name: str,
        model_sha256: str,
        dimension: int,
        max_tokens: int,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        batch_invariant: bool = True,
    ) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = [item.name for item in session.get_inputs() if item.name in _INPUTS]
        self._output = session.get_outputs()[0].name
        self._lock = threading.Lock()
        self._untrimmed_tokens = 0  # padded tokens run since the heap was last trimmed
        # One text a run where sharing a run would change a text's vector.
        self._batch_tokens = batch_tokens if batch_invariant else 1
        self.model_name = model_name
        self.model_sha256 = model_sha256
        """SHA-256 of the ONNX graph: with `model_name`, the identity stored with the vectors."""
        self.dimension = dimension
        self.max_tokens = max_tokens
        """Content tokens (no [CLS]/[SEP]) the model reads; the rest of a text is cut off."""

    @classmethod
    async def load(
        cls,
        model_dir: Path,
        *,
        threads: int | None = 1,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        memory_arena: bool = False,
    ) -> Embedder:
        """Load an assembled model directory, or return the one this process already loaded.

        `threads`: onnxruntime's per-run thread count; `batch_tokens`: padded tokens per
        run; `memory_arena`: keep ORT's growing CPU arena (faster, much larger)."""
        return await asyncio.to_thread(cls._cached, model_dir, threads, batch_tokens, memory_arena)

    @classmethod
    def _cached(
        cls, model_dir: Path, threads: int | None, batch_tokens: int, memory_arena: bool
    ) -> Embedder:
        try:
            manifest = read_manifest(model_dir)
        except ModelFilesError as exc:
            raise EmbeddingError(f"cannot load the embedding model in {model_dir}: {exc}") from exc
        key = _LoadKey(
            model_dir.resolve(),
            manifest.sha256.get("model.onnx", ""),
            threads,
            max(batch_tokens, 1),
            memory_arena,
        )
        with _loaded_lock:
            embedder = _loaded.get(key)
            if embedder is None:
                embedder = cls._load(model_dir, key)
                _loaded[key] = embedder
            return embedder

    @classmethod
    def _load(cls, model_dir: Path, key: _LoadKey) -> Embedder:
        started = time.perf_counter()
        try:
            import onnxruntime as ort  # noqa: PLC0415 - heavy, only where embeddings are made
            from tokenizers import Tokenizer  # noqa: PLC0415

            manifest = read_manifest(model_dir)
            options = ort.SessionOptions()
            if key.threads is not None:
                options.intra_op_num_threads = key.threads
            options.inter_op_num_threads = 1
            options.enable_cpu_mem_arena = key.memory_arena
            options.enable_mem_pattern = key.memory_arena  # per-shape plans, kept forever
            session = ort.InferenceSession(
                str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception as exc:  # onnxruntime and tokenizers raise their own base types
            raise EmbeddingError(f"cannot load the embedding model in {model_dir}: {exc}") from exc
        tokenizer.no_truncation()
        tokenizer.no_padding()
        dimension = _output_dimension(session)
        if dimension is not None and dimension != manifest.dimension:
            raise EmbeddingError(
                f"{model_dir}: model.onnx gives {dimension} dimensions, "
                f"the model's config says {manifest.dimension}"
            )
        logger.info(
            "loaded embedding model %s (%d-d, threads=%s, %d tokens a batch, arena %s) in %.1fs",
            manifest.key,
            manifest.dimension,
            key.threads,
            key.batch_tokens,
            "on" if key.memory_arena else "off",
            time.perf_counter() - started,
        )
        return cls(
            session,
            tokenizer,
            model_name=manifest.key,
            model_sha256=key.model_sha256,
            dimension=manifest.dimension,
            max_tokens=manifest.max_tokens,
            batch_tokens=key.batch_tokens,
            batch_invariant=_batch_invariant(manifest.key),
        )

    @property
    def memory_arena(self) -> bool:
        """Whether ONNX Runtime keeps its growing CPU arena (as the loaded session says)."""
        return bool(self._session.get_session_options().enable_cpu_mem_arena)

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for `texts`, in order; text past `max_tokens` is ignored."""
        if not texts:
            return []
        return await asyncio.to_thread(self._embed, list(texts))

    async def embed_query(self, text: str) -> list[float]:
        """The unit-length vector of a search query."""
        [vector] = await asyncio.to_thread(self._embed, [text])
        return vector

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets (start, end) of each token of `text`, special tokens left out.

        A long text is tokenized in pieces of about `_SPAN_PIECE_CHARS`, cut after a space
        or newline before a printable ASCII character: the tokenizer's state for a whole
        400 KB PDF is ~50 MB at once. The spans are the same, since the tokenizer's
        normaliser works character by character and its pre-tokenizer splits at every
        space (a word never crosses a cut)."""
        spans: list[tuple[int, int]] = []
        for start, end in _pieces(text, _SPAN_PIECE_CHARS):
            encoding = self._tokenizer.encode(text[start:end], add_special_tokens=False)
            spans += [(start + first, start + last) for first, last in encoding.offsets]
        return spans

    def _embed(self, texts: list[str]) -> list[list[float]]:
        token_ids = [self._ids(text) for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        result: list[list[float]] = [[] for _ in texts]
        with self._lock:
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
        limit = self.max_tokens + 2
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
        try:
            [hidden] = self._session.run(
                [self._output], {name: feed[name] for name in self._inputs}
            )
        except Exception as exc:  # onnxruntime's errors share no public base class
            raise EmbeddingError(f"{self.model_name} failed: {exc}") from exc
        states = np.asarray(hidden, dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: NDArray[np.float32] = pooled / np.clip(norms, 1e-12, None)
        return normalised


def _batch_invariant(key: str) -> bool:
    """Whether the model gives a text the same vector whatever shares its run."""
    choice = MODEL_CHOICES.get(key)
    return choice is None or choice.batch_invariant


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


def _pieces(text: str, size: int) -> list[tuple[int, int]]:
    """Cut `text` into (start, end) pieces of at most about `size` characters, each cut
    after a space or newline that a printable ASCII character follows (a piece runs on
    to the next such place when there is none in its second half)."""
    pieces: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > size:
        end = _cut_before(text, start + size // 2, start + size)
        if end is None:
            end = _cut_after(text, start + size)
        if end is None:
            break
        pieces.append((start, end))
        start = end
    pieces.append((start, len(text)))
    return pieces


def _cut_before(text: str, lowest: int, highest: int) -> int | None:
    """The latest cut in [lowest, highest], or None."""
    at = highest
    while at > lowest:
        space = max(text.rfind(" ", lowest, at), text.rfind("\n", lowest, at))
        if space < 0:
            return None
        if _starts_word(text, space + 1):
            return space + 1
        at = space
    return None


def _cut_after(text: str, lowest: int) -> int | None:
    """The earliest cut after `lowest`, or None."""
    for found in _WORD_START.finditer(text, lowest):
        return found.start() + 1
    return None


def _starts_word(text: str, index: int) -> bool:
    return index < len(text) and "!" <= text[index] <= "~"


def _output_dimension(session: ort.InferenceSession) -> int | None:
    shape = session.get_outputs()[0].shape
    last = shape[-1] if shape else None
    return last if isinstance(last, int) else None
