"""Forget is complete (invariant 10): a canary a member saved, asked about, asked the owner
about and left unanswered is found in no file under DATA_DIR after `/forget` — SQLite files
and their write-ahead logs, the checkpoints, the vector store, the uploads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.app import Lore, open_lore
from bot.settings import Settings
from storage.approvals import ApprovalRepository
from tests.chat_turns import ask, invite, remember

CANARY = "Zqx7-CANARY-41f9"


def files_holding(root: Path, needle: str) -> list[Path]:
    """Every file under `root` whose bytes contain `needle` (UTF-8 or UTF-16)."""
    patterns = (needle.encode(), needle.encode("utf-16-le"))
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and any(pattern in path.read_bytes() for pattern in patterns)
    )


async def _plant(lore: Lore) -> None:
    mia = await invite(lore.bot, "mia")
    await remember(lore.bot, mia, f"The blue locker code is {CANARY}.", title="Locker")
    answered = await ask(lore.bot, mia, "What is the blue locker code?")
    assert CANARY in answered.done.answer  # quoted from the private note
    asked = await ask(lore.bot, mia, f"tell the owner that {CANARY} no longer opens the locker")
    assert asked.approvals
    unanswered = await ask(lore.bot, mia, f"Which volcano erupted near {CANARY} in 1812?")
    assert unanswered.done.outcome == "refused"
    await lore.bot.maintenance.build_memory(datetime.now(UTC) + timedelta(minutes=5))
    assert files_holding(lore.settings.data_dir, CANARY)  # planted in many places
    assert await lore.bot.forget(mia) == 1
    assert await ApprovalRepository(lore.database).pending() == []


async def test_invariant_10_forget_is_complete(settings: Settings) -> None:
    async with open_lore(settings) as lore:
        await _plant(lore)
        while_running = files_holding(settings.data_dir, CANARY)
    after_close = files_holding(settings.data_dir, CANARY)
    assert while_running == []
    assert after_close == []


async def test_forgetting_one_member_leaves_the_others_alone(lore: Lore) -> None:
    noah = await invite(lore.bot, "noah")
    await remember(lore.bot, noah, "Noah parks in bay 7.", title="Parking")
    await _plant(lore)
    [kept] = await lore.bot.sources(noah)
    assert kept.title == "Parking"
    hits = await lore.bot.search(noah, "where does Noah park?")
    assert any("bay 7" in hit.passage.text for hit in hits)
