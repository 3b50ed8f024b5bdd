"""The sync loop: what the homeserver has for the bot, in order, handled at least once.

The first sync after a start asks for the rooms' full state (nio keeps no room state across
restarts) from the sync token the device stored. Without a stored token (a new device) the
rooms' past messages are not answered: only what arrives from then on is. After each sync
the end-to-end housekeeping runs as nio's own loop does it (one-time keys uploaded, device
lists queried, keys claimed, to-device messages sent).

A sync's token is stored only once every event it brought has been handled to the end, so
a process that dies mid-answer is given the same events again at its next start; the
`EventDeduper` answers each of them once (also a copy of one that was already answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Any

import nio

from adapters.matrix.dispatch import Dispatcher
from bot.errors import StartupError

__all__ = ["SyncLoop"]

logger = logging.getLogger(__name__)

FILTER = {"room": {"timeline": {"limit": 50}}, "presence": {"types": []}}
RETRY_SECONDS = 5.0


class SyncLoop:
    """Syncs one logged-in client and hands each response to the dispatcher."""

    def __init__(self, client: nio.AsyncClient, dispatcher: Dispatcher, timeout_ms: int) -> None:
        self._client = client
        self._dispatcher = dispatcher
        self._timeout_ms = timeout_ms
        self._pending: deque[tuple[str, list[asyncio.Task[None]]]] = deque()
        self.tasks: set[asyncio.Task[None]] = set()  # handlers of events
        self._settling: set[asyncio.Task[None]] = set()  # decisions on strangers' rooms
        self.synced = asyncio.Condition()  # notified after each sync is dispatched
        self.syncs = 0

    async def first(self) -> None:
        """The first sync: full room state from the stored token (or none)."""
        store = self._client.store
        token = await asyncio.to_thread(store.load_sync_token) if store is not None else None
        response = await self._client.sync(
            timeout=0, sync_filter=FILTER, since=token or None, full_state=True
        )
        if not isinstance(response, nio.SyncResponse):
            raise StartupError(f"The Matrix homeserver refused the first sync: {response}")
        await self._handled(response, backlog=not token)
        logger.info(
            "Matrix: synced %d rooms (%s)",
            len(self._client.rooms),
            "resumed" if token else "first start: earlier messages left unanswered",
        )

    async def run(self) -> None:
        """Sync until cancelled; a failed sync is retried after a pause."""
        while True:
            await self._housekeeping()
            response = await self._client.sync(timeout=self._timeout_ms, sync_filter=FILTER)
            if isinstance(response, nio.SyncResponse):
                await self._handled(response, backlog=False)
            else:
                logger.warning("Matrix sync failed: %s", response)
                await asyncio.sleep(RETRY_SECONDS)

    async def _housekeeping(self) -> None:
        client = self._client
        requests: list[Any] = [client.send_to_device_messages()]
        if client.should_upload_keys:
            requests.append(client.keys_upload())
        if client.should_query_keys:
            requests.append(client.keys_query())
        if client.should_claim_keys:
            requests.append(client.keys_claim(client.get_users_for_key_claiming()))
        for response in await asyncio.gather(*requests, return_exceptions=True):
            if isinstance(response, BaseException):
                logger.warning("Matrix key maintenance failed: %s", type(response).__name__)

    async def _handled(self, response: Any, *, backlog: bool) -> None:
        tasks = self._dispatcher.dispatch(response, backlog=backlog)
        for task in tasks:
            self.tasks.add(task)
            task.add_done_callback(self._done)
        self._pending.append((str(response.next_batch), tasks))
        probation = self._dispatcher.invites.on_probation(response.rooms.join)
        if probation:
            settle = asyncio.create_task(self._settle(probation))
            self._settling.add(settle)
            settle.add_done_callback(self._settling.discard)
        self._store_token()
        self.syncs += 1
        async with self.synced:
            self.synced.notify_all()

    async def _settle(self, room_ids: list[str]) -> None:
        """Decide on rooms a stranger invited Lore to once what they wrote there is handled,
        also a message that waited for its key (a newcomer's encrypted `!start CODE`)."""
        await self.settled()  # every handler, also of an earlier sync still answering there
        for room_id in room_ids:
            while self._dispatcher.waiting_in(room_id):
                await self.sync_after(self.syncs)
                await self.settled()
            await self._dispatcher.invites.settle(room_id)

    async def sync_after(self, seen: int) -> None:
        """Wait until a sync after the `seen`-th has been dispatched."""

        def newer() -> bool:
            return self.syncs > seen

        async with self.synced:
            await self.synced.wait_for(newer)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("Matrix handler failed", exc_info=task.exception())
        self._store_token()

    def _store_token(self) -> None:
        """Store the newest token whose events (and all before) are handled."""
        token = None
        while self._pending and all(task.done() for task in self._pending[0][1]):
            token = self._pending.popleft()[0]
        store = self._client.store
        if token is not None and store is not None:
            store.save_sync_token(token)

    async def settled(self) -> None:
        """Wait until no handler is running."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def decided(self) -> None:
        """Wait until every stranger's room seen so far was decided on (stayed or left)."""
        while self._settling:
            await asyncio.gather(*list(self._settling), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel the handlers still running (their events come again at the next start)."""
        running = [*self.tasks, *self._settling]
        for task in running:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*running, return_exceptions=True)
