"""Query embeddings for many concurrent turns: batched together, and remembered.

Each turn that searches embeds its question once (knowledge search, memory recall). One at a
time, every turn pays a model run of its own and waits behind the others' (the model runs one
batch at a time). `QueryBatcher.embed_query` instead queues the text: the first query of a
quiet moment starts a batch at once (no timer, so a lone turn waits for nothing), and every
query that arrives while a batch is running goes into the next one, up to `max_batch` texts.
The same text asked twice meanwhile is embedded once. The last `cache_size` vectors are
kept (least recently used dropped first), so a question asked again, or searched by both the
knowledge search and the memory recall of one turn, costs no model run.
"""

from __future__ import annotations

import asyncio
import logging
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

__all__ = ["CACHE_SIZE", "MAX_BATCH", "QueryBatcher"]

logger = logging.getLogger(__name__)

CACHE_SIZE = 256  # 256 x 384 dimensions x 8 bytes: under 1 MB
MAX_BATCH = 32

EmbedBatch = Callable[[Sequence[str]], Awaitable[list[list[float]]]]


class QueryBatcher:
    """`embed_query` over a batch embedding call, with micro-batching and a bounded LRU cache.

    `embed_batch(texts)` returns one unit query vector per text, in order, exactly as
    embedding each text alone would."""

    def __init__(
        self, embed_batch: EmbedBatch, *, cache_size: int = CACHE_SIZE, max_batch: int = MAX_BATCH
    ) -> None:
        if cache_size < 0 or max_batch < 1:
            raise ValueError("cache_size must be >= 0 and max_batch >= 1")
        self._embed_batch = embed_batch
        self._cache_size = cache_size
        self._max_batch = max_batch
        self._cache: OrderedDict[str, array[float]] = OrderedDict()
        self._waiting: dict[str, asyncio.Future[array[float]]] = {}
        self._running: dict[str, asyncio.Future[array[float]]] = {}
        self._worker: asyncio.Task[None] | None = None
        self.batches: list[int] = []
        """The size of every batch sent to the model, in order (for tests and benchmarks)."""

    @property
    def cached(self) -> int:
        """How many query vectors are kept."""
        return len(self._cache)

    async def embed_query(self, text: str) -> list[float]:
        """The unit-length vector of a search query."""
        vector = self._cache.get(text)
        if vector is not None:
            self._cache.move_to_end(text)
            return vector.tolist()
        future = self._running.get(text) or self._waiting.get(text)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._waiting[text] = future
            if self._worker is None or self._worker.done():
                self._worker = asyncio.create_task(self._drain(), name="query-embeddings")
        # A caller cancelled mid-wait must not cancel the others' shared result.
        return (await asyncio.shield(future)).tolist()

    async def _drain(self) -> None:
        """Embed what is waiting, batch after batch, until nothing is."""
        while self._waiting:
            texts = list(self._waiting)[: self._max_batch]
            batch = {text: self._waiting.pop(text) for text in texts}
            self._running.update(batch)
            try:
                vectors = await self._vectors(texts)
            except asyncio.CancelledError:
                for future in [*batch.values(), *self._waiting.values()]:
                    future.cancel()
                self._waiting.clear()
                raise
            except Exception as exc:  # handed to every caller of this batch
                for future in batch.values():
                    if not future.done():
                        future.set_exception(exc)
                continue
            finally:
                for text in texts:
                    self._running.pop(text, None)
            self.batches.append(len(texts))
            for text, vector in zip(texts, vectors, strict=True):
                self._remember(text, vector)
                if not batch[text].done():
                    batch[text].set_result(vector)

    async def _vectors(self, texts: list[str]) -> list[array[float]]:
        vectors = await self._embed_batch(texts)
        if len(vectors) != len(texts):
            raise RuntimeError(f"{len(texts)} queries embedded as {len(vectors)} vectors")
        return [array("d", vector) for vector in vectors]

    def _remember(self, text: str, vector: array[float]) -> None:
        if self._cache_size == 0:
            return
        self._cache[text] = vector
        self._cache.move_to_end(text)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
