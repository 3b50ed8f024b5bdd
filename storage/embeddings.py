"""Turn text into vectors: dense sentence embeddings (fastembed, offline) and BM25 sparse vectors.

`Embedder` runs a model directory assembled by `storage.model_files` through fastembed
with the files given explicitly (`specific_model_path`, `local_files_only`), so nothing
is ever fetched. Loading and inference run in worker threads; one lock serialises use of
the onnxruntime session so that concurrent callers queue instead of fighting over the
same cores (each run already uses `threads` cores). `LexicalEncoder` wraps qdrant-edge's
BM25 with English stemming and stopwords.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from fastembed import TextEmbedding
from numpy.typing import NDArray
from qdrant_edge import Bm25, Bm25Config
from tokenizers import Tokenizer

from storage.model_files import ModelFilesError, read_manifest
from storage.vectors import SparseVector

__all__ = ["BATCH_SIZE", "Embedder", "EmbeddingError", "LexicalEncoder"]

logger = logging.getLogger(__name__)

#: Texts per onnxruntime run. fastembed's default (256) costs gigabytes of RSS at 256 tokens.
BATCH_SIZE = 32


class EmbeddingError(Exception):
    """The embedding model could not be loaded or failed on an input."""


class Embedder:
    """A loaded dense embedding model; build it with `await Embedder.load(model_dir)`."""

    def __init__(
        self,
        model: TextEmbedding,
        tokenizer: Tokenizer,
        *,
        model_name: str,
        dimension: int,
        max_tokens: int,
    ) -> None:
        self._model = model
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self.model_name = model_name
        self.dimension = dimension
        self.max_tokens = max_tokens
        """Content tokens (no [CLS]/[SEP]) the model reads; the rest of a text is cut off."""

    @classmethod
    async def load(cls, model_dir: Path, *, threads: int | None = 1) -> Embedder:
        """Load an assembled model directory; `threads` is onnxruntime's per-run thread count."""
        return await asyncio.to_thread(cls._load, model_dir, threads)

    @classmethod
    def _load(cls, model_dir: Path, threads: int | None) -> Embedder:
        started = time.perf_counter()
        try:
            manifest = read_manifest(model_dir)
            model = TextEmbedding(
                manifest.fastembed_name,
                cache_dir=str(model_dir),  # fastembed creates it; the default is /tmp
                threads=threads,
                providers=["CPUExecutionProvider"],
                specific_model_path=str(model_dir),
                local_files_only=True,
            )
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except (ModelFilesError, ValueError, RuntimeError, OSError) as exc:
            raise EmbeddingError(f"cannot load the embedding model in {model_dir}: {exc}") from exc
        tokenizer.no_truncation()
        tokenizer.no_padding()
        if model.embedding_size != manifest.dimension:
            raise EmbeddingError(
                f"{model_dir}: fastembed says {model.embedding_size} dimensions, "
                f"the model's config says {manifest.dimension}"
            )
        logger.info(
            "loaded embedding model %s (%d-d, threads=%s) in %.1fs",
            manifest.key,
            manifest.dimension,
            threads,
            time.perf_counter() - started,
        )
        return cls(
            model,
            tokenizer,
            model_name=manifest.key,
            dimension=manifest.dimension,
            max_tokens=manifest.max_tokens,
        )

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for `texts`, in order; text past `max_tokens` is ignored."""
        if not texts:
            return []
        return await asyncio.to_thread(self._embed, list(texts), False)

    async def embed_query(self, text: str) -> list[float]:
        """The unit-length vector of a search query."""
        [vector] = await asyncio.to_thread(self._embed, [text], True)
        return vector

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets (start, end) of each token of `text`, special tokens left out."""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return [(start, end) for start, end in encoding.offsets]

    def _embed(self, texts: list[str], query: bool) -> list[list[float]]:
        with self._lock:
            try:
                if query:
                    vectors = list(self._model.query_embed(texts))
                else:
                    vectors = list(self._model.embed(texts, batch_size=BATCH_SIZE))
            except (RuntimeError, ValueError) as exc:
                raise EmbeddingError(f"{self.model_name} failed: {exc}") from exc
        matrix: NDArray[np.float32] = np.asarray(vectors, dtype=np.float32)
        result: list[list[float]] = matrix.tolist()
        return result


class LexicalEncoder:
    """BM25 sparse vectors (English stemming and stopwords); tens of microseconds a text."""

    def __init__(self, *, language: str = "english") -> None:
        self._bm25 = Bm25(Bm25Config(language=language))

    def encode_document(self, text: str) -> SparseVector:
        """Term-frequency weights (BM25 k, b, average length) of a text to index."""
        return _sparse(self._bm25.embed_document(text))

    def encode_query(self, text: str) -> SparseVector:
        """Weight 1.0 for each distinct term of a query."""
        return _sparse(self._bm25.embed_query(text))


def _sparse(vector: Any) -> SparseVector:
    """Translate qdrant-edge's SparseVector (untyped here) into ours."""
    indices = tuple(int(index) for index in vector.indices)
    values = tuple(float(value) for value in vector.values)
    return SparseVector(indices=indices, values=values)
