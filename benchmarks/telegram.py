"""Telegram edge overhead: Lore's Telegram edge next to a bare python-telegram-bot echo bot,
both long-polling the same kind of fake Bot API server (tests.fakes) in one run.

Lore answers with the offline model (no network, no latency of its own beyond retrieval
over a one-note knowledge base); the echo bot replies with the message text. Both run with
PTB's rate limiter switched off (Telegram's 30 messages/s would otherwise be the only
thing measured) and the same number of concurrent updates. Reported per bot:

- time to first visible text: from queueing an update at the fake to the first call that
  shows text in that chat (a draft, a message, or an edit), p50/p95 over sequential updates;
- updates/s: `--updates` questions queued at once from `--members` private chats, until
  every final answer has arrived, and the process CPU time per update meanwhile (the fake
  server included, for both bots; far less disturbed by a busy machine than wall time);
- the ratios Lore/echo (latency) and echo/Lore (throughput);
- Lore's Bot API calls per update, by method; with `--spans`, where an update's time goes
  (benchmarks/spans.py: checkpoints, searches, embeddings, SQLite, guards, Bot API calls).

Every update asks a different question (phrasings x topics x a number), so no cache of
query embeddings or answers can make Lore look faster than it is for real traffic.

    .venv/bin/python -m benchmarks.telegram [--updates 200] [--members 50] [--sequential 20]
                                            [--spans]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from pathlib import Path

from telegram import Update
from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

from adapters.telegram import TelegramConfig, TelegramEdge
from benchmarks.spans import Spans
from bot.app import open_lore
from bot.events import Identity
from bot.settings import load_settings
from bot.sources import Source
from storage.processed_events import ProcessedEvents
from tests.fakes.telegram_server import FakeTelegram, TgUser

__all__ = ["main"]

PHRASINGS = (
    "When does the {topic} open?",
    "What time does the {topic} close?",
    "Is the {topic} open on weekdays?",
    "Can I visit the {topic} at 8 am?",
    "How late can I stay at the {topic}?",
)
TOPICS = ("office", "front desk", "reception", "building", "main office", "second floor")


def question(n: int) -> str:
    """The n-th question: never the same text twice in one run."""
    phrasing = PHRASINGS[n % len(PHRASINGS)]
    topic = TOPICS[(n // len(PHRASINGS)) % len(TOPICS)]
    return phrasing.format(topic=topic) + f" (ticket {n})"


OFFICE = "Office hours: the office opens at 8 am and closes at 6 pm on weekdays."
TEXT_METHODS = {"sendMessageDraft", "sendMessage", "editMessageText"}
CPU_MS: dict[int, float] = {}  # CPU ms per update in the throughput phase, by bot


def _members(count: int) -> list[TgUser]:
    return [TgUser(10_000 + n, f"Member {n}") for n in range(count)]


async def _first_text(fake: FakeTelegram, chat_id: int, after: int) -> float:
    await fake.wait_until(
        lambda: any(c.chat_id == chat_id and c.method in TEXT_METHODS for c in fake.calls[after:])
    )
    return next(
        c.at for c in fake.calls[after:] if c.chat_id == chat_id and c.method in TEXT_METHODS
    )


async def _measure(
    fake: FakeTelegram,
    members: list[TgUser],
    sequential: int,
    updates: int,
    finals: Callable[[FakeTelegram], int],
) -> tuple[list[float], float]:
    latencies = []
    for n in range(sequential):
        member = members[n % len(members)]
        mark, done = len(fake.calls), finals(fake)
        queued = time.monotonic()
        fake.enqueue(fake.message(member, question(n)))
        latencies.append((await _first_text(fake, member.id, mark) - queued) * 1000)
        await fake.wait_until(lambda done=done: finals(fake) > done, within=60)
    start, cpu, done = time.monotonic(), time.process_time(), finals(fake)
    for n in range(updates):
        fake.enqueue(fake.message(members[n % len(members)], question(sequential + n)))
    await fake.wait_until(lambda: finals(fake) >= done + updates, within=600)
    CPU_MS[id(finals)] = (time.process_time() - cpu) / updates * 1000
    return latencies, updates / (time.monotonic() - start)


def _lore_finals(fake: FakeTelegram) -> int:
    return sum(1 for c in fake.calls if c.params.get("parse_mode") == "HTML")


def _echo_finals(fake: FakeTelegram) -> int:
    return len(fake.of("sendMessage"))


@asynccontextmanager
async def _echo_bot(fake: FakeTelegram, concurrency: int) -> AsyncIterator[None]:
    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:  # noqa: ARG001
        if update.message is not None and update.message.text:
            await update.message.reply_text(update.message.text)

    application = (
        ApplicationBuilder()
        .token(fake.token)
        .base_url(fake.base_url)
        .base_file_url(fake.base_file_url)
        .http_version("1.1")
        .get_updates_http_version("1.1")
        .concurrent_updates(concurrency)
        .build()
    )
    application.add_handler(MessageHandler(filters.TEXT, echo))
    async with application:
        await application.start()
        assert application.updater is not None
        await application.updater.start_polling(timeout=1)
        try:
            yield
        finally:
            await application.updater.stop()
            await application.stop()


def _row(name: str, latencies: list[float], rate: float, cpu_ms: float) -> None:
    q = statistics.quantiles(latencies, n=20) if len(latencies) > 1 else latencies * 19
    print(
        f"{name:<6} first text p50 {statistics.median(latencies):7.1f} ms  p95 {q[18]:7.1f} ms"
        f"   {rate:7.1f} updates/s   CPU {cpu_ms:6.2f} ms/update"
    )


def _api_calls(fake: FakeTelegram, updates: int) -> str:
    counts = Counter(c.method for c in fake.calls if c.method != "getUpdates")
    per = ", ".join(f"{method} {n / updates:.2f}" for method, n in counts.most_common())
    return f"{sum(counts.values()) / updates:.2f} ({per})"


async def run(
    updates: int, members_count: int, sequential: int, concurrency: int, spans: bool
) -> None:
    members = _members(members_count)
    async with FakeTelegram() as fake, _echo_bot(fake, concurrency):
        echo_latency, echo_rate = await _measure(fake, members, sequential, updates, _echo_finals)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None, data_dir=Path(tmp) / "data", sample_docs_dir="", owners="telegram:1"
        )
        async with open_lore(settings) as lore, FakeTelegram() as fake:
            await lore.bot.maintenance.load_shared(Source(text=OFFICE, title="Office hours"))
            owner = Identity("telegram", "1", "Owner")
            for member in members:
                invite = await lore.bot.create_invite(owner)
                who = Identity("telegram", str(member.id), member.first_name)
                await lore.bot.redeem_invite(who, invite.code)
            config = TelegramConfig(
                token=fake.token,
                api_root=fake.api_root,
                max_file_bytes=settings.max_file_bytes,
                owner_ids=frozenset({"1"}),
                rate_limit=False,
                concurrent_updates=concurrency,
                poll_timeout=1.0,
            )
            edge = TelegramEdge(config, ProcessedEvents(lore.database, "telegram"))
            async with edge.running(lore.bot):
                mark = len(fake.calls)
                with Spans.installed() if spans else nullcontext() as recorded:
                    started = time.perf_counter()
                    lore_latency, lore_rate = await _measure(
                        fake, members, sequential, updates, _lore_finals
                    )
                    wall = time.perf_counter() - started
                del fake.calls[:mark]
                api_calls = _api_calls(fake, sequential + updates)
    print(f"{updates} updates from {members_count} private chats, concurrency {concurrency}")
    _row("echo", echo_latency, echo_rate, CPU_MS[id(_echo_finals)])
    _row("lore", lore_latency, lore_rate, CPU_MS[id(_lore_finals)])
    slower = statistics.median(lore_latency) / statistics.median(echo_latency)
    print(
        f"ratio  first text lore/echo {slower:.1f}x"
        f"   throughput echo/lore {echo_rate / lore_rate:.1f}x"
    )
    print(f"lore Bot API calls per update: {api_calls}")
    if recorded is not None:
        recorded.print(turns=sequential + updates, wall=wall, label="update")


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--members", type=int, default=50)
    parser.add_argument("--sequential", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--spans", action="store_true", help="print where an update's time goes")
    args = parser.parse_args()
    asyncio.run(run(args.updates, args.members, args.sequential, args.concurrency, args.spans))


if __name__ == "__main__":
    main()
