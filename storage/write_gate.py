"""A gate between writers and snapshots: many writes may run at once, a snapshot waits for
the writes in flight to finish and holds new ones back until it is done.

A "write" here is a multi-step change that spans stores (an ingest: original, SQLite rows,
vectors; a deletion: rows, vectors, original). A snapshot taken inside the gate never holds
half of one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

__all__ = ["WriteGate"]


class WriteGate:
    """Shared `writing()` sections, exclusive `paused()` sections (one event loop)."""

    def __init__(self) -> None:
        self._changed = asyncio.Condition()
        self._writers = 0
        self._paused = False

    @property
    def writers(self) -> int:
        """Writes in flight now."""
        return self._writers

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """One write across stores; waits while a snapshot runs."""
        async with self._changed:
            await self._changed.wait_for(lambda: not self._paused)
            self._writers += 1
        try:
            yield
        finally:
            async with self._changed:
                self._writers -= 1
                self._changed.notify_all()

    @asynccontextmanager
    async def paused(self) -> AsyncIterator[None]:
        """No write in flight inside: waits for the running ones, holds back new ones."""
        async with self._changed:
            await self._changed.wait_for(lambda: not self._paused)
            self._paused = True
            try:
                await self._changed.wait_for(lambda: self._writers == 0)
            except BaseException:
                self._paused = False
                self._changed.notify_all()
                raise
        try:
            yield
        finally:
            async with self._changed:
                self._paused = False
                self._changed.notify_all()
