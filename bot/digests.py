"""Morning digests: members set a local time, and once a day each gets what is new for them.

A digest is due on a member's local day once their local time has passed, within a grace
period (so a bot back from downtime sends the missed one, late but once). It counts as
delivered only when the platform returned a message id; a failed send waits a growing
back-off and is tried again on a later tick. The day is marked done in the same
transaction that records the delivery, so a restart never sends it twice.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.digest_summary import DigestSummariser
from bot.errors import DigestError
from bot.events import ChatRef
from bot.limits import DIGESTS_ON_DEMAND, Limits
from bot.notifications import Notifiers
from storage.approvals import ApprovalRepository
from storage.budget import BudgetLedger, budget_date
from storage.digests import DigestRepository, DigestSchedule
from storage.documents import DocumentRecord, DocumentRepository
from storage.money import Money
from storage.turns import TurnRepository
from storage.users import Role, User, UserRepository

__all__ = [
    "DIGEST_GRACE",
    "DigestRun",
    "Digests",
    "due_day",
    "parse_local_time",
    "parse_timezone",
    "retry_delay",
]

logger = logging.getLogger(__name__)

DIGEST_GRACE = timedelta(hours=3)
FIRST_RETRY = timedelta(minutes=1)
MAX_RETRY = timedelta(minutes=30)
ITEMS_SHOWN = 10
_LOCAL_TIME = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")


@dataclass(frozen=True, slots=True)
class DigestRun:
    """What one pass over the due digests did."""

    sent: int = 0
    failed: int = 0
    quiet: int = 0


def parse_local_time(text: str) -> str:
    """`7:30` or `07:30` -> `07:30`; raises `DigestError` with an example otherwise."""
    match = _LOCAL_TIME.fullmatch(text.strip())
    if match is None:
        raise DigestError(f"I can't read {text!r} as a time. Please use HH:MM, e.g. 07:30.")
    return f"{int(match[1]):02d}:{match[2]}"


def parse_timezone(name: str) -> ZoneInfo:
    """An IANA timezone; raises `DigestError` with an example when the name is unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise DigestError(
            f"I don't know the timezone {name!r}. Please use a name like Europe/Berlin."
        ) from None


def due_day(schedule: DigestSchedule, now: datetime, grace: timedelta = DIGEST_GRACE) -> str | None:
    """The local day (YYYY-MM-DD) whose digest is due at `now`, if any.

    Due when the local time of that day has passed less than `grace` ago and the day is
    not done yet. Yesterday is checked too, for a late time whose grace crosses midnight.
    """
    zone = ZoneInfo(schedule.timezone)
    at = time.fromisoformat(schedule.local_time)
    today = now.astimezone(zone).date()
    for day in (today, today - timedelta(days=1)):
        moment = datetime.combine(day, at, tzinfo=zone)
        done = schedule.last_sent_day is not None and schedule.last_sent_day >= day.isoformat()
        if moment <= now < moment + grace and not done:
            return day.isoformat()
    return None


def retry_delay(failures: int) -> timedelta:
    """How long to wait after the `failures`-th failed send in a row (1, 2, 4 ... 30 min)."""
    return min(FIRST_RETRY * (1 << min(failures, 10)), MAX_RETRY)


@dataclass(frozen=True, slots=True)
class _Section:
    title: str
    lines: Sequence[str]
    total: int


def _document_line(document: DocumentRecord) -> str:
    source = document.source_ref
    if source.startswith(("http://", "https://")):
        return f"{document.title} ({source})"
    return document.title


def _render(user: User, day: date, sections: Sequence[_Section], spend: str | None) -> str:
    filled = [section for section in sections if section.total]
    greeting = f"Good morning, {user.display_name}!"
    if not filled:
        tail = f" (yesterday's spend: {spend})" if spend else ""
        return f"{greeting} Nothing new since your last digest{tail}."
    out = [f"{greeting} Your digest for {day:%A %d %B}:"]
    for section in filled:
        out.append(f"\n{section.title} ({section.total}):")
        out += [f"• {line}" for line in section.lines]
        if section.total > len(section.lines):
            out.append(f"… and {section.total - len(section.lines)} more.")
    if spend:
        out.append(f"\nYesterday's spend: {spend}.")
    return "\n".join(out)


