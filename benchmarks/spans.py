"""Where a turn's time goes: the benchmarks' `--spans` breakdown.

`Spans.installed()` wraps, for the length of a `with` block, the calls a turn makes outside
the model: checkpoint reads and writes (LangGraph's SQLite saver), knowledge and memory
searches (the vector store round trips), embeddings (model runs), SQLite reads and write
transactions (Lore's database), the guard checks, and the Bot API calls python-telegram-bot
makes. Each span counts its calls and their wall time, inclusive: a search's time includes
the embedding it waits for, and with many turns at once a span's time includes waiting for
the others (the share column can then add up to more than 100 %). The wrappers replace
class or module attributes and are removed on exit; nothing in Lore knows about them.

    with Spans.installed() as spans:
        ... run turns ...
    spans.print(turns=n, wall=seconds)
"""

from __future__ import annotations

import functools
import importlib
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

__all__ = ["TARGETS", "Spans"]

# (span, "module:Class.method" or "module:function", kind): coroutine functions are timed
# to their return; "context" ones (async context managers) from entry to exit.
TARGETS: tuple[tuple[str, str, str], ...] = (
    ("checkpoint read", "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.aget_tuple", "call"),
    ("checkpoint write", "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.aput", "call"),
    ("checkpoint write", "langgraph.checkpoint.sqlite.aio:AsyncSqliteSaver.aput_writes", "call"),
    ("embedding (model run)", "storage.embeddings:Embedder.embed_query", "call"),
    ("embedding (model run)", "storage.embeddings:Embedder.embed_passages", "call"),
    ("embedding (model run)", "graphs.query_batching:QueryBatcher._vectors", "call"),
    ("vector search", "storage.edge_store:EdgeVectorStore.search", "call"),
    ("vector search", "storage.edge_store:EdgeVectorStore.search_lexical", "call"),
    ("knowledge search (all)", "graphs.retrieval:Retriever.search", "call"),
    ("memory recall (all)", "graphs.memory_recall:MemoryRecall.search", "call"),
    ("SQLite read", "storage.database:Database.fetch_all", "call"),
    ("SQLite read", "storage.database:Database.fetch_one", "call"),
    ("SQLite write transaction", "storage.database:Database.transaction", "context"),
    ("SQLite one-statement write", "storage.database:Database.write", "call"),
    ("guard checks", "graphs.agent.nodes:check_turn", "call"),
    ("Bot API call", "telegram._bot:Bot._post", "call"),
)


class Spans:
    """Call counts and wall time per span, while installed."""

    def __init__(self) -> None:
        self.calls: defaultdict[str, int] = defaultdict(int)
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def reset(self) -> None:
        """Forget what was recorded (e.g. after a warm-up)."""
        self.calls.clear()
        self.seconds.clear()

    @classmethod
    @contextmanager
    def installed(cls) -> Iterator[Spans]:
        """Record spans inside the block; every wrapper is removed on exit."""
        spans = cls()
        undo: list[Callable[[], None]] = []
        try:
            for span, target, kind in TARGETS:
                patched = spans._wrap(span, target, kind)
                if patched is not None:
                    undo.append(patched)
            yield spans
        finally:
            for restore in reversed(undo):
                restore()

    def _wrap(self, span: str, target: str, kind: str) -> Callable[[], None] | None:
        module_name, _, path = target.partition(":")
        try:
            owner: Any = importlib.import_module(module_name)
        except ImportError:
            return None
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent, None)
        if owner is None or not hasattr(owner, name):
            return None  # not in this version of the code
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        wrapper = self._context(span, original) if kind == "context" else self._call(span, original)
        setattr(owner, name, wrapper)
        return lambda: setattr(owner, name, original)

    def _record(self, span: str, started: float) -> None:
        self.calls[span] += 1
        self.seconds[span] += time.perf_counter() - started

    def _call(self, span: str, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                self._record(span, started)

        return timed

    def _context(self, span: str, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        @asynccontextmanager
        async def timed(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            started = time.perf_counter()
            try:
                async with original(*args, **kwargs) as value:
                    yield value
            finally:
                self._record(span, started)

        return timed

    def print(self, *, turns: int, wall: float, label: str = "turn") -> None:
        """One line per span: calls and ms per `label`, and the share of the wall time."""
        if not turns:
            return
        each = wall / turns * 1000
        print(f"  where a {label}'s time goes ({turns} {label}s, {each:.2f} ms of wall each):")
        print(f"    {'span':<26} {'calls/' + label:>12} {'ms/' + label:>10} {'share':>7}")
        for span in sorted(self.seconds, key=lambda s: -self.seconds[s]):
            share = self.seconds[span] / wall * 100 if wall else 0.0
            print(
                f"    {span:<26} {self.calls[span] / turns:>12.2f}"
                f" {self.seconds[span] / turns * 1000:>10.2f} {share:>6.0f}%"
            )
