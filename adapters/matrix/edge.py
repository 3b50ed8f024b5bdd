"""The Matrix edge's lifecycle: log the bot account in (keeping its device), open the
device's store, sync once for the rooms' state, register the notifier, then sync as a task
owned by the `running` block, inside Lore's event loop. The block ends with the handlers
still running cancelled (their events come again at the next start) and the client closed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import nio
from nio.store import SqliteStore

from adapters.matrix.config import PLATFORM, STORE_FILE, MatrixConfig
from adapters.matrix.context import EdgeContext
from adapters.matrix.dispatch import Dispatcher
from adapters.matrix.markers import Markers
from adapters.matrix.notifier import MatrixNotifier
from adapters.matrix.outbox import Outbox
from adapters.matrix.rooms import DirectRooms
from adapters.matrix.session import log_in
from adapters.matrix.sync import SyncLoop
from bot.dedupe import EventDeduper, EventLedger
from bot.edge import RunningEdge
from bot.service import Bot

__all__ = ["MatrixEdge", "RunningMatrix"]

logger = logging.getLogger(__name__)


@dataclass
class RunningMatrix(RunningEdge):
    """The running Matrix edge and what its handlers share."""

    edge: EdgeContext | None = None
    sync: SyncLoop | None = None

    async def settled(self) -> None:
        """Wait until every event handled so far is handled to the end."""
        if self.sync is not None:
            await self.sync.settled()


def _client(config: MatrixConfig) -> nio.AsyncClient:
    settings = nio.AsyncClientConfig(
        store=SqliteStore,
        store_name=STORE_FILE,
        store_sync_tokens=False,  # stored by the sync loop once its events are handled
        encryption_enabled=True,
        request_timeout=config.connect_timeout,
    )
    return nio.AsyncClient(
        config.homeserver.rstrip("/"),
        config.user_id,
        store_path=str(config.data_dir),
        config=settings,
    )


class MatrixEdge:
    """Matrix through matrix-nio: long-polling sync for events, the client API for the rest."""

    platform = PLATFORM

    def __init__(self, config: MatrixConfig, ledger: EventLedger) -> None:
        self._config = config
        self._ledger = ledger

    @contextlib.asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningMatrix]:
        """Log in, sync, and serve until the block ends."""
        config = self._config
        client = _client(config)
        try:
            await log_in(client, config)
            edge = EdgeContext(
                bot,
                config,
                EventDeduper(self._ledger),
                client,
                Outbox(client),
                Markers(config.store_path),
            )
            sync = SyncLoop(client, Dispatcher(edge), config.sync_timeout_ms)
            await sync.first()
            bot.register_notifier(PLATFORM, MatrixNotifier(edge, DirectRooms(client, sync.synced)))
            task = asyncio.create_task(sync.run(), name="matrix-sync")
            logger.info("Matrix edge running as %s on %s", client.user_id, config.homeserver)
            try:
                yield RunningMatrix("matrix", edge=edge, sync=sync)
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                await sync.stop()
        finally:
            await client.close()
            if client.store is not None:
                client.store.database.close()
        logger.info("Matrix edge stopped")
