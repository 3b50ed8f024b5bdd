"""The agent graph's nodes: guard_input, refuse, generate, execute_tools, verify (the approval
nodes are in `graphs.agent.approval_nodes`). `generate` is the only node that calls a model."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from functools import wraps
from typing import Any, Literal, Protocol

from langgraph.runtime import Runtime

from graphs.agent.citation_order import StreamRenumberer
from graphs.agent.context import AgentContext
from graphs.agent.events import AnswerDelta, ToolStatus
from graphs.agent.guards_node import GuardFlag, check_turn
from graphs.agent.leak_stream import StreamLeakGuard, turn_leak_check, turn_model_text
from graphs.agent.prompts import system_prompt
from graphs.agent.state import AgentState, PassageRef, Refusal, TurnUsage
from graphs.agent.tools import TOOLS, ToolArgumentError, ToolResult, offered_tools, parse_arguments
from graphs.agent.verify import PROMPT_LEAK, finish_turn
from graphs.llm.data_blocks import as_data, data_key
from graphs.llm.metered import BudgetRefusedError, metered_call
from graphs.llm.types import ChatMessage, ProviderStreamError, ProviderUnavailableError, ToolCall
from storage.turns import TurnOutcome

__all__ = [
    "execute_tools",
    "generate",
    "guard_input",
    "next_ref",
    "refuse",
    "route_after_generate",
    "route_after_guard",
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


BUDGET_SPENT = Refusal(
    "budget_spent", "Today's budget for answers is used up. Please try again tomorrow."
)
BUDGET_UNAVAILABLE = Refusal(
    "budget_unavailable", "I can't check today's budget right now, so I won't answer. Sorry!"
)


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
    if outcome is not None and not isinstance(outcome, GuardFlag):
        return {**fresh, "refusal": Refusal(outcome.reason, outcome.message)}
    return {
        **fresh,
        "hardened": isinstance(outcome, GuardFlag),
        "messages": [ChatMessage("user", turn.text)],
        "thread_turns": turns + 1,
    }


def route_after_guard(state: AgentState) -> Literal["refuse", "generate"]:
    """Refused turns end politely; the rest go to the model."""
    return "refuse" if state.get("refusal") else "generate"


@timed("refuse")
async def refuse(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Tell the person why, log the turn; no model token is spent."""
    refusal = state.get("refusal") or BUDGET_SPENT
    await finish_turn(state, runtime, outcome=TurnOutcome.REFUSED, refusal=refusal)
    return {}


def _history(messages: Sequence[ChatMessage], keep_user_turns: int) -> list[ChatMessage]:
    """The last turns of the conversation, cut at a user message (never inside a tool call)."""
    starts = [i for i, message in enumerate(messages) if message.role == "user"]
    if len(starts) <= keep_user_turns:
        return list(messages)
    return list(messages[starts[-keep_user_turns] :])


BUDGET_REFUSALS = {"budget_spent": BUDGET_SPENT, "budget_unavailable": BUDGET_UNAVAILABLE}


