"""Read-only lookups for other agents (MCP tools): search the shared knowledge, the caller's
private notes or past conversations, read one entry — authorised from the caller's identity,
guarded, rate-limited, capped and logged like a chat turn.

A lookup is a turn without a model: it counts against the same per-member rate limit
(`RATE_LIMIT_TURNS` per `RATE_LIMIT_MINUTES`, chat turns and lookups together), its query
passes the same input guards as a chat message (refused the same way, with a guard incident),
and it is written to `turn_log` (platform `mcp`, outcome answered / refused / error) with the
ids it returned, never their text. Conversation memory skips lookups: they are not
conversations. Nothing here writes anything but the log.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.errors import (
    LookupFailedError,
    LookupRefusedError,
    LoreError,
    NotFoundError,
    RateLimitedError,
    UsageError,
)
from bot.events import Identity
from bot.mcp_tokens import MCP_PLATFORM, Grant, McpTokens
from graphs.guards import check_input, check_sensitive
from graphs.memory_recall import MemoryRecall, RecalledExchange
from graphs.retrieval import RetrievedPassage, Retriever
from storage.documents import DocumentRepository, Passage
from storage.ids import DocumentId, TurnId
from storage.incidents import IncidentRepository
from storage.turns import TurnOutcome, TurnRecord, TurnRepository

__all__ = [
    "MAX_RESULTS",
    "FoundPassage",
    "LookupLimits",
    "LookupResult",
    "Lookups",
    "is_lookup",
]

logger = logging.getLogger(__name__)

MAX_RESULTS = 20  # passages one search returns at most
LOOKUP_THREAD = "lookup:"
WITHHELD = "[query withheld: it contained payment data]"
NO_SUCH_ENTRY = "There is no such entry you can read."
SHARED_ONLY = "This token reaches the shared knowledge only; use search_knowledge."


def is_lookup(record: TurnRecord) -> bool:
    """Whether a turn-log row is a lookup (no conversation: memory skips it)."""
    return record.thread_id.startswith(LOOKUP_THREAD)


@dataclass(frozen=True, slots=True)
class LookupLimits:
    """The caps of lookups: the chat's rate limit and message size, and result sizes."""

    rate_limit_turns: int
    rate_limit_window: timedelta
    max_query_chars: int
    max_results: int = MAX_RESULTS
    memory_results: int = 5
    passage_chars: int = 2000
    entry_passages: int = 40
    entry_chars: int = 24_000


@dataclass(frozen=True, slots=True)
class FoundPassage:
    """One passage a lookup returns, with what it is cited as: the document id (for a past
    conversation, the turn id), its title, source and heading path, and its score (cosine
    similarity to the query; None when read whole with `get_entry`)."""

    document_id: str
    title: str
    source: str
    heading_path: tuple[str, ...]
    text: str
    score: float | None
    private: bool


@dataclass(frozen=True, slots=True)
class LookupResult:
    """A lookup's passages, best first (a document's in order); `truncated` when a cap cut
    something off."""

    passages: tuple[FoundPassage, ...]
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class _Refusal:
    guard: str
    detail: str
    error: LoreError


Run = Callable[[Grant], Awaitable[LookupResult]]


