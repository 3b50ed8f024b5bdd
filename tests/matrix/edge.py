"""The real core with the Matrix edge on the session's homeserver, and the people of a test
(a bot account, an owner, members, a stranger), each registered afresh."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any

from adapters.matrix import MatrixConfig, MatrixEdge, RunningMatrix
from bot.app import Lore, open_lore
from bot.events import Identity
from bot.settings import Settings
from storage.processed_events import ProcessedEvents
from tests.conftest import SettingsFactory
from tests.matrix.homeserver import Account, Homeserver
from tests.matrix.members import Member

__all__ = [
    "Cast",
    "admit",
    "cast_of",
    "edge_config",
    "edge_on",
    "identity",
    "matrix_edge",
    "matrix_scene",
    "members",
    "until_handled",
]

LOOPBACK = IPv4Address("127.0.0.1")


@dataclass(frozen=True)
class Cast:
    """The accounts of one test: the bot, its owner, two members and a stranger."""

    bot: Account
    owner: Account
    alice: Account
    bob: Account
    stranger: Account

    def settings(self, make_settings: SettingsFactory, **overrides: Any) -> Settings:
        """Settings whose owners are this owner (on Matrix) and the terminal's owner."""
        return make_settings(owners=f"matrix:{self.owner.user_id},console:owner", **overrides)


def cast_of(homeserver: Homeserver) -> Cast:
    """Fresh accounts for one test (about 0.05 s each)."""
    return Cast(*(homeserver.register(name) for name in ("lore", "owner", "alice", "bob", "sam")))


def identity(account: Account, name: str = "") -> Identity:
    return Identity("matrix", account.user_id, name or account.localpart)


async def admit(lore: Lore, cast: Cast, *accounts: Account) -> None:
    """Make `accounts` members, each with an invite code of the cast's owner."""
    for account in accounts:
        code = await lore.bot.create_invite(identity(cast.owner))
        await lore.bot.redeem_invite(identity(account), code.code)


def edge_config(
    settings: Settings, server: Homeserver, cast: Cast, **overrides: Any
) -> MatrixConfig:
    """The Matrix edge's settings for the cast's bot, with short waits for tests."""
    values: dict[str, Any] = {
        "homeserver": server.url,
        "user_id": cast.bot.user_id,
        "data_dir": settings.data_dir,
        "max_file_bytes": settings.max_file_bytes,
        "access_token": cast.bot.access_token,
        "owner_ids": frozenset({cast.owner.user_id}),
        "stream_interval": 0.5,
        "key_wait": 3.0,
        "stranger_grace": 1.0,
        **overrides,
    }
    return MatrixConfig(**values)


def edge_on(lore: Lore, config: MatrixConfig) -> AbstractAsyncContextManager[RunningMatrix]:
    """The Matrix edge running on `lore`'s core."""
    return MatrixEdge(config, ProcessedEvents(lore.database, "matrix")).running(lore.bot)


@asynccontextmanager
async def matrix_edge(
    settings: Settings, server: Homeserver, cast: Cast, **overrides: Any
) -> AsyncIterator[tuple[Lore, RunningMatrix]]:
    """The real core plus the Matrix edge logged in as the cast's bot."""
    config = edge_config(settings, server, cast, **overrides)
    async with (
        open_lore(settings, fetch_allowed_addresses=frozenset({LOOPBACK})) as lore,
        edge_on(lore, config) as running,
    ):
        yield lore, running


@asynccontextmanager
async def matrix_scene(
    settings: Settings, server: Homeserver, cast: Cast, *accounts: Account, **overrides: Any
) -> AsyncIterator[tuple[Lore, RunningMatrix, list[Member]]]:
    """`matrix_edge` plus syncing clients for `accounts`, who start while the core opens
    (both are mostly waiting)."""
    async with AsyncExitStack() as stack:
        people = [Member(server, account) for account in accounts]
        for person in people:
            stack.push_async_exit(person)
        starting = asyncio.gather(*(person.__aenter__() for person in people))
        try:
            lore, running = await stack.enter_async_context(
                matrix_edge(settings, server, cast, **overrides)
            )
        finally:
            await starting
        yield lore, running, people


@asynccontextmanager
async def members(homeserver: Homeserver, *accounts: Account) -> AsyncIterator[list[Member]]:
    """Syncing nio clients for `accounts`, started side by side."""
    async with AsyncExitStack() as stack:
        people = [Member(homeserver, account) for account in accounts]
        for person in people:
            stack.push_async_exit(person)
        await asyncio.gather(*(person.__aenter__() for person in people))
        yield people


async def until_handled(
    lore: Lore, running: RunningMatrix, event_id: str, within: float = 30.0
) -> None:
    """Wait until the bot has handled one of a member's events to the end (what it did is
    not always a message: a rating is a row), sync after sync."""
    sync = running.sync
    assert sync is not None

    async def handled() -> bool:
        return bool(
            await lore.database.fetch_value(
                "SELECT handled_at FROM processed_events WHERE platform = 'matrix'"
                " AND event_id = ?",
                (event_id,),
            )
        )

    async with asyncio.timeout(within):
        while True:
            seen = sync.syncs
            await running.settled()
            if await handled():
                return
            await sync.sync_after(seen)
