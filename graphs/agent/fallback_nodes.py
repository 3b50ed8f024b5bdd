"""`check_answer` and `answer_offline`: a model's answer is delivered only as far as this turn's
sources support it; otherwise the sources answer directly.

`check_answer` reads the model's final text claim by claim (`graphs.agent.grounding`): it
keeps chat and supported claims, drops the rest (each recorded as a grounding risk), and
lets the answer through when what is left answers (a greeting needs no claim). An action
the person asked for ("tell the owner ...", "share my note ...") that the model did not
request is not answered in words either. Anything else becomes a fallback.

`answer_offline` runs the extractive answerer over the same conversation and tool results:
it quotes the best passages with citations, or refuses when none fits, or takes the step
the model did not (searching, asking the owner to approve). It costs nothing, so it also
answers when the budget is spent or the provider fails (`graphs.agent.generate_node`).
`verify` adds one line saying why the answer came from the sources.
"""

from __future__ import annotations

import logging
from typing import Literal

from langgraph.runtime import Runtime

from graphs.agent.context import AgentContext
from graphs.agent.evidence import turn_evidence, turn_language
from graphs.agent.grounding import ClaimChecker
from graphs.agent.model_messages import model_messages
from graphs.agent.nodes import Update, timed
from graphs.agent.retrieval_node import complete
from graphs.agent.state import AgentState
from graphs.agent.tools import offered_tools
from graphs.llm.types import ChatMessage
from storage.ids import TurnId
from storage.incidents import CitationEventKind

__all__ = ["answer_offline", "check_answer"]

logger = logging.getLogger(__name__)


async def _record_dropped(ctx: AgentContext, state: AgentState, reasons: list[str]) -> None:
    turn_id = TurnId(state["turn"].turn_id)
    for reason in reasons:
        await ctx.incidents.record_citation_event(
            turn_id, CitationEventKind.GROUNDING_RISK, f"claim dropped: {reason}"
        )


@timed("check_answer")
async def check_answer(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Keep what the sources support of the model's answer; else answer from the sources."""
    ctx = runtime.context
    if state.get("answered_by") != "model" or state.get("prompt_leak"):
        return {}
    plan = state.get("plan", "")
    if plan == "act" and not state.get("resume_from_approval"):
        logger.info("The model did not request the action the message asks for")
        return {"fallback": "unverified"}
    pinned = await ctx.documents.pinned_shared()
    question = state["turn"].text
    evidence = turn_evidence(state["messages"], question, pinned)
    checked = ClaimChecker(evidence, turn_language(question)).ground(state.get("answer", ""))
    await _record_dropped(ctx, state, [verdict.reason for verdict in checked.dropped])
    if checked.answers or (plan != "search" and checked.chat_only):
        return {"answer": checked.text()}
    logger.info(
        "Model answer not delivered: %d of %d claims supported",
        len(checked.supported),
        len(checked.claims),
    )
    return {"fallback": "unverified"}


@timed("answer_offline")
async def answer_offline(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """The extractive answerer's next step over this turn: tool calls, or its answer."""
    ctx = runtime.context
    model = ctx.fallback or ctx.model
    tools = offered_tools(state["turn"], hardened=state.get("hardened", False))
    choice: Literal["auto", "none"] = (
        "none" if state.get("tool_rounds", 0) >= ctx.limits.max_tool_rounds else "auto"
    )
    pinned = await ctx.documents.pinned_shared()
    completion = await complete(
        model,
        model_messages(ctx, {**state, "model_note": None}, pinned),
        tools=[tool.spec for tool in tools],
        tool_choice=choice,
        max_tokens=ctx.limits.max_answer_tokens,
    )
    calls = completion.tool_calls if choice == "auto" else ()
    if calls:
        return {
            "messages": [ChatMessage("assistant", completion.text, calls)],
            "pending_calls": list(calls),
        }
    return {
        "pending_calls": [],
        "answer": completion.text,
        "answered_by": "extractive",
        "finish_reason": completion.finish_reason,
        "error": None,
    }
