"""Discord edge overhead: Lore's Discord edge next to a bare discord.py echo bot, both on the same
kind of fake Discord (tests.fakes.discord_server: REST and a WebSocket gateway) in one run.

Lore answers with the offline model over a one-note knowledge base; the echo bot sends the
message's text back. Reported per bot:

- time to first visible text: from dispatching a MESSAGE_CREATE at the fake's gateway to the
  first message the bot posts in that DM, p50/p95 over sequential messages;
- messages/s: `--messages` questions dispatched at once from `--members` DMs, until every
  final answer has arrived;
- the ratios Lore/echo (latency) and echo/Lore (throughput).

    .venv/bin/python -m benchmarks.discord [--messages 200] [--members 50] [--sequential 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord import DiscordConfig, DiscordEdge
from bot.app import open_lore
from bot.events import Identity
from bot.settings import load_settings
from bot.sources import Source
from storage.processed_events import ProcessedEvents
from tests.fakes.discord_payloads import DcUser
from tests.fakes.discord_server import FakeDiscord

__all__ = ["main"]

QUESTION = "When does the office open?"
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."


def _members(count: int) -> list[DcUser]:
    return [DcUser(10_000 + n, f"Member {n}") for n in range(count)]


async def _first_text(fake: FakeDiscord, channel_id: int, after: int) -> float:
    def first() -> float | None:
        return next((p.at for p in fake.posts[after:] if p.channel_id == channel_id), None)

    await fake.wait_until(lambda: first() is not None)
    at = first()
    assert at is not None
    return at


async def _measure(
    fake: FakeDiscord,
    members: list[DcUser],
    sequential: int,
    messages: int,
    finals: Callable[[FakeDiscord], int],
) -> tuple[list[float], float]:
    latencies = []
    for n in range(sequential):
        member = members[n % len(members)]
        mark, done = len(fake.posts), finals(fake)
        dispatched = time.monotonic()
        fake.dispatch("MESSAGE_CREATE", fake.dm(member, QUESTION))
        at = await _first_text(fake, fake.dm_channel(member), mark)
        latencies.append((at - dispatched) * 1000)
        await fake.wait_until(lambda done=done: finals(fake) > done, within=60)
    start, done = time.monotonic(), finals(fake)
    for n in range(messages):
        fake.dispatch("MESSAGE_CREATE", fake.dm(members[n % len(members)], QUESTION))
    await fake.wait_until(lambda: finals(fake) >= done + messages, within=600)
    return latencies, messages / (time.monotonic() - start)


def _lore_finals(fake: FakeDiscord) -> int:
    return sum(1 for post in fake.posts if "👍" in dict(post.buttons()))


def _echo_finals(fake: FakeDiscord) -> int:
    return sum(1 for post in fake.posts if not post.edit)


class _Echo(discord.Client):
    async def on_message(self, message: discord.Message) -> None:
        if not message.author.bot:
            await message.channel.send(message.content)


@asynccontextmanager
async def _echo_bot(fake: FakeDiscord) -> AsyncIterator[None]:
    intents = discord.Intents.none()
    intents.dm_messages = intents.message_content = intents.guilds = True
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = fake.api_url, yarl.URL(fake.gateway_url)
    client = _Echo(intents=intents, guild_ready_timeout=0.05)
    try:
        async with client:
            await client.login(fake.token)
            connection = asyncio.create_task(client.connect())
            await client.wait_until_ready()
            try:
                yield
            finally:
                await client.close()
                await asyncio.gather(connection, return_exceptions=True)
    finally:
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


def _row(name: str, latencies: list[float], rate: float) -> None:
    q = statistics.quantiles(latencies, n=20) if len(latencies) > 1 else latencies * 19
    print(
        f"{name:<6} first text p50 {statistics.median(latencies):7.1f} ms  p95 {q[18]:7.1f} ms"
        f"   {rate:7.1f} messages/s"
    )


async def run(messages: int, members_count: int, sequential: int) -> None:
    members = _members(members_count)
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
    async with FakeDiscord() as fake, _echo_bot(fake):
        echo_latency, echo_rate = await _measure(fake, members, sequential, messages, _echo_finals)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None, data_dir=Path(tmp) / "data", sample_docs_dir="", owners="discord:1"
        )
        async with open_lore(settings) as lore, FakeDiscord() as fake:
            await lore.bot.maintenance.load_shared(Source(text=OFFICE, title="Office hours"))
            owner = Identity("discord", "1", "Owner")
            for member in members:
                invite = await lore.bot.create_invite(owner)
                who = Identity("discord", str(member.id), member.name)
                await lore.bot.redeem_invite(who, invite.code)
            config = DiscordConfig(
                token=fake.token,
                api_url=fake.api_url,
                max_file_bytes=settings.max_file_bytes,
                owner_ids=frozenset({"1"}),
                guild_ready_timeout=0.05,
            )
            edge = DiscordEdge(config, ProcessedEvents(lore.database, "discord"))
            async with edge.running(lore.bot):
                lore_latency, lore_rate = await _measure(
                    fake, members, sequential, messages, _lore_finals
                )
    print(f"{messages} messages from {members_count} DMs; {sequential} sequential for latency")
    _row("echo", echo_latency, echo_rate)
    _row("lore", lore_latency, lore_rate)
    slower = statistics.median(lore_latency) / statistics.median(echo_latency)
    print(
        f"ratio  first text lore/echo {slower:.1f}x"
        f"   throughput echo/lore {echo_rate / lore_rate:.1f}x"
    )


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--sequential", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(run(args.messages, args.members, args.sequential))


if __name__ == "__main__":
    main()
