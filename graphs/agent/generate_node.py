"""`generate`: the one node that calls the configured model, booked by `metered_call`.

What the model streams passes three checks on its way to the edges: the leak guard (nothing
of the system prompt), then, beside a real model, the claim gate (only complete sentences
that are chat or supported by this turn's sources: `graphs.agent.claim_stream`), then the
renumbering of citations. A model stuck in a loop is stopped (`RepetitionWatch`).

When the model is done: tool calls the server did not parse but the model wrote as text are
read from the text (`graphs.agent.answer_markup`); a text answer goes to `check_answer`.
When it fails, beside a real model the turn is answered from the sources instead
(`fallback`): the budget is spent or unreadable, the provider is unreachable or broke off,
the prompt is too long, the answer was cut at the token limit or looped. A reply the server
could not read (a malformed tool call) is told to the model once, and it tries again.
Without a fallback (the extractive answerer is the model) failures end the turn as before.
"""

from __future__ import annotations

import logging
from typing import Literal

from langgraph.runtime import Runtime

from graphs.agent.answer_markup import read_text_calls, strip_markup
from graphs.agent.citation_order import StreamRenumberer
from graphs.agent.claim_stream import ClaimStreamGate, RepetitionWatch
from graphs.agent.context import AgentContext
from graphs.agent.events import AnswerDelta
from graphs.agent.evidence import turn_evidence, turn_language
from graphs.agent.grounding import ClaimChecker
from graphs.agent.leak_stream import StreamLeakGuard, turn_leak_check, turn_model_text
from graphs.agent.model_messages import model_messages
from graphs.agent.nodes import Update, budget_refusal, timed
from graphs.agent.state import AgentState, TurnUsage
from graphs.agent.tools import offered_tools
from graphs.agent.verify import PROMPT_LEAK
from graphs.llm.metered import BudgetRefusedError, MeteredCompletion, metered_call
from graphs.llm.types import (
    ChatMessage,
    ContextTooLongError,
    ModelOutputError,
    ProviderError,
    ProviderStreamError,
    ProviderUnavailableError,
    ToolCall,
)

__all__ = ["UNREADABLE_REPLY", "generate"]

logger = logging.getLogger(__name__)

UNREADABLE_REPLY = (
    "Your last reply could not be read: it held a tool call that was not valid. To call a "
    'tool, reply with the call alone, as {"name": "<tool>", "arguments": {...}}. To answer, '
    "write plain sentences, each with the number of the source it comes from, like [1]."
)
#: What a failed call means for the turn, beside a real model (its fallback reason).
_FAILURES: dict[type[ProviderError], str] = {
    ContextTooLongError: "context",
    ProviderStreamError: "incomplete",
    ProviderUnavailableError: "unavailable",
}
_ERRORS = {
    "incomplete": "The answer broke off half-way. Please ask again.",
    "unavailable": "The language model is unavailable right now. Please try again soon.",
    "context": "This conversation is too long for the language model. Send /new to start afresh.",
}


def _failure(ctx: AgentContext, state: AgentState, exc: ProviderError) -> Update:
    """A failed call: the model is told once about a reply the server could not read; else
    the turn is answered from the sources (or ends with an error, without a fallback)."""
    if isinstance(exc, ModelOutputError) and not state.get("model_note"):
        logger.warning("The model's reply could not be read; telling it once: %s", exc)
        return {"model_note": UNREADABLE_REPLY}
    reason = next(code for kind, code in _FAILURES.items() if isinstance(exc, kind))
    logger.warning("Model call failed (%s): %s", reason, exc)
    if ctx.fallback is not None:
        return {"fallback": reason}
    return {"error": _ERRORS[reason]}


def _calls_and_text(
    ctx: AgentContext, call: MeteredCompletion, names: set[str]
) -> tuple[tuple[ToolCall, ...], str]:
    """The tool calls (the server's, else those written in the text) and the text to keep."""
    completion = call.completion
    if completion.tool_calls:
        return completion.tool_calls, strip_markup(completion.text, names)
    if ctx.fallback is None:
        return (), completion.text
    written = read_text_calls(completion.text, names)
    if written.calls:
        logger.info("Read %d tool call(s) the model wrote as text", len(written.calls))
    return written.calls, written.text


