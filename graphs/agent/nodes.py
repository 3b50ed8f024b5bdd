"""The agent graph's small nodes and its routers: guard_input, refuse, execute_tools, verify.

The others live beside this module: `retrieve` (`graphs.agent.retrieval_node`), `generate`
(`graphs.agent.generate_node`, the only node that calls the configured model),
`check_answer` and `answer_offline` (`graphs.agent.fallback_nodes`), and the approval nodes
(`graphs.agent.approval_nodes`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from functools import wraps
from typing import Any, Literal, Protocol

from langgraph.runtime import Runtime

from graphs.agent.context import AgentContext
from graphs.agent.events import ToolStatus
from graphs.agent.guard_words import guard_words
from graphs.agent.guards_node import GuardFlag, check_turn
from graphs.agent.state import AgentState, PassageRef, Refusal, TurnUsage
from graphs.agent.status_lines import status_line
from graphs.agent.tools import TOOLS, ToolArgumentError, ToolResult, offered_tools, parse_arguments
from graphs.agent.verify import finish_turn
from graphs.llm.data_blocks import as_data, data_key
from graphs.llm.types import ChatMessage, ToolCall
from storage.turns import TurnOutcome

__all__ = [
    "BUDGET_REFUSALS",
    "Update",
    "budget_refusal",
    "execute_tools",
    "guard_input",
    "next_ref",
    "refuse",
    "route_after_check",
    "route_after_generate",
    "route_after_guard",
    "route_after_offline",
    "route_after_tools",
    "route_to_answer",
    "run_calls",
    "run_tool",
    "timed",
    "verify",
]

logger = logging.getLogger(__name__)

Update = dict[str, Any]


class Node(Protocol):
    """A node: state and runtime in, a state update out."""

    def __call__(self, state: AgentState, runtime: Runtime[AgentContext]) -> Awaitable[Update]:
        """Run the node."""


BUDGET_REFUSALS = frozenset({"budget_spent", "budget_unavailable"})


def budget_refusal(reason: str, language: str) -> Refusal:
    """The refusal of a spent ("budget_spent") or unreadable budget, in `language`."""
    words = guard_words(language)
    spent = reason == "budget_spent"
    return Refusal(reason, words.budget_spent if spent else words.budget_unavailable)


def timed(name: str) -> Callable[[Node], Node]:
    """Add the node's wall time (ms) to the turn's `node_ms`."""

    def wrap(node: Node) -> Node:
        @wraps(node)
        async def run(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
            started = time.perf_counter()
            update = await node(state, runtime)
            spent = int((time.perf_counter() - started) * 1000)
            base = dict(update["node_ms"] if "node_ms" in update else state.get("node_ms", {}))
            base[name] = base.get(name, 0) + spent
            return {**update, "node_ms": base}

        return run

    return wrap


def budget_day(ctx: AgentContext) -> str:
    """Today in the budget's timezone (days roll over at the owner's midnight)."""
    return ctx.meter.day()


@timed("guard_input")
async def guard_input(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Zero-token checks; reset the turn's state; admit the message into the conversation."""
    ctx, turn = runtime.context, state["turn"]
    fresh: Update = {
        "refusal": None,
        "hardened": False,
        "error": None,
        "prompt_leak": None,
        "tool_rounds": 0,
        "passages": {},
        "flagged_passages": 0,
        "tool_timeouts": 0,
        "pending_calls": [],
        "approval_id": None,
        "answer": "",
        "answered_by": "",
        "plan": "",
        "fallback": None,
        "model_note": None,
        "finish_reason": "",
        "tools_used": [],
        "usage": TurnUsage(),
        "node_ms": {},
    }
    turns = state.get("thread_turns", 0)
    outcome = await check_turn(ctx, turn, turns, budget_day(ctx))
    if outcome is not None:
        await ctx.incidents.record_guard(
            guard=outcome.reason,
            reason=outcome.detail,
            platform=turn.platform,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            now=ctx.clock(),
        )
    # Beside a real model, a spent or unreadable budget is no wall: the extractive answerer
    # costs nothing, so it answers from the sources (the incident is recorded all the same).
    to_sources = outcome is not None and outcome.reason in BUDGET_REFUSALS and ctx.fallback
    if outcome is not None and not isinstance(outcome, GuardFlag) and not to_sources:
        return {**fresh, "refusal": Refusal(outcome.reason, outcome.message)}
    return {
        **fresh,
        "hardened": isinstance(outcome, GuardFlag),
        "fallback": outcome.reason if to_sources and outcome is not None else None,
        "messages": [ChatMessage("user", turn.text)],
        "thread_turns": turns + 1,
    }


def route_after_guard(state: AgentState) -> Literal["refuse", "retrieve"]:
    """Refused turns end politely; the rest look up their sources, then get an answer."""
    return "refuse" if state.get("refusal") else "retrieve"


