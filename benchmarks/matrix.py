"""Matrix edge overhead: Lore's Matrix edge next to a bare matrix-nio echo bot, both on the
same real Synapse homeserver (tests.matrix.homeserver: started from .venv-synapse/, which
`make test` or `make synapse` installs) in one run, with real nio clients as the members.

Lore answers with the offline model over a one-note knowledge base; the echo bot sends the
message's text back. Reported per bot:

- first text: from a member sending a message in a direct chat to that member's client
  seeing the bot's first message (Lore's preview, the echo's copy), p50/p95, one message at
  a time (`--sequential`) and with every member writing at once (`--members`, each
  `--each` messages);
- answers/s: the concurrent messages over the time until the last final answer arrived;
- the ratios Lore/echo (first text) and echo/Lore (throughput).

    .venv/bin/python -m benchmarks.matrix [--sequential 20] [--members 20] [--each 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import nio

from adapters.matrix import MatrixConfig, MatrixEdge
from bot.app import open_lore
from bot.events import Identity
from bot.settings import load_settings
from bot.sources import Source
from storage.processed_events import ProcessedEvents
from tests.matrix.homeserver import SYNAPSE_PYTHON, Account, Homeserver, running_homeserver
from tests.matrix.members import Member

__all__ = ["main"]

QUESTION = "When does the office open?"
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."


@asynccontextmanager
async def _echo_bot(homeserver: Homeserver, account: Account) -> AsyncIterator[None]:
    """The smallest nio bot: joins every invite, sends every text message back."""
    client = nio.AsyncClient(homeserver.url, account.user_id)
    client.restore_login(account.user_id, account.device_id, account.access_token)
    me = account.user_id

    async def echo(room: Any, event: Any) -> None:
        if event.sender != me:
            await client.room_send(
                room.room_id, "m.room.message", {"msgtype": "m.text", "body": event.body}
            )

    async def join(room: Any, event: Any) -> None:
        if event.state_key == me and event.membership == "invite":
            await client.join(room.room_id)

    await client.sync(timeout=0)
    client.add_event_callback(echo, nio.RoomMessageText)
    client.add_event_callback(join, nio.InviteMemberEvent)
    task = asyncio.create_task(client.sync_forever(timeout=30_000))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await client.close()


class _Run:
    """The members' direct chats with one bot, and what they saw of it."""

    def __init__(self, people: list[Member], bot: str, final: Callable[[str], bool]) -> None:
        self.people = people
        self.bot = bot
        self.final = final
        self.rooms: dict[str, str] = {}

    async def open(self) -> None:
        for person in self.people:
            room = await person.direct_chat(self.bot)
            await person.joined(room, self.bot)
            self.rooms[person.user_id] = room

    def _seen(self, person: Member) -> int:
        return len(person.said(self.rooms[person.user_id], self.bot))

    def _finals(self, person: Member) -> int:
        said = person.said(self.rooms[person.user_id], self.bot)
        return sum(1 for message in said if self.final(message.body))

    async def ask(self, person: Member) -> float:
        """One question; milliseconds until the first text, after waiting for its final."""
        seen, finals = self._seen(person), self._finals(person)
        started = time.monotonic()
        await person.say(self.rooms[person.user_id], QUESTION)
        await person.wait_until(lambda: self._seen(person) > seen, within=120)
        first = (time.monotonic() - started) * 1000
        await person.wait_until(lambda: self._finals(person) > finals, within=300)
        return first

    async def sequential(self, count: int) -> list[float]:
        return [await self.ask(self.people[n % len(self.people)]) for n in range(count)]

    async def concurrent(self, each: int) -> tuple[list[float], float]:
        async def one(person: Member) -> list[float]:
            return [await self.ask(person) for _ in range(each)]

        started = time.monotonic()
        results = await asyncio.gather(*(one(person) for person in self.people))
        elapsed = time.monotonic() - started
        return [ms for result in results for ms in result], len(self.people) * each / elapsed


