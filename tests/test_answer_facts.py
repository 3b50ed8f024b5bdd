"""The offline answerer quotes the fact a question asks for: the question/fact table over
docs/ stays true to the docs, and the whole table, asked through whole chat turns over all
of docs/, quotes the facts for at least `GOAL` of its cases, with citations that read 1..n
in order of first use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.app import open_lore
from bot.events import Identity
from bot.sources import Source
from evals.facts import GOAL, ask_table, load_fact_cases, missing_facts, quoted_share
from tests.conftest import SettingsFactory

DOCS = Path(__file__).resolve().parent.parent / "docs"
OWNER = Identity("console", "owner", "Owner")


def test_the_table_holds_forty_cases_whose_facts_are_on_their_pages() -> None:
    cases = load_fact_cases()
    assert len(cases) >= 40
    assert len({case.page for case in cases}) >= 8
    assert sum(case.held_out for case in cases) >= 20  # written before the answerer's tuning
    for case in cases:
        page = (DOCS / case.page).read_text("utf-8")
        assert not missing_facts(case, page), f"{case.id}: a fact is not on {case.page}"
        assert missing_facts(case, "nothing at all") == tuple(alt[0] for alt in case.facts)


@pytest.mark.slow
@pytest.mark.timeout(900)  # ingests all of docs/ with the default chunk sizes, asks 106 turns
async def test_the_whole_table_quotes_its_facts_for_ninety_percent_of_the_cases(
    make_settings: SettingsFactory,
) -> None:
    # The chunk sizes Lore runs with (the defaults), not the small test ones.
    settings = make_settings(chunk_tokens=256, chunk_overlap_tokens=48, rate_limit_turns=10_000)
    async with open_lore(settings) as lore:
        for page in sorted(DOCS.glob("*.md")):
            await lore.bot.maintenance.load_shared(Source(path=page))
        results = await ask_table(lore.bot, OWNER)
    misses = [f"{r.case.id}: missing {r.missing} in {r.answer!r}" for r in results if not r.quoted]
    assert quoted_share(results) >= GOAL, "\n".join(misses)
    for result in results:  # citations read 1..n in order of first use
        numbers = [int(n) for n in re.findall(r"\[(\d+)\]", result.answer)]
        assert list(dict.fromkeys(numbers)) == list(range(1, len(result.cited) + 1)), result.answer
