"""The daily spending cap: reserve before a model call, settle to the actual cost after.

Amounts are `Money` (whole micro-dollars), so sums never drift. The ledger
`budget_ledger` has one row per reservation:

- `reserve` inserts a row only if `spent(day) + amount <= cap`, checked and written
  in ONE statement inside the writer transaction, so any number of concurrent
  reservers (in this process or another) can never overshoot the cap together.
- `settle` replaces the reserved amount by the actual cost; an actual cost above the
  reservation (the provider over-ran) is kept as it is and logged.
- `release` drops a reservation whose call failed before it cost anything.

`spent(day)` = settled costs + reservations still open at their reserved amount.

Fail closed on crashes: a reservation is never released by age. One left behind by a
crashed process keeps counting at its reserved amount for the rest of its day.
`abandon_stale` (run at start-up or by a job) marks reservations older than an hour
as `abandoned`: still counted at the reserved amount, no longer releasable, but
still settleable if the slow caller turns out to be alive and reports its cost.

Every sqlite error, and a closed database, surfaces as `BudgetUnavailableError`;
callers must then refuse the model call rather than spend blind.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from storage.database import Database, DatabaseError
from storage.money import Money
from storage.timestamps import stamp, utc_iso

__all__ = [
    "STALE_AFTER",
    "BudgetDay",
    "BudgetLedger",
    "BudgetUnavailableError",
    "Reservation",
    "budget_date",
    "budget_day",
]

logger = logging.getLogger(__name__)

STALE_AFTER = timedelta(hours=1)

# What one ledger row counts against its day.
_COUNTED = (
    "IFNULL(SUM(CASE status WHEN 'settled' THEN settled_micros"
    " WHEN 'released' THEN 0 ELSE reserved_micros END), 0)"
)
# Check and insert in one statement: the sum and the new row can never disagree.
_RESERVE = (
    "INSERT INTO budget_ledger (day, purpose, reserved_micros, created_at)"  # noqa: S608
    " SELECT ?, ?, ?, ? WHERE"
    f" (SELECT {_COUNTED} FROM budget_ledger WHERE day = ?) + ? <= ?"
    " RETURNING id"
)


class BudgetUnavailableError(Exception):
    """The budget ledger cannot be read or written; refuse the call (fail closed)."""


@dataclass(frozen=True, slots=True)
class Reservation:
    """Money set aside for one model call, until it is settled or released."""

    id: int
    day: str
    amount: Money
    purpose: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class BudgetDay:
    """One day's ledger at a glance."""

    day: str
    settled: Money
    open: Money
    abandoned: Money
    overrun: Money

    @property
    def spent(self) -> Money:
        """What counts against the cap: settled plus open and abandoned reservations."""
        return self.settled + self.open + self.abandoned


@contextmanager
def _unavailable() -> Iterator[None]:
    try:
        yield
    except (sqlite3.Error, DatabaseError) as exc:
        raise BudgetUnavailableError(f"The budget ledger is unavailable: {exc}") from exc


def budget_date(moment: datetime, timezone: str) -> date:
    """The ledger day `moment` falls on: budget days roll over at midnight in `timezone`."""
    return moment.astimezone(ZoneInfo(timezone)).date()


def budget_day(moment: datetime, timezone: str) -> str:
    """The ledger's YYYY-MM-DD key for the day `moment` falls on (see `budget_date`)."""
    return budget_date(moment, timezone).isoformat()


def _check_day(day: str) -> None:
    if date.fromisoformat(day).isoformat() != day:
        raise ValueError(f"A budget day is YYYY-MM-DD, not {day!r}")


def _check_amount(name: str, value: Money) -> None:
    if value.micros < 0:
        raise ValueError(f"{name} must not be negative")


