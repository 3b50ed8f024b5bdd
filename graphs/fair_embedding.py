"""One embedding model shared fairly: questions first, documents in small slices, in turns.

The model runs one batch at a time. Embedding a whole document in one call would hold it for
minutes, and every question asked meanwhile (its search needs one query vector) would wait
for the end. `FairEmbedder` wraps the model instead:

* a document's passages go to the model in slices of about `slice_seconds` of model time
  (the model's pace per character of text, measured on the latest slice, sizes the next
  one, so a slower model or longer chunks make smaller slices); after each slice the model
  is handed on, so nothing waits longer than about one slice;
* query embeddings (`embed_queries`, what `graphs.query_batching` calls) always go next;
* passage jobs (ingests, the re-index job, conversation memory) take the model slice by
  slice in turns, so a short note is not held up behind somebody's long book either.

This is scheduling around the model, not inside it: the vectors are exactly those the
wrapped embedder gives (it must give a text the same vector whatever shares its batch).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["SLICE_SECONDS", "EmbeddingModel", "FairEmbedder", "TurnCounts"]

#: Model time one slice of a document aims at: the longest a question waits for the model.
SLICE_SECONDS = 0.2
#: Texts in the first slice, before any has been timed, and the most in any slice.
FIRST_SLICE_TEXTS = 2
MAX_SLICE_TEXTS = 64
#: Characters of one text that count for its model time (the model reads at most a few
#: hundred tokens of a text and cuts off the rest).
_COUNTED_CHARS = 2048


class EmbeddingModel(Protocol):
    """The dense model (`storage.embeddings.Embedder`): vectors and its tokenizer."""

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit query vector per text (e5 reads queries with another prefix)."""

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of each token of `text`."""


@dataclass(slots=True)
class TurnCounts:
    """How often each kind of work had the model (for tests and benchmarks)."""

    query_batches: int = 0
    passage_slices: int = 0
    queries_ahead_of_passages: int = 0
    """Query batches that went to the model while a passage slice was waiting."""


def _counted(text: str) -> int:
    return min(len(text), _COUNTED_CHARS) + 1


class _Turnstile:
    """One holder at a time; when it lets go, the oldest waiting query gets the model, else
    the oldest waiting passage slice (a job whose slice ran queues again at the back)."""

    def __init__(self) -> None:
        self._held = False
        self._queries: deque[asyncio.Future[None]] = deque()
        self._passages: deque[asyncio.Future[None]] = deque()

    @property
    def passages_waiting(self) -> bool:
        return any(not future.done() for future in self._passages)

    async def enter(self, *, query: bool) -> None:
        if not self._held and not self._queries and not self._passages:
            self._held = True
            return
        future = asyncio.get_running_loop().create_future()
        line = self._queries if query else self._passages
        line.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.leave()  # handed the model just as the caller was cancelled: pass it on
            else:
                line.remove(future)
            raise

    def leave(self) -> None:
        for line in (self._queries, self._passages):
            while line:
                future = line.popleft()
                if not future.done():
                    future.set_result(None)  # the model passes to it, still held
                    return
        self._held = False


class FairEmbedder:
    """`embed_passages` in slices and `embed_queries` first, over one `EmbeddingModel`.

    Implements the ingest graph's `PassageEmbedder` and the query batcher's batch call."""

    def __init__(self, model: EmbeddingModel, *, slice_seconds: float = SLICE_SECONDS) -> None:
        if slice_seconds <= 0:
            raise ValueError("slice_seconds must be > 0")
        self._model = model
        self._slice_seconds = slice_seconds
        self._seconds_per_char: float | None = None  # the pace of the latest slice
        self._turnstile = _Turnstile()
        self.counts = TurnCounts()

    async def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for search queries, ahead of any document waiting for the model."""
        if not texts:
            return []
        async with self._turn(query=True):
            if self._turnstile.passages_waiting:
                self.counts.queries_ahead_of_passages += 1
            self.counts.query_batches += 1
            return await self._model.embed_queries(texts)

    async def embed_passages(
        self, texts: Sequence[str], *, done: Callable[[int], None] | None = None
    ) -> list[list[float]]:
        """Unit vectors for passages, in order, embedded slice by slice in turn with other
        work; `done(n)` after each slice, with the number of texts embedded so far."""
        vectors: list[list[float]] = []
        while len(vectors) < len(texts):
            async with self._turn(query=False):
                piece = self._next_slice(texts[len(vectors) : len(vectors) + MAX_SLICE_TEXTS])
                self.counts.passage_slices += 1
                started = time.perf_counter()
                embedded = await self._model.embed_passages(piece)
                if len(embedded) != len(piece):
                    raise RuntimeError(f"{len(piece)} passages embedded as {len(embedded)}")
                vectors += embedded
                chars = sum(_counted(text) for text in piece)
                self._seconds_per_char = (time.perf_counter() - started) / max(chars, 1)
            if done is not None:
                done(len(vectors))
        return vectors

    def _next_slice(self, texts: Sequence[str]) -> Sequence[str]:
        """The first of `texts` that fit about `slice_seconds` at the latest slice's pace
        (at least one)."""
        if self._seconds_per_char is None:
            return texts[:FIRST_SLICE_TEXTS]
        budget = self._slice_seconds / max(self._seconds_per_char, 1e-9)
        count, chars = 0, 0
        for text in texts:
            chars += _counted(text)
            if count and chars > budget:
                break
            count += 1
        return texts[:count]

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """The model's tokenizer (no model run, so no turn needed)."""
        return self._model.token_spans(text)

    @asynccontextmanager
    async def _turn(self, *, query: bool) -> AsyncIterator[None]:
        await self._turnstile.enter(query=query)
        try:
            yield
        finally:
            self._turnstile.leave()
