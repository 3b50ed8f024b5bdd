"""The end of every turn: refuse an answer that leaks the system prompt or the tool definitions,
keep only citations that name stored documents (invariant 5), number them 1..n by first use
(`graphs.agent.citation_order`), defang links that no source and no question holds
(invariant 9), turn an unsupported answer into a refusal, record unanswered questions and
grounding risks, book the turn in `turn_log`, and stream the final events.

A search_memory result cites a past turn, not a document: such a citation is kept only if
its number came from search_memory in this turn and that turn is still in `turn_log` and
belongs to the same person. A turn that only searched memory and found nothing is a
refusal but not an unanswered question (nothing is missing from the knowledge).
"""

from __future__ import annotations

import dataclasses
import re
import time
from datetime import datetime

from langgraph.runtime import Runtime

from graphs.agent.citation_order import first_use_order, renumber
from graphs.agent.context import AgentContext
from graphs.agent.events import CitationEvent, RefusalEvent, TurnDone, TurnError
from graphs.agent.leak_stream import turn_leak_check, turn_model_text
from graphs.agent.links import defang_untrusted, record_untrusted_links, turn_texts
from graphs.agent.state import AgentState, PassageRef, Refusal, TurnUsage
from graphs.agent.threads import thread_id_of
from graphs.agent.verify_words import VerifyWords, verify_words
from storage.ids import DocumentId, TurnId
from storage.incidents import CitationEventKind
from storage.turns import TurnOutcome, TurnRecord

__all__ = [
    "FALLBACK_NOTES",
    "NO_SOURCE",
    "PROMPT_LEAK",
    "cited_refs",
    "finish_turn",
    "log_turn",
]

CITATION = re.compile(r"\[(\d{1,3})\]")
MEMORY_TOOL = "search_memory"
SEARCH_TOOLS = frozenset({"search_knowledge", "search_private", "get_entry", MEMORY_TOOL})
_ENGLISH = verify_words("en")
NO_SOURCE = _ENGLISH.no_source
GROUNDING_RISK_CHARS = 300
SEARCH_TIMED_OUT = _ENGLISH.search_timed_out
PROMPT_LEAK = Refusal("prompt_leak", _ENGLISH.prompt_leak)
#: The line under an answer the sources gave instead of the model, by the fallback's reason
#: (English; every language's: `graphs.agent.verify_words`).
FALLBACK_NOTES = _ENGLISH.fallback


def _leak(ctx: AgentContext, state: AgentState) -> str | None:
    """Why the model's text this turn leaks the system prompt or the tools, or None: found
    while it streamed, or in everything it wrote this turn."""
    if found := state.get("prompt_leak"):
        return found
    messages = state.get("messages", [])
    text, answer = turn_model_text(messages), state.get("answer", "")
    return turn_leak_check(ctx.canary, messages).reason(text if answer in text else text + answer)


def cited_refs(answer: str) -> list[int]:
    """The citation numbers in an answer, first mention first, each once."""
    seen: list[int] = []
    for match in CITATION.finditer(answer):
        number = int(match.group(1))
        if number not in seen:
            seen.append(number)
    return seen


async def _valid_citations(
    ctx: AgentContext, state: AgentState, answer: str
) -> tuple[list[PassageRef], list[int]]:
    passages = state.get("passages", {})
    valid: list[PassageRef] = []
    dropped: list[int] = []
    for number in cited_refs(answer):
        ref = passages.get(number)
        if ref is not None and await _stored(ctx, state, ref):
            valid.append(ref)
        else:
            dropped.append(number)
    return valid, dropped


async def _stored(ctx: AgentContext, state: AgentState, ref: PassageRef) -> bool:
    """Whether a numbered source names something stored: a document, or the person's turn."""
    if ref.kind == "memory":
        if MEMORY_TOOL not in state.get("tools_used", []):
            return False
        record = await ctx.turns.get(TurnId(ref.document_id))
        return record is not None and record.user_id == state["turn"].user_id
    if ref.kind != "document":
        return False
    return await ctx.documents.get(DocumentId(ref.document_id)) is not None


def _memory_only(state: AgentState) -> bool:
    """Whether the only search this turn was of past conversations."""
    return SEARCH_TOOLS & set(state.get("tools_used", [])) == {MEMORY_TOOL}


def _strip(answer: str, dropped: list[int]) -> str:
    if not dropped:
        return answer
    gone = {str(number) for number in dropped}
    cleaned = CITATION.sub(lambda m: "" if m.group(1) in gone else m.group(0), answer)
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", cleaned).strip()


def _elapsed_ms(state: AgentState, now: datetime) -> int:
    received = datetime.fromisoformat(state["turn"].received_at)
    return max(0, int((now - received).total_seconds() * 1000))


async def log_turn(
    state: AgentState, runtime: Runtime[AgentContext], *, outcome: TurnOutcome, answer: str
) -> None:
    """Write (or update) this turn's row in `turn_log`."""
    ctx, turn = runtime.context, state["turn"]
    usage = state.get("usage") or TurnUsage()
    now = ctx.clock()
    await ctx.turns.log(
        TurnRecord(
            id=TurnId(turn.turn_id),
            thread_id=thread_id_of(turn),
            user_id=turn.user_id,
            chat_id=turn.chat_id,
            platform=turn.platform,
            outcome=outcome,
            model=usage.model,
            question=turn.text,
            answer=answer,
            created_at=datetime.fromisoformat(turn.received_at),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            cost_micros=usage.cost_micros,
            latency_ms=_elapsed_ms(state, now),
            node_latency_ms=dict(state.get("node_ms", {})),
        )
    )


