"""Agent storage: invites, approvals, the budget ledger, turn logs, incidents, evals, pins."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiosqlite
import pytest

from storage.approvals import Approval, ApprovalRepository, ApprovalStatus
from storage.budget import BudgetLedger, BudgetUnavailableError
from storage.database import Database
from storage.documents import (
    Collection,
    DocumentRecord,
    DocumentRepository,
    NewChunk,
    SourceType,
)
from storage.evals import EvalCase, EvalRepository
from storage.ids import ChunkHash, DocumentId, TurnId, UserId, new_turn_id, point_id
from storage.incidents import CitationEventKind, IncidentRepository
from storage.invites import InviteRepository
from storage.migrations import MIGRATIONS, apply_migrations, schema_version
from storage.money import Money
from storage.timestamps import utc_iso
from storage.turns import TurnOutcome, TurnRecord, TurnRepository
from storage.users import Role, User, UserRepository

NOW = datetime(2025, 1, 15, 9, 0, tzinfo=UTC)
DAY = "2025-01-15"


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    async with Database(tmp_path / "lore.sqlite3") as db:
        yield db


@pytest.fixture
async def owner(database: Database) -> User:
    return await UserRepository(database).register("telegram", "1", "Olga", Role.OWNER)


@pytest.fixture
async def member(database: Database) -> User:
    return await UserRepository(database).register("telegram", "2", "Max", Role.MEMBER)


# Invites


async def test_an_invite_admits_exactly_one_of_two_concurrent_newcomers(
    database: Database, owner: User
) -> None:
    invites = InviteRepository(database)
    invite = await invites.create(owner.id, Role.MEMBER, now=NOW, ttl=timedelta(days=1))
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", invite.code)
    assert invite.invite.code_hash != invite.code

    results = await asyncio.gather(
        *(
            invites.register_with_invite(
                invite.code,
                platform="telegram",
                platform_user_id=str(100 + n),
                display_name=f"new{n}",
                now=NOW + timedelta(minutes=1),
            )
            for n in range(2)
        )
    )
    winners = [user for user in results if user is not None]
    assert len(winners) == 1
    assert winners[0].role is Role.MEMBER
    stored = await invites.get(invite.code)
    assert stored is not None
    assert stored.used_by == winners[0].id
    loser = 101 if winners[0].display_name == "new0" else 100
    users = UserRepository(database)
    assert await users.by_identity("telegram", str(loser)) is None
    assert await invites.outstanding(now=NOW) == []


async def test_an_invite_is_redeemed_once_by_existing_users(
    database: Database, owner: User, member: User
) -> None:
    invites = InviteRepository(database)
    invite = await invites.create(owner.id, Role.OWNER, now=NOW, ttl=timedelta(hours=1))
    assert await invites.outstanding(now=NOW) == [invite.invite]
    results = await asyncio.gather(
        invites.redeem(invite.code, member.id, now=NOW),
        invites.redeem(invite.code, owner.id, now=NOW),
    )
    assert sum(result is not None for result in results) == 1
    assert await invites.redeem(invite.code, member.id, now=NOW) is None


async def test_an_expired_invite_is_refused(database: Database, owner: User) -> None:
    invites = InviteRepository(database)
    invite = await invites.create(owner.id, Role.MEMBER, now=NOW, ttl=timedelta(hours=1))
    late = NOW + timedelta(hours=1)
    user = await invites.register_with_invite(
        invite.code, platform="telegram", platform_user_id="9", display_name="Late", now=late
    )
    assert user is None
    assert await UserRepository(database).by_identity("telegram", "9") is None
    stored = await invites.get(invite.code)
    assert stored is not None
    assert stored.used_by is None
    assert await invites.redeem("no-such-code", owner.id, now=NOW) is None


# Approvals


async def _approval(
    database: Database, requester: User, ttl: timedelta = timedelta(hours=1)
) -> Approval:
    return await ApprovalRepository(database).create(
        thread_id="thread-1",
        requester_user_id=requester.id,
        chat_id="42",
        platform="telegram",
        tool_name="delete_document",
        arguments_json='{"document_id": "d1"}',
        summary="Delete 'Notes'",
        is_group=False,
        now=NOW,
        ttl=ttl,
    )


async def test_an_approval_is_decided_once(database: Database, owner: User, member: User) -> None:
    approvals = ApprovalRepository(database)
    created = await _approval(database, member)
    assert len(created.id) <= 32
    assert [a.id for a in await approvals.pending()] == [created.id]

    first = await approvals.decide(created.id, owner.id, approve=True, now=NOW)
    second = await approvals.decide(created.id, owner.id, approve=False, now=NOW)
    assert first.outcome == "decided"
    assert second.outcome == "already_decided"
    assert second.record is not None
    assert second.record.status is ApprovalStatus.APPROVED
    assert second.record.decided_by == owner.id
    assert await approvals.pending() == []
    assert (await approvals.decide("nope", owner.id, approve=True, now=NOW)).outcome == "unknown"


async def test_concurrent_decisions_have_one_winner(
    database: Database, owner: User, member: User
) -> None:
    approvals = ApprovalRepository(database)
    created = await _approval(database, member)
    decisions = await asyncio.gather(
        *(approvals.decide(created.id, owner.id, n % 2 == 0, NOW) for n in range(10))
    )
    winners = [d for d in decisions if d.outcome == "decided"]
    assert len(winners) == 1
    assert {d.outcome for d in decisions} == {"decided", "already_decided"}
    stored = await approvals.get(created.id)
    assert stored is not None
    assert winners[0].record is not None
    assert stored.status is winners[0].record.status


async def test_overdue_approvals_expire(database: Database, owner: User, member: User) -> None:
    approvals = ApprovalRepository(database)
    early = await _approval(database, member, ttl=timedelta(minutes=10))
    late = await _approval(database, member, ttl=timedelta(minutes=30))
    assert await approvals.expire_due(NOW + timedelta(minutes=5)) == []
    expired = await approvals.expire_due(NOW + timedelta(minutes=10))
    assert [a.id for a in expired] == [early.id]
    assert expired[0].status is ApprovalStatus.EXPIRED
    tap = await approvals.decide(early.id, owner.id, approve=True, now=NOW)
    assert tap.outcome == "expired"
    assert [a.id for a in await approvals.pending(now=NOW + timedelta(minutes=20))] == [late.id]
    # A tap after the deadline but before any expiry job flips it too.
    overdue = await approvals.decide(late.id, owner.id, True, NOW + timedelta(hours=1))
    assert overdue.outcome == "expired"
    assert overdue.record is not None
    assert overdue.record.status is ApprovalStatus.EXPIRED


async def test_an_approved_tool_runs_exactly_once(
    database: Database, owner: User, member: User
) -> None:
    approvals = ApprovalRepository(database)
    created = await _approval(database, member)
    assert not await approvals.start_execution(created.id, NOW)  # not approved yet
    await approvals.decide(created.id, owner.id, approve=True, now=NOW)

    claims = await asyncio.gather(*(approvals.start_execution(created.id, NOW) for _ in range(8)))
    assert claims.count(True) == 1
    results = await asyncio.gather(
        *(approvals.mark_executed(created.id, f'{{"run": {n}}}', NOW) for n in range(8))
    )
    assert results.count(True) == 1
    stored = await approvals.get(created.id)
    assert stored is not None
    assert stored.result_json == f'{{"run": {results.index(True)}}}'
    assert stored.executed_at == NOW


async def test_a_rejected_tool_is_never_marked_executed(
    database: Database, owner: User, member: User
) -> None:
    approvals = ApprovalRepository(database)
    created = await _approval(database, member)
    await approvals.decide(created.id, owner.id, approve=False, now=NOW)
    assert not await approvals.mark_executed(created.id, "{}", NOW)
    assert not await approvals.start_execution(created.id, NOW)


# Budget


async def test_concurrent_reservations_never_overshoot_the_cap(tmp_path: Path) -> None:
    amount = 30_000
    cap = 7 * amount + amount - 1  # room for 7, not 8
    path = tmp_path / "lore.sqlite3"
    # Two open databases on one file stand in for two processes sharing the ledger.
    async with Database(path) as first, Database(path) as second:
        ledgers = [BudgetLedger(first), BudgetLedger(second)]
        results = await asyncio.gather(
            *(ledgers[n % 2].reserve(DAY, Money(amount), Money(cap), now=NOW) for n in range(50))
        )
        granted = [r for r in results if r is not None]
        assert len(granted) == 7
        assert len({r.id for r in granted}) == 7
        assert await ledgers[0].spent(DAY) == Money(7 * amount) <= Money(cap)
        assert await ledgers[1].remaining(DAY, Money(cap)) == Money(amount - 1)


async def test_settle_and_release_arithmetic(database: Database) -> None:
    ledger = BudgetLedger(database)
    cap = 1_000
    first = await ledger.reserve(DAY, Money(100), Money(cap), purpose="turn-a", now=NOW)
    second = await ledger.reserve(DAY, Money(200), Money(cap), now=NOW)
    assert first is not None
    assert second is not None
    assert await ledger.spent(DAY) == Money(300)

    assert await ledger.settle(first, Money(40), now=NOW)
    assert await ledger.spent(DAY) == Money(240)
    assert await ledger.release(second, now=NOW)
    assert await ledger.spent(DAY) == Money(40)
    assert not await ledger.release(second, now=NOW)
    assert not await ledger.settle(second, Money(10), now=NOW)
    assert not await ledger.settle(first, Money(10), now=NOW)
    assert await ledger.spent(DAY) == Money(40)

    # The provider over-ran: the actual cost counts and the overrun is visible.
    third = await ledger.reserve(DAY, Money(500), Money(cap), now=NOW)
    assert third is not None
    assert await ledger.settle(third, Money(700), now=NOW)
    summary = await ledger.summary(DAY)
    assert summary.spent == await ledger.spent(DAY) == Money(740)
    assert summary.overrun == Money(200)
    assert await ledger.remaining(DAY, Money(cap)) == Money(260)
    assert await ledger.reserve(DAY, Money(261), Money(cap), now=NOW) is None
    assert await ledger.reserve("2025-01-16", Money(261), Money(cap), now=NOW) is not None
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        await ledger.spent("2025-W03-3")


async def test_spent_amounts_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "lore.sqlite3"
    async with Database(path) as database:
        ledger = BudgetLedger(database)
        settled = await ledger.reserve(DAY, Money(300), Money(1_000), now=NOW)
        assert settled is not None
        await ledger.settle(settled, Money(250), now=NOW)
        assert (
            await ledger.reserve(DAY, Money(400), Money(1_000), now=NOW) is not None
        )  # never settled
    async with Database(path) as reopened:
        ledger = BudgetLedger(reopened)
        assert await ledger.spent(DAY) == Money(650)
        assert await ledger.reserve(DAY, Money(351), Money(1_000), now=NOW) is None


async def test_a_stale_reservation_keeps_counting(tmp_path: Path) -> None:
    path = tmp_path / "lore.sqlite3"
    async with Database(path) as database:
        crashed = await BudgetLedger(database).reserve(DAY, Money(600), Money(1_000), now=NOW)
        assert crashed is not None
    async with Database(path) as database:
        ledger = BudgetLedger(database)
        assert await ledger.abandon_stale(now=NOW + timedelta(minutes=30)) == 0
        assert await ledger.abandon_stale(now=NOW + timedelta(hours=2)) == 1
        assert not await ledger.release(crashed)
        assert await ledger.spent(DAY) == Money(600)
        assert (await ledger.summary(DAY)).abandoned == Money(600)
        assert await ledger.reserve(DAY, Money(401), Money(1_000), now=NOW) is None
        # A caller that was only slow can still report the real cost.
        assert await ledger.settle(crashed, Money(100))
        assert await ledger.spent(DAY) == Money(100)


async def test_an_unreadable_ledger_raises_budget_unavailable(tmp_path: Path) -> None:
    database = Database(tmp_path / "lore.sqlite3")
    async with database:
        ledger = BudgetLedger(database)
        async with database.transaction() as tx:
            await tx.execute("DROP TABLE budget_ledger")
        with pytest.raises(BudgetUnavailableError):
            await ledger.spent(DAY)
        with pytest.raises(BudgetUnavailableError):
            await ledger.reserve(DAY, Money(1), Money(10), now=NOW)
    with pytest.raises(BudgetUnavailableError):
        await BudgetLedger(database).remaining(DAY, Money(10))


# Turns, unanswered questions, feedback, incidents, evals


def _turn(user: User, turn_id: TurnId, at: datetime, outcome: TurnOutcome) -> TurnRecord:
    return TurnRecord(
        id=turn_id,
        thread_id="thread-1",
        user_id=user.id,
        chat_id="42",
        platform="telegram",
        outcome=outcome,
        model="gpt-test",
        question=f"question at {at:%H:%M}",
        answer="",
        created_at=at,
        prompt_tokens=120,
        completion_tokens=30,
        cached_tokens=100,
        cost_micros=1_234,
        latency_ms=800,
        node_latency_ms={"guard": 2, "generate": 790},
    )


async def test_turns_are_logged_and_read_back_by_user_and_time(
    database: Database, member: User, owner: User
) -> None:
    turns = TurnRepository(database)
    ids = [new_turn_id() for _ in range(3)]
    for n, turn_id in enumerate(ids):
        await turns.log(_turn(member, turn_id, NOW + timedelta(hours=n), TurnOutcome.ANSWERED))
    await turns.log(_turn(owner, new_turn_id(), NOW, TurnOutcome.ANSWERED))

    stored = await turns.get(ids[0])
    assert stored == _turn(member, ids[0], NOW, TurnOutcome.ANSWERED)
    window = await turns.for_user(
        member.id, since=NOW + timedelta(minutes=30), until=NOW + timedelta(hours=2)
    )
    assert [t.id for t in window] == [ids[1]]
    assert [t.id for t in await turns.for_user(member.id, limit=2)] == ids[1:]

    # Logged again after an approval: the same row is updated.
    resumed = _turn(member, ids[0], NOW, TurnOutcome.AWAITING_APPROVAL)
    await turns.log(resumed)
    again = await turns.get(ids[0])
    assert again is not None
    assert again.outcome is TurnOutcome.AWAITING_APPROVAL
    assert len(await turns.for_user(member.id)) == 3
    assert await turns.delete_for_user(member.id) == 3
    assert await turns.for_user(member.id) == []
    assert len(await turns.for_user(owner.id)) == 1


async def test_unanswered_questions_are_listed_until_resolved(
    database: Database, member: User
) -> None:
    turns = TurnRepository(database)
    first = await turns.record_unanswered(
        user_id=member.id, chat_id="42", question="Who won?", reason="no_sources", now=NOW
    )
    await turns.record_unanswered(
        user_id=member.id, chat_id="42", question="When?", reason="no_sources", now=NOW
    )
    assert [q.question for q in await turns.unanswered(user_id=member.id)] == ["Who won?", "When?"]
    assert await turns.resolve_unanswered(first.id, now=NOW)
    assert not await turns.resolve_unanswered(first.id, now=NOW)
    assert [q.question for q in await turns.unanswered()] == ["When?"]
    both = await turns.unanswered(include_resolved=True)
    assert [q.resolved_at for q in both] == [NOW, None]
    assert await turns.unanswered(since=NOW + timedelta(seconds=1)) == []


async def test_feedback_is_one_vote_per_user_and_turn(
    database: Database, member: User, owner: User
) -> None:
    turns = TurnRepository(database)
    turn_id = new_turn_id()
    await turns.log(_turn(member, turn_id, NOW, TurnOutcome.ANSWERED))
    assert await turns.set_feedback(turn_id, member.id, 1, now=NOW)
    assert await turns.set_feedback(turn_id, member.id, -1, now=NOW)
    assert await turns.set_feedback(turn_id, owner.id, 1, now=NOW)
    votes = {f.user_id: f.value for f in await turns.feedback(turn_id)}
    assert votes == {member.id: -1, owner.id: 1}
    assert not await turns.set_feedback(TurnId("unknown"), member.id, 1)
    with pytest.raises(ValueError, match="-1"):
        await turns.set_feedback(turn_id, member.id, 0)


async def test_incidents_and_citation_events_are_recorded(database: Database, member: User) -> None:
    incidents = IncidentRepository(database)
    await incidents.record_guard(
        guard="injection",
        reason="instruction override pattern",
        platform="telegram",
        chat_id="42",
        user_id=member.id,
        now=NOW,
    )
    await incidents.record_guard(
        guard="unknown_user",
        reason="not registered",
        platform="slack",
        chat_id="C1",
        now=NOW + timedelta(minutes=1),
    )
    listed = await incidents.guard_incidents()
    assert [(i.guard, i.user_id) for i in listed] == [
        ("unknown_user", None),
        ("injection", member.id),
    ]
    assert len(await incidents.guard_incidents(since=NOW + timedelta(seconds=30))) == 1

    turn_id = new_turn_id()
    await incidents.record_citation_event(
        turn_id, CitationEventKind.DROPPED_CITATION, "[7] names no stored source", now=NOW
    )
    await incidents.record_citation_event(new_turn_id(), CitationEventKind.GROUNDING_RISK, "x")
    events = await incidents.citation_events(turn_id=turn_id)
    assert [(e.kind, e.detail) for e in events] == [
        (CitationEventKind.DROPPED_CITATION, "[7] names no stored source")
    ]
    assert len(await incidents.citation_events()) == 2


async def test_an_eval_run_counts_its_cases(database: Database) -> None:
    evals = EvalRepository(database)
    run = await evals.start_run("citations", "offline", now=NOW)
    assert run.finished_at is None
    for case_id, passed in (("a", True), ("b", False), ("c", True), ("d", True)):
        await evals.record_case(EvalCase(run.id, case_id, passed, "expected", "actual"))
    await evals.record_case(EvalCase(run.id, "b", True, "expected", "actual", "retried"))
    finished = await evals.finish_run(run.id, now=NOW + timedelta(minutes=1))
    assert finished is not None
    assert (finished.passed, finished.total, finished.score) == (4, 4, 1.0)
    assert await evals.runs(suite="citations") == [finished]
    assert [c.detail for c in await evals.cases(run.id)] == ["", "retried", "", ""]


async def test_user_preferences_and_owners(database: Database, owner: User, member: User) -> None:
    users = UserRepository(database)
    assert await users.set_timezone(member.id, "Europe/Berlin")
    assert await users.set_language(member.id, "de")
    assert not await users.set_timezone(UserId("ghost"), "UTC")
    stored = await users.get(member.id)
    assert stored is not None
    assert (stored.timezone, stored.language) == ("Europe/Berlin", "de")
    assert [u.id for u in await users.owners()] == [owner.id]


# Documents: pins, /forget, and migration 3 on an existing database


def _document(doc_id: str, owner_id: UserId | None) -> DocumentRecord:
    stamp = utc_iso(NOW)
    return DocumentRecord(
        DocumentId(doc_id),
        owner_id,
        f"Title {doc_id}",
        SourceType.NOTE,
        f"note:{doc_id}",
        f"hash-{doc_id}",
        f"/originals/{doc_id}",
        "markdown",
        "indexing",
        stamp,
        stamp,
    )


def _chunks(doc_id: str, texts: list[str]) -> list[NewChunk]:
    return [
        NewChunk(
            n,
            text,
            ChunkHash(f"{doc_id}-{n}"),
            (),
            3,
            point_id(DocumentId(doc_id), ChunkHash(f"{doc_id}-{n}")),
        )
        for n, text in enumerate(texts)
    ]


async def test_pinned_shared_documents_come_whole_and_in_order(
    database: Database, member: User
) -> None:
    documents = DocumentRepository(database)
    await documents.save(_document("rules", None), _chunks("rules", ["one", "two"]), replace=False)
    await documents.save(_document("other", None), _chunks("other", ["x"]), replace=False)
    await documents.save(_document("mine", member.id), _chunks("mine", ["p"]), replace=False)
    assert await documents.pinned_shared() == []
    assert await documents.set_pinned(DocumentId("rules"), True)
    assert not await documents.set_pinned(DocumentId("mine"), True)  # private: never pinned
    assert [p.text for p in await documents.pinned_shared()] == ["one", "two"]
    rules = await documents.get(DocumentId("rules"))
    assert rules is not None
    assert rules.pinned
    assert await documents.set_pinned(DocumentId("rules"), False)
    assert await documents.pinned_shared() == []


async def test_delete_for_owner_forgets_only_that_users_documents(
    database: Database, member: User, owner: User
) -> None:
    documents = DocumentRepository(database)
    await documents.save(_document("m1", member.id), _chunks("m1", ["a", "b"]), replace=False)
    await documents.save(_document("o1", owner.id), _chunks("o1", ["c"]), replace=False)
    await documents.save(_document("s1", None), _chunks("s1", ["d"]), replace=False)
    removed = await documents.delete_for_owner(member.id)
    expected = [point_id(DocumentId("m1"), ChunkHash(f"m1-{n}")) for n in range(2)]
    assert removed == [(Collection.PRIVATE, expected)]
    assert await documents.document_ids() == {"o1", "s1"}


async def test_migration_3_keeps_existing_documents_unpinned(tmp_path: Path) -> None:
    path = tmp_path / "lore.sqlite3"
    async with aiosqlite.connect(path, isolation_level=None) as db:
        assert await apply_migrations(db, MIGRATIONS[:2]) == 2
        await db.execute(
            "INSERT INTO users (id, display_name, role, created_at)"
            " VALUES ('u1', 'Ann', 'member', 'now')"
        )
        for doc_id, owner, collection in (("d1", None, "knowledge"), ("d2", "u1", "private")):
            await db.execute(
                "INSERT INTO documents (id, owner_id, title, source_type, source_ref,"
                " content_hash, original_path, format, status, created_at, updated_at,"
                " collection) VALUES (?, ?, 'T', 'note', 'n', ?, '/x', 'markdown', 'ready',"
                " 'now', 'now', ?)",
                (doc_id, owner, f"h-{doc_id}", collection),
            )

    async with Database(path) as database:
        rows = await database.fetch_all("SELECT id, pinned FROM documents ORDER BY id")
        assert [(row["id"], row["pinned"]) for row in rows] == [("d1", 0), ("d2", 0)]
        document = await DocumentRepository(database).get(DocumentId("d1"))
        assert document is not None
        assert not document.pinned
    async with aiosqlite.connect(path, isolation_level=None) as db:
        assert await schema_version(db) == MIGRATIONS[-1].version