async def _call_model(
    ctx: AgentContext, state: AgentState, runtime: Runtime[AgentContext]
) -> tuple[MeteredCompletion, StreamLeakGuard]:
    turn = state["turn"]
    hardened = state.get("hardened", False)
    tools = offered_tools(turn, hardened=hardened)
    choice: Literal["auto", "none"] = (
        "none" if state.get("tool_rounds", 0) >= ctx.limits.max_tool_rounds else "auto"
    )
    pinned = await ctx.documents.pinned_shared()
    # Citations stream numbered 1..n in order of first use, as verify will number them.
    citations = StreamRenumberer(state.get("passages", {}).keys())

    def show(text: str) -> None:
        if shown := citations.feed(text):
            runtime.stream_writer(AnswerDelta(shown))

    history = state["messages"]
    sink = show
    gate: ClaimStreamGate | None = None
    if ctx.fallback is not None:
        evidence = turn_evidence(history, turn.text, pinned)
        gate = ClaimStreamGate(ClaimChecker(evidence, turn_language(turn.text)), show)
        sink = gate.feed
    # Nothing that could be part of a prompt leak is streamed (graphs.agent.leak_stream).
    guard = StreamLeakGuard(
        turn_leak_check(ctx.canary, history), sink, context=turn_model_text(history)
    )
    watch = RepetitionWatch()

    def on_text(text: str) -> None:
        watch.feed(text)
        guard.feed(text)

    call = await metered_call(
        ctx.meter,
        ctx.model,
        model_messages(ctx, state, pinned),
        purpose="model call",
        max_tokens=ctx.limits.max_answer_tokens,
        tools=[tool.spec for tool in tools],
        tool_choice=choice,
        on_text=on_text,
    )
    guard.finish()
    if gate is not None and guard.leak is None:
        gate.finish()
    if rest := citations.flush():
        runtime.stream_writer(AnswerDelta(rest))
    return call, guard


async def _budget_refused(ctx: AgentContext, state: AgentState, exc: BudgetRefusedError) -> Update:
    turn = state["turn"]
    await ctx.incidents.record_guard(
        guard=exc.reason,
        reason="model call reservation refused",
        platform=turn.platform,
        chat_id=turn.chat_id,
        user_id=turn.user_id,
        now=ctx.clock(),
    )
    if ctx.fallback is not None:
        return {"fallback": exc.reason}
    return {"refusal": budget_refusal(exc.reason, ctx.reply_language(turn))}


@timed("generate")
async def generate(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Call the model once, streaming its checked text; see the module docstring."""
    ctx = runtime.context
    try:
        call, guard = await _call_model(ctx, state, runtime)
    except BudgetRefusedError as exc:
        return await _budget_refused(ctx, state, exc)
    except ProviderError as exc:
        return _failure(ctx, state, exc)
    completion = call.completion
    usage = state.get("usage", TurnUsage()).plus(
        TurnUsage(
            completion.model,
            call.usage.prompt_tokens,
            call.usage.completion_tokens,
            call.usage.cached_tokens,
            call.cost.micros,
        )
    )
    if guard.leak is not None:
        # No tool runs for a model that is leaking its prompt: verify refuses the turn.
        logger.warning("Model text leaked the system prompt: %s", guard.leak)
        return {
            "pending_calls": [],
            "answer": PROMPT_LEAK.message,
            "prompt_leak": guard.leak,
            "finish_reason": completion.finish_reason,
            "usage": usage,
        }
    tools = offered_tools(state["turn"], hardened=state.get("hardened", False))
    calls, text = _calls_and_text(ctx, call, {tool.name for tool in tools})
    out_of_rounds = state.get("tool_rounds", 0) >= ctx.limits.max_tool_rounds
    if calls and out_of_rounds:  # calls from a model that ignores tool_choice "none"
        logger.warning("Model called tools after its last tool round; calls ignored")
        calls = ()
    if calls:
        return {
            "messages": [ChatMessage("assistant", text, calls)],
            "pending_calls": list(calls),
            "model_note": None,
            "usage": usage,
        }
    update: Update = {
        "pending_calls": [],
        "answer": text,
        # Beside a fallback the model is a real one, whose claims are checked next.
        "answered_by": "model" if ctx.fallback is not None else "extractive",
        "finish_reason": completion.finish_reason,
        "model_note": None,
        "usage": usage,
    }
    if completion.finish_reason == "length" and ctx.fallback is not None:
        update["fallback"] = "incomplete"  # half an answer is not delivered
    return update
