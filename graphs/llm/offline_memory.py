"""The offline model's conversation memory: resolve the day a question names, quote exchanges.

Today's date comes from the system prompt ("Today is Sunday, 29 November 2026, 14:05 in
Europe/Berlin." or "Today is 2026-11-29."); without it only absolute dates resolve.
Rules, on the question (first match wins):

- two ISO dates (2026-11-20 ... 2026-11-28): that range; one ISO date: that day;
- "28 November [2026]" / "November 28[th][, 2026]": that day (without a year, the latest
  such day not after today);
- a numeric date like 03/04 or 3.4: a question back (day/month order is ambiguous);
- tomorrow, next week/month, next <weekday>: a question back (memory only looks back);
- "the day before yesterday", "yesterday", "today", "N days ago";
- "this week" (Monday to today), "last week" (the previous Monday to Sunday), "the past
  week" / "last 7 days" (the seven days up to today), "this month", "last month";
- "last <weekday>": the latest such day before today, unless that falls in this week and
  "the <weekday> of last week" is another day: then a question back (the "last Friday"
  on a Sunday problem);
- "[on] <weekday>": the latest such day before today, a question back when today is that
  weekday (today, or a week ago?);
- nothing: no day bounds.

The topic is what follows "about" (dates removed); the search query is the topic, or the
whole question when there is none. Exchanges are quoted in time order with their time
and "[ref]"; with no day bounds but a topic, only exchanges at or above the threshold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from graphs.llm.offline_answer import Answer, Exchange

__all__ = ["Clarify", "DaySpan", "memory_answer", "memory_request", "today_from_prompt"]

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_WEEKDAY_NAMES = "|".join(_WEEKDAYS)
_WEEKDAY = rf"(?P<weekday>{_WEEKDAY_NAMES})"
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r")"
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_TODAY_LONG = re.compile(r"Today is (?:[A-Za-z]+, )?(\d{1,2} [A-Za-z]+ \d{4})")
_TODAY_ISO = re.compile(r"Today is (\d{4}-\d{2}-\d{2})")
_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_DAY_MONTH = re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}{_YEAR}\b")
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?{_YEAR}\b")
_NUMERIC = re.compile(r"\b\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b")
_FUTURE = re.compile(rf"\b(?:tomorrow|next\s+(?:week|month|year|{_WEEKDAY_NAMES}))\b")
_DAYS_AGO = re.compile(r"\b(?P<n>\d{1,3}|a|one|two|three|four|five|six|seven)\s+days?\s+ago\b")
_LAST_WEEKDAY = re.compile(rf"\b(?:last|past|previous)\s+{_WEEKDAY}\b")
_THIS_WEEKDAY = re.compile(rf"\b(?:this|on)?\s*{_WEEKDAY}\b")
_ABOUT = re.compile(r"\b(?:about|regarding|on the (?:subject|topic) of)\s+(?P<topic>.+)$")
_PLEASE = "Please give me the date, like {example}."
_ASK_EXACT = "Which day do you mean? " + _PLEASE


@dataclass(frozen=True, slots=True)
class DaySpan:
    """Days to search, both ends inclusive (None: open), and how to say them."""

    first: date | None = None
    last: date | None = None

    @property
    def label(self) -> str:
        """ " on Saturday 28 November 2026", " from ... to ...", or "" when unbounded."""
        if self.first is None and self.last is None:
            return ""
        if self.first == self.last and self.first is not None:
            return f" on {_long(self.first)}"
        start = f" from {_long(self.first)}" if self.first is not None else ""
        end = f" to {_long(self.last)}" if self.last is not None else ""
        return start + end


@dataclass(frozen=True, slots=True)
class Clarify:
    """The date is ambiguous or in the future: ask this instead of guessing."""

    question: str


def _long(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B %Y}"


def today_from_prompt(system: str) -> date | None:
    """Today's date as the system prompt states it, or None."""
    if match := _TODAY_LONG.search(system):
        try:
            return datetime.strptime(match.group(1), "%d %B %Y").date()  # noqa: DTZ007
        except ValueError:
            return None
    if match := _TODAY_ISO.search(system):
        try:
            return date.fromisoformat(match.group(1))
        except ValueError:
            return None
    return None


def memory_request(question: str, today: date | None) -> tuple[str, DaySpan | Clarify]:
    """The search query (topic, else the question) and the days the question names."""
    text = " ".join(question.lower().replace("\u2019", "'").split())
    span = _days(text, today)
    topic = _topic(text)
    return (topic or question.strip()), span


def _topic(text: str) -> str:
    match = _ABOUT.search(text)
    if match is None:
        return ""
    topic = match.group("topic")
    for pattern in (_ISO, _DAY_MONTH, _MONTH_DAY, _NUMERIC, _DAYS_AGO, _LAST_WEEKDAY):
        topic = pattern.sub(" ", topic)
    topic = re.sub(
        r"\b(?:the day before yesterday|yesterday|today|this morning|earlier|(?:this|last|past"
        r"|previous) (?:week|month|7 days|seven days)|(?:on|this) "
        + _WEEKDAY_NAMES
        + r"|"
        + _WEEKDAY_NAMES
        + r")\b",
        " ",
        topic,
    )
    return " ".join(topic.strip(" ?.!,").split()).removesuffix(" on").strip()


def _days(text: str, today: date | None) -> DaySpan | Clarify:
    absolute = _absolute(text, today)
    if absolute is not None:
        return absolute
    if _FUTURE.search(text):
        return Clarify(
            "I can only look back at our past conversations. "
            + _ASK_EXACT.format(example=_example(today))
        )
    relative = _relative_words(text)
    if relative is None:
        return DaySpan()
    if today is None:
        return Clarify(_ASK_EXACT.format(example=_example(today)))
    return _resolve(relative, text, today)