class Lookups:
    """The four read-only lookups, each one guarded, limited and logged."""

    def __init__(
        self,
        *,
        access: McpTokens,
        retriever: Retriever,
        memory: MemoryRecall,
        documents: DocumentRepository,
        turns: TurnRepository,
        incidents: IncidentRepository,
        limits: LookupLimits,
        clock: Callable[[], datetime],
    ) -> None:
        self._access = access
        self._retriever = retriever
        self._memory = memory
        self._documents = documents
        self._turns = turns
        self._incidents = incidents
        self._limits = limits
        self._clock = clock

    async def search_knowledge(self, identity: Identity, query: str, *, limit: int) -> LookupResult:
        """Passages from the shared knowledge."""

        async def run(_grant: Grant) -> LookupResult:
            hits = await self._retriever.search(query, user_id=None, limit=self._cap(limit))
            return self._passages(hits)

        return await self._lookup(identity, "search_knowledge", query, run, private=False)

    async def search_private(self, identity: Identity, query: str, *, limit: int) -> LookupResult:
        """Passages from the caller's private notes only."""

        async def run(grant: Grant) -> LookupResult:
            hits = await self._retriever.search(
                query, user_id=grant.user.id, include_shared=False, limit=self._cap(limit)
            )
            return self._passages(hits)

        return await self._lookup(identity, "search_private", query, run, private=True)

    async def search_memory(
        self, identity: Identity, query: str, day_from: date | None, day_to: date | None
    ) -> LookupResult:
        """The caller's past exchanges with Lore that match `query`, on days (in their
        timezone) from `day_from` to `day_to`, oldest first."""

        async def run(grant: Grant) -> LookupResult:
            if day_from is not None and day_to is not None and day_from > day_to:
                raise UsageError("day_from is after day_to.")
            found = await self._memory.search(
                query,
                user_id=grant.user.id,
                day_from=day_from,
                day_to=day_to,
                limit=self._limits.memory_results,
            )
            return self._exchanges(found, grant.user.timezone or "UTC")

        return await self._lookup(identity, "search_memory", query, run, private=True)

    async def get_entry(self, identity: Identity, document_id: str) -> LookupResult:
        """One whole document, passage by passage: a shared one, or the caller's own private
        one. Anything else (another member's, or any private one for a shared-only token) is
        "not found", exactly like an id that does not exist."""

        async def run(grant: Grant) -> LookupResult:
            wanted = document_id.strip()
            document = await self._documents.get(DocumentId(wanted)) if wanted else None
            readable = document is not None and (
                document.owner_id is None
                or (document.owner_id == grant.user.id and not grant.shared_only)
            )
            if document is None or not readable:
                raise NotFoundError(NO_SUCH_ENTRY)
            limits = self._limits
            passages = await self._documents.document_passages(
                document.id, limit=limits.entry_passages + 1
            )
            found, truncated = self._whole(passages[: limits.entry_passages])
            return LookupResult(found, truncated or len(passages) > limits.entry_passages)

        return await self._lookup(identity, "get_entry", document_id[:100], run, private=False)

    # -- the turn around each lookup ---------------------------------------------------------

    async def _lookup(
        self, identity: Identity, tool: str, text: str, run: Run, *, private: bool
    ) -> LookupResult:
        grant = await self._access.grant(identity)
        started, clock = self._clock(), time.perf_counter()
        # An oversized query is refused unread: no guard scans it, the log keeps its size only.
        if len(text) > self._limits.max_query_chars:
            question = f"[query withheld: {len(text)} characters]"
        else:
            question = text if check_sensitive(text).allowed else WITHHELD
        refusal = await self._refusal(grant, tool, text, private=private, started=started)
        if refusal is not None:
            await self._incidents.record_guard(
                guard=refusal.guard,
                reason=refusal.detail,
                platform=MCP_PLATFORM,
                chat_id=grant.channel,
                user_id=grant.user.id,
                now=started,
            )
            await self._log(
                grant, tool, question, TurnOutcome.REFUSED, str(refusal.error), started=started
            )
            raise refusal.error
        try:
            result = await run(grant)
        except LoreError as exc:
            await self._log(grant, tool, question, TurnOutcome.REFUSED, str(exc), started=started)
            raise
        except Exception:
            # A lookup's boundary: log it, record the turn, answer politely.
            logger.exception("Lookup %s failed for user %s", tool, grant.user.id)
            await self._log(grant, tool, question, TurnOutcome.ERROR, "error", started=started)
            raise LookupFailedError("That lookup failed on my side. Please try again.") from None
        elapsed = round((time.perf_counter() - clock) * 1000)
        ids = ", ".join(dict.fromkeys(p.document_id for p in result.passages))
        summary = f"{len(result.passages)} passages" + (f": {ids}" if ids else "")
        await self._log(
            grant,
            tool,
            question,
            TurnOutcome.ANSWERED,
            summary,
            started=started,
            elapsed_ms=elapsed,
        )
        logger.info(
            "Lookup %s for user %s: %d passages in %d ms",
            tool,
            grant.user.id,
            len(result.passages),
            elapsed,
        )
        return result

    async def _refusal(
        self, grant: Grant, tool: str, text: str, *, private: bool, started: datetime
    ) -> _Refusal | None:
        """The first check that refuses this lookup, cheapest first, or None."""
        limits = self._limits
        if private and grant.shared_only:
            return _Refusal("shared_only_token", tool, LookupRefusedError(SHARED_ONLY))
        recent = await self._turns.count_since(grant.user.id, started - limits.rate_limit_window)
        if recent >= limits.rate_limit_turns:
            minutes = int(limits.rate_limit_window.total_seconds() // 60)
            return _Refusal(
                "rate_limited",
                f"{recent} turns in {minutes} min",
                RateLimitedError(
                    f"You've sent a lot of questions in the last {minutes} minutes. "
                    "Please wait a little and ask again."
                ),
            )
        if not text.strip() or len(text) > limits.max_query_chars:
            return _Refusal(
                "query_size",
                f"{len(text)} characters",
                UsageError(f"Ask with 1 to {limits.max_query_chars} characters."),
            )
        verdict = check_input(text)
        if verdict.allowed:
            return None
        message = verdict.user_message or "I can't help with that request."
        return _Refusal(verdict.guard or "guard", verdict.reason or "", LookupRefusedError(message))

    async def _log(
        self,
        grant: Grant,
        tool: str,
        question: str,
        outcome: TurnOutcome,
        answer: str,
        *,
        started: datetime,
        elapsed_ms: int = 0,
    ) -> None:
        user_id = grant.user.id
        await self._turns.log(
            TurnRecord(
                id=TurnId(uuid.uuid4().hex),
                thread_id=f"{LOOKUP_THREAD}{MCP_PLATFORM}:{grant.channel}:{user_id}",
                user_id=user_id,
                chat_id=grant.channel,
                platform=MCP_PLATFORM,
                outcome=outcome,
                model="",
                question=question,
                answer=answer,
                created_at=started,
                latency_ms=elapsed_ms,
                node_latency_ms={tool: elapsed_ms},
            )
        )

    # -- results, capped ---------------------------------------------------------------------

    def _cap(self, limit: int) -> int:
        return max(1, min(limit, self._limits.max_results))

    def _text(self, text: str) -> tuple[str, bool]:
        cap = self._limits.passage_chars
        return (text, False) if len(text) <= cap else (text[:cap].rstrip() + "\u2026", True)

    def _found(self, passage: Passage, score: float | None) -> tuple[FoundPassage, bool]:
        text, cut = self._text(passage.text)
        found = FoundPassage(
            document_id=passage.document_id,
            title=passage.document_title,
            source=passage.source_ref,
            heading_path=passage.heading_path,
            text=text,
            score=score,
            private=passage.owner_id is not None,
        )
        return found, cut

    def _passages(self, hits: list[RetrievedPassage]) -> LookupResult:
        pairs = [self._found(hit.passage, round(hit.relevance, 4)) for hit in hits]
        return LookupResult(tuple(p for p, _ in pairs), any(cut for _, cut in pairs))

    def _whole(self, passages: list[Passage]) -> tuple[tuple[FoundPassage, ...], bool]:
        found: list[FoundPassage] = []
        total, truncated = 0, False
        for passage in passages:
            item, cut = self._found(passage, None)
            if total + len(item.text) > self._limits.entry_chars:
                return tuple(found), True
            total += len(item.text)
            found.append(item)
            truncated = truncated or cut
        return tuple(found), truncated

    def _exchanges(self, found: list[RecalledExchange], timezone: str) -> LookupResult:
        try:
            zone = ZoneInfo(timezone)
        except (KeyError, ValueError):
            zone = ZoneInfo("UTC")
        passages: list[FoundPassage] = []
        truncated = False
        for exchange in found:
            when = f"{exchange.created_at.astimezone(zone):%Y-%m-%d %H:%M}"
            text, cut = self._text(f"Q: {exchange.question}\nA: {exchange.answer}")
            truncated = truncated or cut
            passage = FoundPassage(
                exchange.turn_id,
                f"Our conversation on {when}",
                "conversation memory",
                (),
                text,
                round(exchange.relevance, 4),
                True,
            )
            passages.append(passage)
        return LookupResult(tuple(passages), truncated)