class BudgetLedger:
    """Reserves, settles and sums model spending per day."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def reserve(
        self,
        day: str,
        amount: Money,
        cap: Money,
        *,
        purpose: str = "",
        now: datetime | None = None,
    ) -> Reservation | None:
        """Set `amount` aside on `day`; None if that would exceed `cap`."""
        _check_day(day)
        _check_amount("amount", amount)
        _check_amount("cap", cap)
        created = stamp(now)
        with _unavailable():
            rows = await self._db.write(
                _RESERVE, (day, purpose, amount.micros, created, day, amount.micros, cap.micros)
            )
        if not rows:
            return None
        return Reservation(rows[0]["id"], day, amount, purpose, datetime.fromisoformat(created))

    async def settle(
        self, reservation: Reservation, actual: Money, *, now: datetime | None = None
    ) -> bool:
        """Replace the reservation by the actual cost; False if already settled or released."""
        _check_amount("actual", actual)
        with _unavailable():
            settled = bool(
                await self._db.write(
                    "UPDATE budget_ledger SET status = 'settled', settled_micros = ?,"
                    " closed_at = ? WHERE id = ? AND status IN ('reserved', 'abandoned')"
                    " RETURNING id",
                    (actual.micros, stamp(now), reservation.id),
                )
            )
        if settled and actual > reservation.amount:
            logger.warning(
                "Model call %s cost %s, %s more than reserved",
                reservation.purpose or reservation.id,
                actual.format(6),
                (actual - reservation.amount).format(6),
            )
        return settled

    async def release(self, reservation: Reservation, *, now: datetime | None = None) -> bool:
        """Give back an open reservation (the call failed before any cost); False otherwise."""
        with _unavailable():
            async with self._db.transaction() as tx:
                cursor = await tx.execute(
                    "UPDATE budget_ledger SET status = 'released', closed_at = ?"
                    " WHERE id = ? AND status = 'reserved'",
                    (stamp(now), reservation.id),
                )
                return cursor.rowcount == 1

    async def spent(self, day: str) -> Money:
        """What counts against `day`: settled costs plus open reservations."""
        _check_day(day)
        with _unavailable():
            value = await self._db.fetch_value(
                f"SELECT {_COUNTED} FROM budget_ledger WHERE day = ?",  # noqa: S608
                (day,),
            )
        return Money(int(str(value)))

    async def remaining(self, day: str, cap: Money) -> Money:
        """What is left of `cap` on `day` (never below zero)."""
        return max(Money.zero(), cap - await self.spent(day))

    async def summary(self, day: str) -> BudgetDay:
        """Settled, open, abandoned and over-run amounts of one day (for /budget)."""
        _check_day(day)
        with _unavailable():
            row = await self._db.fetch_one(
                "SELECT"
                " IFNULL(SUM(CASE WHEN status = 'settled' THEN settled_micros END), 0),"
                " IFNULL(SUM(CASE WHEN status = 'reserved' THEN reserved_micros END), 0),"
                " IFNULL(SUM(CASE WHEN status = 'abandoned' THEN reserved_micros END), 0),"
                " IFNULL(SUM(CASE WHEN status = 'settled' AND settled_micros > reserved_micros"
                " THEN settled_micros - reserved_micros END), 0)"
                " FROM budget_ledger WHERE day = ?",
                (day,),
            )
        if row is None:
            raise BudgetUnavailableError("The budget ledger returned no summary")
        return BudgetDay(day, *(Money(int(row[column])) for column in range(4)))

    async def abandon_stale(
        self, *, now: datetime | None = None, max_age: timedelta = STALE_AFTER
    ) -> int:
        """Mark open reservations older than `max_age` abandoned; return how many.

        They keep counting at their reserved amount (fail closed) and can no longer
        be released.
        """
        current = now if now is not None else datetime.now(UTC)
        with _unavailable():
            async with self._db.transaction() as tx:
                cursor = await tx.execute(
                    "UPDATE budget_ledger SET status = 'abandoned', closed_at = ?"
                    " WHERE status = 'reserved' AND created_at <= ?",
                    (utc_iso(current), utc_iso(current - max_age)),
                )
                count = cursor.rowcount
        if count:
            logger.warning("Abandoned %d stale budget reservations (still counted)", count)
        return count
