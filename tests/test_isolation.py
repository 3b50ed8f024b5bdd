"""Private is private (invariant 2): one user's search never returns another user's chunks."""

from __future__ import annotations

import random

import pytest

from bot.app import Lore
from bot.events import Identity
from storage.ids import UserId
from storage.vectors import TenantFilterMissingError
from tests.chat_turns import OWNER, local_member, remember, user_id

TOPICS = [
    "bicycle repair and chain lubrication",
    "sourdough starter feeding schedule",
    "tax return deadlines for freelancers",
    "tomato seedlings and greenhouse watering",
    "python asyncio event loop debugging",
    "marathon training with interval runs",
    "wedding guest list and seating plan",
    "car insurance renewal and claims",
]


async def test_invariant_2_private_is_private(lore: Lore) -> None:
    rng = random.Random(7)
    users: dict[UserId, set[str]] = {}
    people: dict[UserId, Identity] = {}
    for number in range(12):
        person = await local_member(lore.bot, f"user{number}")
        user = await user_id(lore.bot, person)
        users[user], people[user] = set(), person
        for topic in rng.sample(TOPICS, 3):
            note = f"{topic}: private note {number} of user{number} about {topic}."
            result = await remember(lore.bot, person, note)
            users[user].add(result.document_id)
    await remember(lore.bot, None, text="Shared: the office opens at 8 am.")

    for user, own in users.items():
        for topic in TOPICS:
            hits = await lore.bot.search(people[user], topic, limit=10)
            private = [hit for hit in hits if hit.private]
            assert {hit.passage.document_id for hit in private} <= own
            assert all(hit.passage.owner_id in (None, user) for hit in hits)
            assert all(hit.passage.owner_id == user for hit in private)
        # The user's own notes are all reachable (a filter that returned nothing would pass above).
        found = set()
        for topic in TOPICS:
            found |= {h.passage.document_id for h in await lore.bot.search(people[user], topic)}
        assert own <= found


async def test_shared_search_never_returns_private_chunks(lore: Lore) -> None:
    solo = await local_member(lore.bot, "solo")
    await remember(lore.bot, solo, "My private diary mentions the blue door.")
    hits = await lore.bot.search(OWNER, "blue door diary", private=False)
    assert all(hit.passage.owner_id is None for hit in hits)
    assert hits == []


async def test_the_private_collection_refuses_a_query_without_the_user_filter(lore: Lore) -> None:
    # The guard also lives below the index, in the store itself.
    with pytest.raises(TenantFilterMissingError):
        await lore.vector_store.search("private", [0.0] * 384, limit=5)
