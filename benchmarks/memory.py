"""Conversation memory: the memory job's throughput next to raw embedding of the same texts.

One run, one temporary DATA_DIR with `--members` invited members and `--turns` answered
turns written straight into `turn_log` over the last 100 minutes (inside the job's 2-hour
window). Each round, side by side on the same texts ("Q: ...\\nA: ..."):

- raw: `Embedder.embed_passages` in the job's batches of 64, nothing else;
- build: `Bot.build_memory(now)` (read the window from SQLite, look up each member's
  timezone, embed, upsert into the embedded Qdrant `memory` collection). Every round after
  the first overwrites the same points (deterministic ids), as overlapping runs do.

Printed: turns per second of each, process CPU seconds, and the ratio build/raw (1.0 means
the job costs no more than its embeddings). The median of `--rounds` rounds is the figure.

    .venv/bin/python -m benchmarks.memory [--turns 1000] [--members 20] [--rounds 3]
                                          [--models-dir PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.app import Lore, open_lore
from bot.memory import BATCH, exchange_text
from bot.settings import load_settings
from storage.ids import UserId, new_turn_id
from storage.turns import TurnOutcome, TurnRecord, TurnRepository
from storage.users import Role, UserRepository

__all__ = ["main"]

TOPICS = (
    ("Where can I park my car?", "There are six parking spaces behind the building."),
    ("What is the guest wifi called?", "It is called Lore-Guest; the password is on the board."),
    ("How do I book a meeting room?", "Use the booking calendar, up to two weeks ahead."),
    ("Who orders toner for the printers?", "The facilities team orders toner every Monday."),
    ("When does the office open?", "The office opens at 8 am and closes at 6 pm on weekdays."),
)


async def _seed(lore: Lore, turns: int, members: int, now: datetime) -> list[str]:
    users: list[UserId] = []
    for number in range(members):
        name = f"member-{number}"
        user = await UserRepository(lore.database).register("console", name, name, Role.MEMBER)
        users.append(user.id)
    repository = TurnRepository(lore.database)
    texts: list[str] = []
    for number in range(turns):
        question, answer = TOPICS[number % len(TOPICS)]
        question = f"{question} (asked {number})"
        user_id = users[number % members]
        await repository.log(
            TurnRecord(
                id=new_turn_id(),
                thread_id=f"console:{user_id}:{user_id}",
                user_id=user_id,
                chat_id=user_id,
                platform="console",
                outcome=TurnOutcome.ANSWERED,
                model="offline-extractive",
                question=question,
                answer=answer,
                created_at=now - timedelta(minutes=100) + timedelta(seconds=number % 6000),
            )
        )
        texts.append(exchange_text(question, answer))
    return texts


async def _raw(lore: Lore, texts: list[str]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), BATCH):
        await lore.embedder.embed_passages(texts[start : start + BATCH])
    return time.perf_counter() - wall, time.process_time() - cpu


async def _build(lore: Lore, now: datetime, turns: int) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    report = await lore.bot.maintenance.build_memory(now)
    if report.points_written != turns:
        raise RuntimeError(f"expected {turns} exchanges, the job wrote {report.points_written}")
    return time.perf_counter() - wall, time.process_time() - cpu


async def run(turns: int, members: int, rounds: int, models_dir: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        overrides: dict[str, object] = {"MODELS_DIR": models_dir} if models_dir else {}
        settings = load_settings(
            _env_file=None, data_dir=Path(tmp) / "data", sample_docs_dir="", **overrides
        )
        async with open_lore(settings) as lore:
            now = datetime.now(UTC)
            texts = await _seed(lore, turns, members, now)
            await lore.embedder.embed_passages(texts[:BATCH])  # warm the model up
            raw: list[tuple[float, float]] = []
            build: list[tuple[float, float]] = []
            for _ in range(rounds):  # interleaved, so drift on a shared machine hits both
                raw.append(await _raw(lore, texts))
                build.append(await _build(lore, now, turns))
    raw_s = statistics.median(wall for wall, _ in raw)
    build_s = statistics.median(wall for wall, _ in build)
    raw_cpu = statistics.median(cpu for _, cpu in raw)
    build_cpu = statistics.median(cpu for _, cpu in build)
    print(f"{turns} turns of {members} members, median of {rounds} rounds")
    print(f"raw embedding   {turns / raw_s:8.1f} turns/s   cpu {raw_cpu:6.2f}s")
    print(f"memory build    {turns / build_s:8.1f} turns/s   cpu {build_cpu:6.2f}s")
    print(
        f"ratio build/raw  time {build_s / raw_s:.2f}   cpu {build_cpu / raw_cpu:.2f}"
        f"   (throughput {raw_s / build_s:.2f} of raw)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="turns in the job's window")
    parser.add_argument("--members", type=int, default=20, help="members the turns belong to")
    parser.add_argument("--rounds", type=int, default=3, help="raw/build rounds; median shown")
    parser.add_argument("--models-dir", default=None, help="an assembled model directory")
    args = parser.parse_args()
    if args.turns < 1 or args.members < 1 or args.rounds < 1:
        parser.error("--turns, --members and --rounds must be at least 1")
    if args.turns > 6000:
        parser.error("keep --turns at most 6000 (one a second inside the 100-minute span)")
    models_dir = Path(args.models_dir) if args.models_dir else None
    asyncio.run(run(args.turns, args.members, args.rounds, models_dir))


if __name__ == "__main__":
    main()