def _quantiles(values: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(values, n=20) if len(values) > 1 else values * 19
    return statistics.median(values), cuts[18]


def _row(name: str, sequential: list[float], concurrent: list[float], rate: float) -> None:
    s50, s95 = _quantiles(sequential)
    c50, c95 = _quantiles(concurrent)
    print(
        f"| {name} | {s50:.0f} | {s95:.0f} | {c50:.0f} | {c95:.0f} | {rate:.2f} |",
    )


async def _lore(
    homeserver: Homeserver, bot: Account, owner: Account, people: list[Member], folder: Path
) -> tuple[list[float], list[float], float]:
    settings = load_settings(
        _env_file=None,
        data_dir=folder / "data",
        sample_docs_dir="",
        owners=f"matrix:{owner.user_id}",
        log_level="WARNING",
    )
    async with open_lore(settings) as lore:
        await lore.bot.maintenance.load_shared(Source(text=OFFICE, title="Office hours"))
        admin = Identity("matrix", owner.user_id, "Owner")
        for person in people:
            code = await lore.bot.create_invite(admin)
            await lore.bot.redeem_invite(Identity("matrix", person.user_id, "M"), code.code)
        config = MatrixConfig(
            homeserver=homeserver.url,
            user_id=bot.user_id,
            data_dir=settings.data_dir,
            max_file_bytes=settings.max_file_bytes,
            access_token=bot.access_token,
            owner_ids=frozenset({owner.user_id}),
        )
        edge = MatrixEdge(config, ProcessedEvents(lore.database, "matrix"))
        async with edge.running(lore.bot):
            run = _Run(people, bot.user_id, lambda body: "Sources" in body)
            await run.open()
            return await _measure(run)


async def _measure(run: _Run) -> tuple[list[float], list[float], float]:
    sequential = await run.sequential(ARGS.sequential)
    concurrent, rate = await run.concurrent(ARGS.each)
    return sequential, concurrent, rate


async def run(folder: Path) -> None:
    with running_homeserver(folder / "synapse") as homeserver:
        echo, lore_bot, owner = (homeserver.register(name) for name in ("echo", "lore", "owner"))
        accounts = [homeserver.register("member") for _ in range(ARGS.members)]
        async with AsyncExitStack() as stack:
            people = [
                await stack.enter_async_context(Member(homeserver, account)) for account in accounts
            ]
            async with _echo_bot(homeserver, echo):
                echo_run = _Run(people, echo.user_id, lambda body: body == QUESTION)
                await echo_run.open()
                echo_results = await _measure(echo_run)
            lore_results = await _lore(homeserver, lore_bot, owner, people, folder)
    print(
        f"Synapse on 127.0.0.1, direct chats (unencrypted); {ARGS.sequential} questions one at "
        f"a time, then {ARGS.members} members writing at once, {ARGS.each} each"
    )
    print(
        "| bot | first text p50 ms (one at a time) | p95 | first text p50 ms "
        f"({ARGS.members} at once) | p95 | answers/s ({ARGS.members} at once) |"
    )
    print("|---|---|---|---|---|---|")
    _row("echo (bare nio)", *echo_results)
    _row("Lore", *lore_results)
    slower = statistics.median(lore_results[0]) / statistics.median(echo_results[0])
    crowded = statistics.median(lore_results[1]) / statistics.median(echo_results[1])
    print(
        f"ratio: first text Lore/echo {slower:.1f}x one at a time, {crowded:.1f}x with "
        f"{ARGS.members} at once; throughput echo/Lore {echo_results[2] / lore_results[2]:.1f}x"
    )


ARGS = argparse.Namespace(sequential=20, members=20, each=2)


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequential", type=int, default=20)
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--each", type=int, default=2)
    parser.parse_args(namespace=ARGS)
    if not SYNAPSE_PYTHON.exists():
        parser.error("Synapse is not installed: run `make synapse` first")
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("nio").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(Path(folder)))


if __name__ == "__main__":
    main()
