"""`lore run`: every configured edge and the scheduler in one `AsyncExitStack`, in one event
loop; approval recovery, signal handling and shutdown are written once, here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack

from bot.app.core import Lore
from bot.app.edge_failures import edge_start_error
from bot.control.server import ControlServer
from bot.edge import Edge, RunningEdge
from scheduler.runner import Scheduler

__all__ = ["run_edges"]

logger = logging.getLogger(__name__)


async def _first_finished(running: Sequence[RunningEdge], stop: asyncio.Event) -> None:
    """Wait until Lore is asked to stop, or an edge ends on its own (the terminal closed)."""
    waits = [asyncio.create_task(stop.wait())]
    waits += [asyncio.create_task(edge.finished.wait()) for edge in running]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
        await asyncio.gather(*waits, return_exceptions=True)


async def _started(stack: AsyncExitStack, lore: Lore, edge: Edge) -> RunningEdge:
    """Enter one edge on `stack`; a failure to start becomes an `EdgeStartError` naming the
    edge and the setting to change (the stack stops the edges already started)."""
    try:
        return await stack.enter_async_context(edge.running(lore.bot))
    except Exception as exc:
        raise edge_start_error(lore.settings, edge.platform, exc) from exc


async def run_edges(
    lore: Lore,
    edges: Sequence[Edge],
    *,
    announce: Callable[[str], None],
    with_scheduler: bool = True,
) -> None:
    """Start every edge, recover waiting approvals, run the jobs, and stop everything on
    SIGINT/SIGTERM or when an edge ends by itself (the terminal's input ran out)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        # CLI commands (`lore ingest`, `lore health`, ...) reach this bot through the socket.
        await stack.enter_async_context(ControlServer(lore.bot, lore.settings.data_dir))
        for signal_number in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signal_number, stop.set)
                stack.callback(loop.remove_signal_handler, signal_number)
        running = [await _started(stack, lore, edge) for edge in edges]
        recovered = await lore.bot.maintenance.recover_approvals()
        if recovered:
            logger.info("Recovered %d waiting approval requests", recovered)
        if with_scheduler:
            await stack.enter_async_context(Scheduler(lore.bot))
        platforms = [edge.name for edge in running if edge.name != "terminal"]
        if platforms:
            announce(f"Lore is running on {', '.join(platforms)}. Stop with Ctrl-C.")
        await _first_finished(running, stop)
    logger.info("Lore stopped")