@timed("generate")
async def generate(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Call the model once, streaming its text; the call is booked by `metered_call`."""
    ctx, turn = runtime.context, state["turn"]
    hardened = state.get("hardened", False)
    tools = offered_tools(turn, hardened=hardened)
    choice: Literal["auto", "none"] = (
        "none" if state.get("tool_rounds", 0) >= ctx.limits.max_tool_rounds else "auto"
    )
    pinned = await ctx.documents.pinned_shared()
    system = system_prompt(
        now=ctx.clock(),
        timezone=turn.timezone,
        is_group=turn.is_group,
        role=turn.role,
        pinned=pinned,
        pinned_token_budget=ctx.limits.pinned_token_budget,
        canary=ctx.canary,
        hardened=hardened,
    )
    messages = [ChatMessage("system", system), *_history(state["messages"], 6)]

    # Citations stream numbered 1..n in order of first use, as verify will number them.
    citations = StreamRenumberer(state.get("passages", {}).keys())

    def show(text: str) -> None:
        if shown := citations.feed(text):
            runtime.stream_writer(AnswerDelta(shown))

    # Nothing that could be part of a prompt leak is streamed (graphs.agent.leak_stream).
    history = state["messages"]
    guard = StreamLeakGuard(
        turn_leak_check(ctx.canary, history), show, context=turn_model_text(history)
    )

    try:
        call = await metered_call(
            ctx.meter,
            ctx.model,
            messages,
            purpose="model call",
            max_tokens=ctx.limits.max_answer_tokens,
            tools=[tool.spec for tool in tools],
            tool_choice=choice,
            on_text=guard.feed,
        )
    except BudgetRefusedError as exc:
        await ctx.incidents.record_guard(
            guard=exc.reason,
            reason="model call reservation refused",
            platform=turn.platform,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            now=ctx.clock(),
        )
        return {"refusal": BUDGET_REFUSALS[exc.reason]}
    except ProviderUnavailableError as exc:
        logger.warning("Model unavailable: %s", exc)
        return {"error": "The language model is unavailable right now. Please try again soon."}
    except ProviderStreamError as exc:
        logger.warning("Model stream broke off: %s", exc)
        return {"error": "The answer broke off half-way. Please ask again."}
    guard.finish()
    if rest := citations.flush():
        runtime.stream_writer(AnswerDelta(rest))
    completion, usage = call.completion, call.usage
    spent = TurnUsage(
        completion.model,
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cached_tokens,
        call.cost.micros,
    )
    if guard.leak is not None:
        # No tool runs for a model that is leaking its prompt, and the leak is not kept in
        # the conversation: verify refuses the turn.
        logger.warning("Model text leaked the system prompt: %s", guard.leak)
        return {
            "messages": [ChatMessage("assistant", PROMPT_LEAK.message)],
            "pending_calls": [],
            "answer": PROMPT_LEAK.message,
            "prompt_leak": guard.leak,
            "finish_reason": completion.finish_reason,
            "usage": state.get("usage", TurnUsage()).plus(spent),
        }
    # Out of tool rounds: calls from a model that ignores tool_choice "none" are dropped.
    calls = completion.tool_calls if choice == "auto" else ()
    if len(calls) != len(completion.tool_calls):
        logger.warning("Model called tools after its last tool round; calls ignored")
    return {
        "messages": [ChatMessage("assistant", completion.text, calls)],
        "pending_calls": list(calls),
        "answer": completion.text,
        "finish_reason": completion.finish_reason,
        "usage": state.get("usage", TurnUsage()).plus(spent),
    }


def route_after_generate(
    state: AgentState,
) -> Literal["refuse", "verify", "execute_tools", "request_approval"]:
    """Tools to run, an approval to ask for, or an answer to check."""
    if state.get("refusal"):
        return "refuse"
    calls = state.get("pending_calls", [])
    if state.get("error") or not calls:
        return "verify"
    # Only an offered tool can ask for approval: a call for one that is not offered here (a
    # hardened turn offers none) runs as "no such tool" instead of reaching the owner.
    offered = offered_tools(state["turn"], hardened=state.get("hardened", False))
    if any(tool.high_risk and tool.name in {call.name for call in calls} for tool in offered):
        return "request_approval"
    return "execute_tools"


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


@timed("execute_tools")
async def execute_tools(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Run the low-risk tools the model asked for; number the sources they return."""
    ctx = runtime.context
    key = data_key(ctx.canary, state["turn"].turn_id)
    passages = dict(state.get("passages", {}))
    results: list[ChatMessage] = []
    used = list(state.get("tools_used", []))
    flagged = state.get("flagged_passages", 0)
    timeouts = state.get("tool_timeouts", 0)
    for call in state.get("pending_calls", []):
        tool = TOOLS.get(call.name)
        runtime.stream_writer(ToolStatus(call.name, tool.status if tool else "Working..."))
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
        "tool_rounds": state.get("tool_rounds", 0) + 1,
    }


@timed("verify")
async def verify(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Check citations, book the turn, record what could not be answered."""
    answer = await finish_turn(state, runtime)
    return {"answer": answer}


def now_of(ctx: AgentContext) -> datetime:
    """The context's clock (a seam for tests that move time)."""
    return ctx.clock()