def _example(today: date | None) -> str:
    return (today - timedelta(days=1)).isoformat() if today is not None else "2026-11-28"


def _absolute(text: str, today: date | None) -> DaySpan | Clarify | None:
    isos = [_iso_day(match) for match in _ISO.finditer(text)]
    days = sorted(day for day in isos if day is not None)
    if days:
        return DaySpan(days[0], days[-1])
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        if (match := pattern.search(text)) is not None:
            return _named_day(match, today)
    if _NUMERIC.search(text):
        return Clarify("Is that day/month or month/day? " + _PLEASE.format(example=_example(today)))
    return None


def _iso_day(match: re.Match[str]) -> date | None:
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _named_day(match: re.Match[str], today: date | None) -> DaySpan | Clarify:
    month = _MONTHS.index(match.group("month")) + 1
    day = int(match.group("day"))
    if match.group("year"):
        years = [int(match.group("year"))]
    elif today is not None:
        years = [today.year, today.year - 1]
    else:
        return Clarify("Which year do you mean? " + _ASK_EXACT.format(example=_example(today)))
    for year in years:
        try:
            candidate = date(year, month, day)
        except ValueError:
            break
        if today is None or candidate <= today or match.group("year"):
            return DaySpan(candidate, candidate)
    return Clarify("That is not a day I know. " + _ASK_EXACT.format(example=_example(today)))


_RELATIVE = (
    ("day_before", re.compile(r"\bday before yesterday\b")),
    ("yesterday", re.compile(r"\byesterday\b")),
    ("today", re.compile(r"\b(?:today|this morning|earlier today)\b")),
    ("days_ago", _DAYS_AGO),
    ("past_week", re.compile(r"\b(?:the\s+)?(?:past|last)\s+(?:7|seven)\s+days\b|\bpast\s+week\b")),
    ("this_week", re.compile(r"\bthis\s+week\b")),
    ("last_week", re.compile(r"\b(?:last|previous)\s+week\b")),
    ("this_month", re.compile(r"\bthis\s+month\b")),
    ("last_month", re.compile(r"\b(?:last|previous)\s+month\b")),
    ("last_weekday", _LAST_WEEKDAY),
    ("weekday", _THIS_WEEKDAY),
)


def _relative_words(text: str) -> str | None:
    for name, pattern in _RELATIVE:
        if pattern.search(text):
            return name
    return None


def _resolve(kind: str, text: str, today: date) -> DaySpan | Clarify:
    monday = today - timedelta(days=today.weekday())
    first_of_month = today.replace(day=1)
    simple = {
        "day_before": today - timedelta(days=2),
        "yesterday": today - timedelta(days=1),
        "today": today,
    }
    if kind in simple:
        return DaySpan(simple[kind], simple[kind])
    if kind == "days_ago":
        match = _DAYS_AGO.search(text)
        count = match.group("n") if match is not None else "1"
        day = today - timedelta(days=_NUMBERS.get(count) or int(count))
        return DaySpan(day, day)
    spans = {
        "past_week": DaySpan(today - timedelta(days=6), today),
        "this_week": DaySpan(monday, today),
        "last_week": DaySpan(monday - timedelta(days=7), monday - timedelta(days=1)),
        "this_month": DaySpan(first_of_month, today),
        "last_month": DaySpan(
            (first_of_month - timedelta(days=1)).replace(day=1), first_of_month - timedelta(days=1)
        ),
    }
    if kind in spans:
        return spans[kind]
    return _weekday(kind, text, today)


def _weekday(kind: str, text: str, today: date) -> DaySpan | Clarify:
    pattern = _LAST_WEEKDAY if kind == "last_weekday" else _THIS_WEEKDAY
    match = pattern.search(text)
    wanted = _WEEKDAYS.index(match.group("weekday")) if match is not None else today.weekday()
    back = (today.weekday() - wanted) % 7 or 7
    latest = today - timedelta(days=back)
    monday = today - timedelta(days=today.weekday())
    if kind == "last_weekday":
        of_last_week = monday - timedelta(days=7 - wanted)
        if latest != of_last_week:
            return Clarify(
                f"Do you mean {_long(latest)} or {_long(of_last_week)}? "
                + _PLEASE.format(example=latest.isoformat())
            )
        return DaySpan(latest, latest)
    if wanted == today.weekday():
        return Clarify(
            f"Do you mean today or {_long(latest)}? " + _PLEASE.format(example=latest.isoformat())
        )
    return DaySpan(latest, latest)


def memory_answer(
    exchanges: Sequence[Exchange], span: DaySpan, *, topic: bool, threshold: float
) -> Answer:
    """Quote the exchanges with their time and "[ref]"; none found is a refusal."""
    unbounded = span.first is None and span.last is None
    shown = [
        exchange
        for exchange in exchanges
        if not (unbounded and topic) or exchange.relevance >= threshold
    ]
    if not shown:
        where = span.label or " about that"
        return Answer((f"I found no conversation with you{where}, so I won't guess.",), "refusal")
    quotes = [
        f"\n\u2022 {exchange.when}: you asked \u201c{_short(exchange.question)}\u201d"
        f" and I answered \u201c{_short(exchange.answer)}\u201d [{exchange.ref}]"
        for exchange in sorted(shown, key=lambda e: (e.when, e.ref))
    ]
    return Answer((f"Here is what you asked me{span.label}:", *quotes))


def _short(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "\u2026"