@timed("refuse")
async def refuse(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Tell the person why, log the turn; no model token is spent."""
    language = runtime.context.reply_language(state["turn"])
    refusal = state.get("refusal") or budget_refusal("budget_spent", language)
    await finish_turn(state, runtime, outcome=TurnOutcome.REFUSED, refusal=refusal)
    return {}


def _route_calls(state: AgentState) -> Literal["execute_tools", "request_approval"]:
    # Only an offered tool can ask for approval: a call for one that is not offered here (a
    # hardened turn offers none) runs as "no such tool" instead of reaching the owner.
    calls = state.get("pending_calls", [])
    offered = offered_tools(state["turn"], hardened=state.get("hardened", False))
    if any(tool.high_risk and tool.name in {call.name for call in calls} for tool in offered):
        return "request_approval"
    return "execute_tools"


def route_after_generate(
    state: AgentState,
) -> Literal[
    "refuse",
    "verify",
    "execute_tools",
    "request_approval",
    "generate",
    "answer_offline",
    "check_answer",
]:
    """A refusal, the fallback, an error, tools to run or an approval to ask for, another
    try after a reply the server could not read, or an answer to check."""
    if state.get("refusal"):
        return "refuse"
    if state.get("fallback"):
        return "answer_offline"
    if state.get("error"):
        return "verify"
    if state.get("pending_calls"):
        return _route_calls(state)
    if state.get("model_note"):
        return "generate"
    return "check_answer"


def route_after_offline(
    state: AgentState,
) -> Literal["verify", "execute_tools", "request_approval"]:
    """The extractive answerer's tool calls, or its answer to finish."""
    if state.get("error") or not state.get("pending_calls"):
        return "verify"
    return _route_calls(state)


def route_to_answer(state: AgentState) -> Literal["generate", "answer_offline"]:
    """The model answers, unless the turn is to be answered from the sources directly."""
    return "answer_offline" if state.get("fallback") else "generate"


def route_after_check(state: AgentState) -> Literal["verify", "answer_offline"]:
    """A checked answer is finished; a rejected one is answered from the sources instead."""
    return "answer_offline" if state.get("fallback") else "verify"


def next_ref(passages: dict[int, PassageRef]) -> int:
    return max(passages, default=0) + 1


async def run_tool(
    ctx: AgentContext, state: AgentState, call: ToolCall, first_ref: int
) -> ToolResult:
    turn = state["turn"]
    tool = TOOLS.get(call.name)
    if tool is None or tool not in offered_tools(turn, hardened=state.get("hardened", False)):
        return ToolResult({"error": f"There is no tool called {call.name!r} here."})
    try:
        arguments = parse_arguments(tool, call.arguments)
        async with asyncio.timeout(ctx.limits.tool_timeout_seconds):
            return await tool.run(ctx, turn, arguments, first_ref)
    except ToolArgumentError as exc:
        return ToolResult({"error": str(exc)})
    except TimeoutError:
        logger.warning("Tool %s ran out of time", call.name)
        return ToolResult(
            {"error": f"{call.name} took too long; try a narrower request."}, timed_out=True
        )
    except Exception:  # a tool failure is a tool result, never a crashed turn
        logger.exception("Tool %s failed", call.name)
        return ToolResult({"error": f"{call.name} failed; please try again."})


async def run_calls(
    state: AgentState, runtime: Runtime[AgentContext], calls: Sequence[ToolCall]
) -> Update:
    """Run low-risk tool calls; their results as tool messages, their sources numbered."""
    ctx = runtime.context
    key = data_key(ctx.canary, state["turn"].turn_id)
    passages = dict(state.get("passages", {}))
    results: list[ChatMessage] = []
    used = list(state.get("tools_used", []))
    flagged = state.get("flagged_passages", 0)
    timeouts = state.get("tool_timeouts", 0)
    language = ctx.reply_language(state["turn"])
    for call in calls:
        runtime.stream_writer(ToolStatus(call.name, status_line(call.name, language)))
        result = await run_tool(ctx, state, call, next_ref(passages))
        passages.update({ref.ref: ref for ref in result.passages})
        flagged += result.flagged
        timeouts += result.timed_out
        content = as_data(call.name, result.content(), key)
        results.append(ChatMessage("tool", content, tool_call_id=call.id, name=call.name))
        used.append(call.name)
    return {
        "messages": results,
        "passages": passages,
        "flagged_passages": flagged,
        "tool_timeouts": timeouts,
        "pending_calls": [],
        "tools_used": used,
    }


@timed("execute_tools")
async def execute_tools(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Run the low-risk tools the model asked for; number the sources they return."""
    update = await run_calls(state, runtime, state.get("pending_calls", []))
    return {**update, "tool_rounds": state.get("tool_rounds", 0) + 1}


def route_after_tools(state: AgentState) -> Literal["generate", "answer_offline"]:
    """Back to whoever asked for the tools: the model, or the extractive answerer."""
    return route_to_answer(state)


@timed("verify")
async def verify(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Check citations, book the turn, record what could not be answered. The conversation
    keeps the answer the person read, never the model's unchecked text."""
    answer = await finish_turn(state, runtime)
    if state.get("error") or state.get("approval_id"):
        return {"answer": answer}
    return {"answer": answer, "messages": [ChatMessage("assistant", answer)]}


def now_of(ctx: AgentContext) -> datetime:
    """The context's clock (a seam for tests that move time)."""
    return ctx.clock()
