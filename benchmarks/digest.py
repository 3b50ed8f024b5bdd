"""Digest composition time: one morning's digests for `--members` members, per digest.

One run, one temporary DATA_DIR: `--members` members (plus the owner) registered, each
with a digest at 07:30 in one of a few timezones; `--shared-docs` shared notes and
`--private-docs` private notes (one each for the first members) ingested through the real
ingest graph, so every digest lists shared news and some list private notes too. Then,
with a no-op notifier that returns a message id at once:

- due tick: `Bot.send_due_digests(now)` at each timezone's 07:30, all digests of the
  morning: total ms, per digest ms (compose + send + the delivery row), process CPU ms;
- idle tick: the same call a minute later, when nothing is due (the cost of every minute's
  tick over all schedules);
- check: every member got exactly one digest (delivery rows).

    .venv/bin/python -m benchmarks.digest [--members 1000] [--shared-docs 20]
                                          [--private-docs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.app import Lore, open_lore
from bot.events import ChatRef, Identity
from bot.settings import load_settings
from bot.sources import Source
from storage.users import Role, UserRepository

__all__ = ["main"]

PLATFORM = "bench"
OWNER = Identity(PLATFORM, "owner", "Owner")
ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC")


class NullNotifier:
    """Takes every text at once and answers with a message id."""

    def __init__(self) -> None:
        self.sent = 0

    async def ask_owner(self, owner_platform_user_id: str, request: object) -> None:
        """Ignored."""

    async def deliver(self, chat_id: str, events: object) -> None:
        """Ignored."""

    async def message_owner(self, owner_platform_user_id: str, text: str) -> None:
        """Ignored."""

    async def send_text(self, chat_id: str, text: str) -> str | None:  # noqa: ARG002
        """Count and answer."""
        self.sent += 1
        return str(self.sent)


async def _populate(lore: Lore, members: int, shared_docs: int, private_docs: int) -> None:
    users = UserRepository(lore.database)
    for number in range(members):
        name = f"m{number:05d}"
        user = await users.register(PLATFORM, name, f"Member {number}", Role.MEMBER)
        identity = Identity(PLATFORM, name, user.display_name)
        zone = ZONES[number % len(ZONES)]
        await lore.bot.set_digest(identity, ChatRef(PLATFORM, name), "07:30", zone)
        if number < private_docs:
            text = f"Private note {number}: my locker is number {number} on floor {number % 7}."
            await lore.bot.ingest(identity, Source(text=text, title=f"Note {number}"))
    await lore.bot.set_digest(OWNER, ChatRef(PLATFORM, "owner"), "07:30", "UTC")
    for number in range(shared_docs):
        text = f"Announcement {number}: the kitchen on floor {number} is cleaned on Fridays."
        await lore.bot.maintenance.load_shared(Source(text=text, title=f"Announcement {number}"))


async def _tick(lore: Lore, moments: list[datetime]) -> tuple[int, float, float]:
    sent = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for moment in moments:
        sent += (await lore.bot.maintenance.send_due_digests(moment)).sent
    return sent, (time.perf_counter() - wall) * 1e3, (time.process_time() - cpu) * 1e3


async def run(members: int, shared_docs: int, private_docs: int) -> None:
    """Populate, then time one morning's due ticks and an idle tick."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None,
            data_dir=Path(tmp),
            sample_docs_dir="",
            owners=f"{OWNER.platform}:{OWNER.platform_user_id}",
        )
        async with open_lore(settings) as lore:
            notifier = NullNotifier()
            lore.bot.register_notifier(PLATFORM, notifier)
            started = time.perf_counter()
            await _populate(lore, members, shared_docs, private_docs)
            print(f"populated {members} members in {time.perf_counter() - started:.1f} s")
            day = datetime.now(UTC).date() + timedelta(days=1)
            moments = sorted(_at(day, zone) for zone in ZONES)
            sent, wall_ms, cpu_ms = await _tick(lore, moments)
            _, idle_ms, idle_cpu = await _tick(lore, [moments[-1] + timedelta(minutes=1)])
            delivered = await lore.database.fetch_value(
                "SELECT COUNT(DISTINCT user_id) FROM digest_deliveries"
            )
    print(f"{'row':<12}{'digests':>9}{'total ms':>11}{'ms/digest':>11}{'cpu ms/digest':>15}")
    print(
        f"{'due ticks':<12}{sent:>9}{wall_ms:>11.0f}{wall_ms / max(sent, 1):>11.2f}"
        f"{cpu_ms / max(sent, 1):>15.2f}"
    )
    print(f"{'idle tick':<12}{0:>9}{idle_ms:>11.1f}{'-':>11}{idle_cpu:>15.1f}")
    print(f"check: {delivered} members with one delivery each, {notifier.sent} sends")


def _at(day: date, zone: str) -> datetime:
    local = datetime(day.year, day.month, day.day, 7, 30, tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC)


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--shared-docs", type=int, default=20)
    parser.add_argument("--private-docs", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(run(args.members, args.shared_docs, args.private_docs))


if __name__ == "__main__":
    main()
