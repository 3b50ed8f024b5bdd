"""Slack edge overhead: Lore's Slack edge next to a bare slack-bolt echo app, both in HTTP
mode, both receiving correctly signed Events API requests and both talking to the same
kind of fake Slack Web API (tests.fakes) in one run.

Lore answers with the offline model over a one-note knowledge base; questions are asked at
the top level of direct messages, where Lore posts one message (its "⏳ Searching…" status
first) and edits it into the answer. The echo app replies to each direct message with its
text through Bolt's `say()`. Reported per app:

- time to first visible text: from posting a signed event to the first Web API call that
  shows text in that conversation (a stream, a message or an edit), p50/p95 over
  `--sequential` events sent one at a time; for Lore also the first answer text (the
  first text that is not its status line);
- events/s: `--events` questions from `--members` direct messages posted at once (at most
  `--connections` requests in flight), until every final answer has arrived;
- the ratios Lore/echo (latency) and echo/Lore (throughput).

    .venv/bin/python -m benchmarks.slack [--events 200] [--members 50] [--sequential 20]
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

import httpx
from aiohttp import web
from slack_bolt.async_app import AsyncApp, AsyncSay
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import SlackConfig, SlackEdge
from bot.app import open_lore
from bot.events import Identity
from bot.settings import load_settings
from bot.sources import Source
from storage.processed_events import ProcessedEvents
from tests.fakes.slack_requests import SlackSender, SlackUser
from tests.fakes.slack_server import FakeSlack, SlackCall

__all__ = ["main"]

QUESTION = "When does the office open?"
OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
SECRET = "benchmark-signing-secret"  # noqa: S105 - a benchmark's own secret
TEXT_METHODS = {"chat.startStream", "chat.postMessage", "chat.update"}
Finals = Callable[[FakeSlack], int]


def _members(count: int) -> list[SlackUser]:
    return [SlackUser(f"U0M{n:05d}", f"Member {n}") for n in range(count)]


async def _first_text(fake: FakeSlack, channel: str, after: int, *, answer: bool = False) -> float:
    def text(call: SlackCall) -> bool:
        shown = call.channel == channel and call.method in TEXT_METHODS
        return shown and not (answer and call.text.startswith("⏳"))

    await fake.wait_until(lambda: any(text(call) for call in fake.calls[after:]), within=60)
    return next(call.at for call in fake.calls[after:] if text(call))


async def _measure(
    fake: FakeSlack,
    send: SlackSender,
    members: list[SlackUser],
    counts: tuple[int, int, int],
    finals: Finals,
) -> tuple[list[float], list[float], float]:
    sequential, events, connections = counts
    latencies, answers = [], []
    for n in range(sequential):
        member = members[n % len(members)]
        channel = fake.dm(member.id)
        mark, done = len(fake.calls), finals(fake)
        posted = time.monotonic()
        await send.event(send.dm_message(member, QUESTION))
        latencies.append((await _first_text(fake, channel, mark) - posted) * 1000)
        answers.append((await _first_text(fake, channel, mark, answer=True) - posted) * 1000)
        await fake.wait_until(lambda done=done: finals(fake) > done, within=60)
    gate = asyncio.Semaphore(connections)

    async def one(n: int) -> None:
        async with gate:
            await send.event(send.dm_message(members[n % len(members)], QUESTION))

    start, done = time.monotonic(), finals(fake)
    await asyncio.gather(*(one(n) for n in range(events)))
    await fake.wait_until(lambda: finals(fake) >= done + events, within=600)
    return latencies, answers, events / (time.monotonic() - start)


def _lore_finals(fake: FakeSlack) -> int:
    return sum(1 for c in fake.of("chat.update") if "*Sources*" in c.text)


def _echo_finals(fake: FakeSlack) -> int:
    return len(fake.of("chat.postMessage"))


@asynccontextmanager
async def _echo_app(fake: FakeSlack) -> AsyncIterator[SlackSender]:
    """The bare Bolt app: Bolt's own aiohttp adapter, default settings, `say()` back."""
    client = AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)
    app = AsyncApp(client=client, signing_secret=SECRET, name="echo")

    @app.event("message")
    async def echo(event: dict[str, object], say: AsyncSay) -> None:
        await say(text=str(event.get("text", "")))

    runner = web.AppRunner(app.web_app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = next(a[1] for a in runner.addresses if isinstance(a, tuple))
    try:
        yield SlackSender(fake, SECRET, f"http://127.0.0.1:{port}/slack/events")
    finally:
        await runner.cleanup()


@asynccontextmanager
async def _lore_app(
    fake: FakeSlack, members: list[SlackUser], tmp: str
) -> AsyncIterator[SlackSender]:
    settings = load_settings(
        _env_file=None, data_dir=Path(tmp) / "data", sample_docs_dir="", owners="slack:U0OWNER"
    )
    async with open_lore(settings) as lore:
        await lore.bot.maintenance.load_shared(Source(text=OFFICE, title="Office hours"))
        owner = Identity("slack", "U0OWNER", "Owner")
        for member in members:
            fake.add_user(member.id, member.name)
            invite = await lore.bot.create_invite(owner)
            await lore.bot.redeem_invite(Identity("slack", member.id, member.name), invite.code)
        config = SlackConfig(
            bot_token=fake.bot_token,
            max_file_bytes=settings.max_file_bytes,
            signing_secret=SECRET,
            port=0,
            api_url=fake.api_url,
        )
        edge = SlackEdge(config, ProcessedEvents(lore.database, "slack"))
        async with edge.running(lore.bot) as running:
            port = running.http.port if running.http is not None else 0
            yield SlackSender(fake, SECRET, f"http://127.0.0.1:{port}/slack/events")


def _row(name: str, latencies: list[float], answers: list[float], rate: float) -> None:
    q = statistics.quantiles(latencies, n=20) if len(latencies) > 1 else latencies * 19
    print(
        f"{name:<6} first text p50 {statistics.median(latencies):7.1f} ms  p95 {q[18]:7.1f} ms"
        f"   answer text p50 {statistics.median(answers):7.1f} ms   {rate:7.1f} events/s"
    )


async def run(events: int, members_count: int, sequential: int, connections: int) -> None:
    members = _members(members_count)
    counts = (sequential, events, connections)
    limits = httpx.Limits(max_connections=connections)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        async with FakeSlack() as fake, _echo_app(fake) as send:
            send.client = client
            echo = await _measure(fake, send, members, counts, _echo_finals)
        with tempfile.TemporaryDirectory() as tmp:
            async with FakeSlack() as fake, _lore_app(fake, members, tmp) as send:
                send.client = client
                lore = await _measure(fake, send, members, counts, _lore_finals)
    print(f"{events} events from {members_count} direct messages, {connections} connections")
    _row("echo", *echo)
    _row("lore", *lore)
    slower = statistics.median(lore[0]) / statistics.median(echo[0])
    answer = statistics.median(lore[1]) / statistics.median(echo[1])
    print(
        f"ratio  first text lore/echo {slower:.1f}x   answer text lore/echo {answer:.1f}x"
        f"   throughput echo/lore {echo[2] / lore[2]:.1f}x"
    )


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--sequential", type=int, default=20)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args()
    asyncio.run(run(args.events, args.members, args.sequential, args.connections))


if __name__ == "__main__":
    main()
