"""Evaluation runs and their cases: how well a provider did on a suite, and on what it failed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from storage.database import Database, Row
from storage.ids import EvalRunId, new_eval_run_id
from storage.timestamps import stamp

__all__ = ["EvalCase", "EvalRepository", "EvalRun"]


@dataclass(frozen=True, slots=True)
class EvalRun:
    """One run of a suite against a provider; the totals are set when it finishes."""

    id: EvalRunId
    suite: str
    provider: str
    started_at: datetime
    finished_at: datetime | None
    passed: int | None
    total: int | None
    score: float | None


@dataclass(frozen=True, slots=True)
class EvalCase:
    """The outcome of one case in one run."""

    run_id: EvalRunId
    case_id: str
    passed: bool
    expected: str
    actual: str
    detail: str = ""


def _run(row: Row) -> EvalRun:
    finished = row["finished_at"]
    return EvalRun(
        id=EvalRunId(row["id"]),
        suite=row["suite"],
        provider=row["provider"],
        started_at=datetime.fromisoformat(row["started_at"]),
        finished_at=datetime.fromisoformat(finished) if finished is not None else None,
        passed=row["passed"],
        total=row["total"],
        score=row["score"],
    )


class EvalRepository:
    """Records evaluation runs and lists past results."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def start_run(self, suite: str, provider: str, *, now: datetime | None = None) -> EvalRun:
        """Open a new run."""
        async with (
            self._db.transaction() as tx,
            tx.execute(
                "INSERT INTO eval_runs (id, suite, provider, started_at) VALUES (?, ?, ?, ?)"
                " RETURNING *",
                (new_eval_run_id(), suite, provider, stamp(now)),
            ) as cursor,
        ):
            rows = list(await cursor.fetchall())
        return _run(rows[0])

    async def record_case(self, case: EvalCase) -> None:
        """Store one case's outcome (recording the same case again replaces it)."""
        async with self._db.transaction() as tx:
            await tx.execute(
                "INSERT INTO eval_cases (run_id, case_id, passed, expected, actual, detail)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, case_id) DO UPDATE SET"
                " passed = excluded.passed, expected = excluded.expected,"
                " actual = excluded.actual, detail = excluded.detail",
                (
                    case.run_id,
                    case.case_id,
                    int(case.passed),
                    case.expected,
                    case.actual,
                    case.detail,
                ),
            )

    async def finish_run(
        self, run_id: EvalRunId, *, score: float | None = None, now: datetime | None = None
    ) -> EvalRun | None:
        """Close a run: count its cases; `score` defaults to the share that passed."""
        async with self._db.transaction() as tx:
            async with tx.execute(
                "SELECT COUNT(*), IFNULL(SUM(passed), 0) FROM eval_cases WHERE run_id = ?",
                (run_id,),
            ) as cursor:
                counts = await cursor.fetchone()
            total, passed = (int(counts[0]), int(counts[1])) if counts is not None else (0, 0)
            if score is None:
                score = passed / total if total else 0.0
            async with tx.execute(
                "UPDATE eval_runs SET finished_at = ?, passed = ?, total = ?, score = ?"
                " WHERE id = ? RETURNING *",
                (stamp(now), passed, total, score, run_id),
            ) as cursor:
                rows = list(await cursor.fetchall())
        return _run(rows[0]) if rows else None

    async def get_run(self, run_id: str) -> EvalRun | None:
        """One run, or None."""
        row = await self._db.fetch_one("SELECT * FROM eval_runs WHERE id = ?", (run_id,))
        return _run(row) if row is not None else None

    async def runs(self, *, suite: str | None = None, limit: int = 20) -> list[EvalRun]:
        """The most recent runs (of one suite), newest first."""
        rows = await self._db.fetch_all(
            "SELECT * FROM eval_runs WHERE (? IS NULL OR suite = ?)"
            " ORDER BY started_at DESC, rowid DESC LIMIT ?",
            (suite, suite, limit),
        )
        return [_run(row) for row in rows]

    async def cases(self, run_id: str) -> list[EvalCase]:
        """Every case of a run, by case id."""
        rows = await self._db.fetch_all(
            "SELECT * FROM eval_cases WHERE run_id = ? ORDER BY case_id", (run_id,)
        )
        return [
            EvalCase(
                run_id=EvalRunId(row["run_id"]),
                case_id=row["case_id"],
                passed=bool(row["passed"]),
                expected=row["expected"],
                actual=row["actual"],
                detail=row["detail"],
            )
            for row in rows
        ]