async def _judge(
    ctx: AgentContext, state: AgentState, answer: str, words: VerifyWords
) -> tuple[str, list[PassageRef], bool]:
    """The answer to show, its valid citations, and whether it counts as unanswered."""
    turn = state["turn"]
    valid, dropped = await _valid_citations(ctx, state, answer)
    for number in dropped:
        await ctx.incidents.record_citation_event(
            TurnId(turn.turn_id),
            CitationEventKind.DROPPED_CITATION,
            f"[{number}] names no stored source",
        )
    answer = _strip(answer, dropped)
    order = first_use_order([ref.ref for ref in valid])
    answer = renumber(answer, order)
    valid = [dataclasses.replace(ref, ref=order[ref.ref]) for ref in valid]
    checked = defang_untrusted(answer, turn_texts(state.get("messages", []), turn.text))
    answer = checked.text
    await record_untrusted_links(
        ctx.incidents,
        checked,
        where="an answer",
        platform=turn.platform,
        chat_id=turn.chat_id,
        user_id=turn.user_id,
        now=ctx.clock(),
    )
    searched = bool(SEARCH_TOOLS & set(state.get("tools_used", [])))
    if state.get("finish_reason") == "refusal":
        return answer, [], True
    # A real model's answer was checked claim by claim already: one without any citation
    # stands on what needs none (the question, an action's outcome, what Lore is).
    checked_uncited = state.get("answered_by") == "model" and not (valid or dropped)
    if searched and not valid and not checked_uncited:
        return (words.no_memory if _memory_only(state) else words.no_source), [], True
    if not searched and not valid and len(answer) > GROUNDING_RISK_CHARS:
        await ctx.incidents.record_citation_event(
            TurnId(turn.turn_id),
            CitationEventKind.GROUNDING_RISK,
            f"{len(answer)} characters, no citation, no tool result",
        )
    return answer, valid, False


def _with_note(state: AgentState, answer: str, outcome: TurnOutcome, words: VerifyWords) -> str:
    """An answer the sources gave instead of the model, with the line that says why."""
    reason = state.get("fallback")
    if not reason or outcome is not TurnOutcome.ANSWERED or state.get("approval_id"):
        return answer
    return f"{answer}\n\n{words.fallback.get(reason, words.fallback['unverified'])}"


async def finish_turn(
    state: AgentState,
    runtime: Runtime[AgentContext],
    *,
    outcome: TurnOutcome | None = None,
    refusal: Refusal | None = None,
) -> str:
    """Decide the final answer, record it, stream citations and the end; return the answer."""
    ctx, turn = runtime.context, state["turn"]
    started = time.perf_counter()
    citations: list[PassageRef] = []
    words = verify_words(ctx.reply_language(turn))
    if refusal is not None:
        runtime.stream_writer(RefusalEvent(refusal.reason, refusal.message))
        answer, final = refusal.message, outcome or TurnOutcome.REFUSED
    elif state.get("error"):
        answer, final = state.get("error") or "", TurnOutcome.ERROR
        runtime.stream_writer(TurnError(answer))
    elif state.get("finish_reason") == "awaiting_approval":
        answer, final = state.get("answer", ""), TurnOutcome.AWAITING_APPROVAL
    elif (leak := _leak(ctx, state)) is not None:
        await ctx.incidents.record_guard(
            guard=PROMPT_LEAK.reason,
            reason=leak,
            platform=turn.platform,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            now=ctx.clock(),
        )
        runtime.stream_writer(RefusalEvent(PROMPT_LEAK.reason, words.prompt_leak))
        answer, final = words.prompt_leak, TurnOutcome.REFUSED
    else:
        answer, citations, unanswered = await _judge(ctx, state, state.get("answer", ""), words)
        final = TurnOutcome.REFUSED if unanswered else TurnOutcome.ANSWERED
        if unanswered and state.get("tool_timeouts"):
            # A search ran out of time: an error to tell, not a question the knowledge lacks.
            answer, citations, unanswered = words.search_timed_out, [], False
            final = TurnOutcome.ERROR
            runtime.stream_writer(TurnError(answer))
        if unanswered and not _memory_only(state):
            await ctx.turns.record_unanswered(
                user_id=turn.user_id,
                chat_id=turn.chat_id,
                question=turn.text,
                reason="no supporting source",
                now=ctx.clock(),
            )
        if unanswered:
            runtime.stream_writer(RefusalEvent("no_source", answer))
        answer = _with_note(state, answer, final, words)
    events = tuple(
        CitationEvent(ref.ref, ref.document_id, ref.title, ref.source, ref.private, ref.location)
        for ref in citations
    )
    for event in events:
        runtime.stream_writer(event)
    node_ms = dict(state.get("node_ms", {}))
    node_ms["verify"] = node_ms.get("verify", 0) + int((time.perf_counter() - started) * 1000)
    final_state: AgentState = {**state, "node_ms": node_ms}
    await log_turn(final_state, runtime, outcome=final, answer=answer)
    usage = state.get("usage") or TurnUsage()
    runtime.stream_writer(
        TurnDone(
            turn_id=turn.turn_id,
            outcome=final.value,
            answer=answer,
            citations=events,
            model=usage.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            cost_usd=usage.cost.dollars,
            latency_ms=_elapsed_ms(state, ctx.clock()),
            node_latency_ms=node_ms,
            fallback=state.get("fallback") or "",
        )
    )
    return answer
