"""Per-thread locks: a checkpoint thread runs one turn (or one resume) at a time."""

from __future__ import annotations

import asyncio
import weakref

__all__ = ["ThreadLocks"]


class ThreadLocks:
    """One lock per checkpoint thread while anyone uses it (checkpoints are per thread);
    unused locks are dropped (weak values)."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    def __call__(self, thread_id: str) -> asyncio.Lock:
        lock = self._locks.get(thread_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[thread_id] = lock
        return lock
