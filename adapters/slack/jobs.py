"""Work that Slack was already told about: every event, command and tap is acknowledged at
once (Slack's three-second rule) and done after, as a task owned here. On stop, work in
flight gets a short grace period and is then cancelled; an event cancelled that way counts
as unhandled, so Slack's redelivery (if any) is handled again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

__all__ = ["Jobs"]

logger = logging.getLogger(__name__)


class Jobs:
    """The tasks of one running Slack edge."""

    def __init__(self, *, grace: float) -> None:
        self._grace = grace
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False

    def start(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run `work` beside the event loop's other work."""
        if self._closing:
            work.close()
            logger.info("Slack %s arrived while stopping; left for redelivery", name)
            return
        task = asyncio.get_running_loop().create_task(self._run(work, name), name=f"slack-{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _run(work: Coroutine[Any, Any, None], name: str) -> None:
        try:
            await work
        except Exception:  # handlers answer people themselves; this only keeps a record
            logger.exception("Slack %s failed", name)

    @property
    def running(self) -> int:
        """Work in flight."""
        return len(self._tasks)

    async def close(self) -> None:
        """Let work in flight finish for a moment, then cancel what is left."""
        self._closing = True
        if not self._tasks:
            return
        _, pending = await asyncio.wait(set(self._tasks), timeout=self._grace)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