class Digests:
    """Digest settings, composition and delivery for every member."""

    def __init__(
        self,
        *,
        schedules: DigestRepository,
        users: UserRepository,
        documents: DocumentRepository,
        approvals: ApprovalRepository,
        turns: TurnRepository,
        budget: BudgetLedger,
        notifiers: Notifiers,
        budget_cap: Money,
        budget_timezone: str,
        clock: Callable[[], datetime],
        grace: timedelta = DIGEST_GRACE,
        summariser: DigestSummariser | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._limits = limits
        self._schedules = schedules
        self._users = users
        self._documents = documents
        self._approvals = approvals
        self._turns = turns
        self._budget = budget
        self._notifiers = notifiers
        self._cap = budget_cap
        self._budget_timezone = budget_timezone
        self._clock = clock
        self._grace = grace
        self._summariser = summariser
        self._sending = asyncio.Lock()

    async def set(
        self, user: User, chat: ChatRef, local_time: str, timezone: str, *, quiet_days: bool
    ) -> DigestSchedule:
        """Turn the digest on in this (private) chat; raises `DigestError` politely."""
        if chat.is_group:
            raise DigestError("Digests hold your private notes: set one up in a private chat.")
        at = parse_local_time(local_time)
        parse_timezone(timezone)
        await self._users.set_timezone(user.id, timezone)
        return await self._schedules.save(
            user.id,
            platform=chat.platform,
            chat_id=chat.chat_id,
            chat_thread=chat.thread,
            local_time=at,
            timezone=timezone,
            quiet_days=quiet_days,
            now=self._clock(),
        )

    async def off(self, user: User) -> bool:
        """Turn the digest off; False if it was not on."""
        return await self._schedules.disable(user.id, now=self._clock())

    async def now(self, user: User, chat: ChatRef) -> str:
        """Compose and send a digest into `chat` right away (the daily one is not affected)."""
        if chat.is_group:
            raise DigestError("Digests hold your private notes: ask for one in a private chat.")
        if self._limits is not None:  # a digest on demand may cost a model call
            await self._limits.take(DIGESTS_ON_DEMAND, user.id)
        now = self._clock()
        schedule = await self._schedules.get(user.id)
        since = _since(schedule, now)
        text, empty = await self.compose(user, since=since, now=now)
        text = await self._summarised(user, chat, text, empty)
        message_id = await self._send(chat, text)
        if message_id is None:
            raise DigestError("Sorry, I could not send your digest just now. Please try again.")
        return message_id

    async def send_due(self, now: datetime) -> DigestRun:
        """Send every digest due at `now`; one member's failure never stops the others."""
        sent = failed = quiet = 0
        async with self._sending:
            for schedule in await self._schedules.ready(now):
                day = due_day(schedule, now, self._grace)
                if day is None:
                    continue
                outcome = await self._deliver(schedule, day, now)
                sent += outcome == "sent"
                failed += outcome == "failed"
                quiet += outcome == "quiet"
        if sent or failed or quiet:
            logger.info("Digests: %d sent, %d failed, %d quiet", sent, failed, quiet)
        return DigestRun(sent, failed, quiet)

    async def _deliver(self, schedule: DigestSchedule, day: str, now: datetime) -> str:
        user = await self._users.get(schedule.user_id)
        if user is None:
            return "gone"
        text, empty = await self.compose(user, since=_since(schedule, now), now=now)
        if empty and schedule.quiet_days:
            await self._schedules.mark_quiet(user.id, day)
            return "quiet"
        chat = ChatRef(schedule.platform, schedule.chat_id, thread=schedule.chat_thread)
        text = await self._summarised(user, chat, text, empty)
        message_id = await self._send(chat, text)
        if message_id is None:
            retry_at = now + retry_delay(schedule.failures)
            await self._schedules.record_failure(user.id, retry_at=retry_at)
            logger.info("Digest for user %s not delivered; next try at %s", user.id, retry_at)
            return "failed"
        await self._schedules.record_delivery(user.id, day, message_id, now=now)
        return "sent"

    async def _summarised(self, user: User, chat: ChatRef, text: str, empty: bool) -> str:
        """The model's summary when one is configured; a one-line "nothing new" stays as is."""
        if self._summariser is None or empty:
            return text
        return await self._summariser.summarise(user, chat, text)

    async def _send(self, chat: ChatRef, text: str) -> str | None:
        notifier = self._notifiers.for_platform(chat.platform)
        if notifier is None:
            return None
        try:
            return await notifier.send_text(chat, text)
        except Exception:  # one member's send is a job boundary: log, retry later
            logger.exception("Sending a digest to a %s chat failed", chat.platform)
            return None

    async def compose(self, user: User, *, since: datetime, now: datetime) -> tuple[str, bool]:
        """The digest text for `user` covering `since`..`now`, and whether nothing was new."""
        shared, shared_total = await self._documents.added_since(None, since, limit=ITEMS_SHOWN)
        private, private_total = await self._documents.added_since(
            user.id, since, limit=ITEMS_SHOWN
        )
        owner = user.role is Role.OWNER
        questions = await self._turns.unanswered(
            since=since, user_id=None if owner else user.id, limit=100
        )
        sections = [
            _Section(
                "New in the shared knowledge", [_document_line(d) for d in shared], shared_total
            ),
            _Section("New in your notes", [_document_line(d) for d in private], private_total),
            _Section(
                "Questions still without a source",
                [q.question for q in questions[:ITEMS_SHOWN]],
                len(questions),
            ),
        ]
        spend = None
        if owner:
            pending = await self._approvals.pending(now=now)
            lines = [f"{a.summary} (until {a.expires_at:%Y-%m-%d %H:%M} UTC)" for a in pending]
            sections.append(_Section("Waiting for your approval", lines[:ITEMS_SHOWN], len(lines)))
            spend = await self._yesterdays_spend(now)
        local_day = now.astimezone(ZoneInfo(user.timezone or "UTC")).date()
        text = _render(user, local_day, sections, spend)
        return text, not any(section.total for section in sections)

    async def _yesterdays_spend(self, now: datetime) -> str:
        yesterday = budget_date(now, self._budget_timezone) - timedelta(days=1)
        spent = await self._budget.spent(yesterday.isoformat())
        return f"{spent.format(4)} of the {self._cap.format(2)} daily cap"


def _since(schedule: DigestSchedule | None, now: datetime) -> datetime:
    """What a digest covers: since the last one, else since the digest was turned on, else a day."""
    if schedule is None:
        return now - timedelta(days=1)
    return schedule.last_sent_at or schedule.created_at
