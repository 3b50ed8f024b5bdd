"""The agent graph's nodes: guard_input, refuse, generate, execute_tools, request_approval,
await_approval, verify. `generate` is the only node that calls a model."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from datetime import datetime
from functools import wraps
from typing import Any, Literal, Protocol

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graphs.agent.citation_order import StreamRenumberer
from graphs.agent.context import AgentContext
from graphs.agent.events import AnswerDelta, ApprovalPending, ToolStatus
from graphs.agent.guards_node import first_refusal
from graphs.agent.prompts import system_prompt
from graphs.agent.state import AgentState, PassageRef, Refusal, TurnUsage, chat_thread_id
from graphs.agent.tools import TOOLS, ToolArgumentError, ToolResult, offered_tools, parse_arguments
from graphs.agent.verify import finish_turn
from graphs.llm.pricing import call_cost, estimate_tokens, worst_case_cost
from graphs.llm.types import (
    ChatMessage,
    Completion,
    ProviderStreamError,
    ProviderUnavailableError,
    ToolCall,
    Usage,
)
from storage.budget import BudgetUnavailableError, Reservation
from storage.budget import budget_day as ledger_day
from storage.ids import ApprovalId
from storage.turns import TurnOutcome

__all__ = [
    "await_approval",
    "execute_tools",
    "generate",
    "guard_input",
    "refuse",
    "request_approval",
    "route_after_generate",
    "route_after_guard",
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
SKIPPED = json.dumps({"error": "Not run: one action that needs approval at a time."})
AWAITING_OWNER = (
    "This needs the owner's approval, so I've asked them. I'll tell you here when they decide."
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
    return ledger_day(ctx.clock(), ctx.limits.budget_timezone)


@timed("guard_input")
async def guard_input(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Zero-token checks; reset the turn's state; admit the message into the conversation."""
    ctx, turn = runtime.context, state["turn"]
    fresh: Update = {
        "refusal": None,
        "error": None,
        "tool_rounds": 0,
        "passages": {},
        "pending_calls": [],
        "approval_id": None,
        "answer": "",
        "finish_reason": "",
        "tools_used": [],
        "usage": TurnUsage(),
        "node_ms": {},
    }
    turns = state.get("thread_turns", 0)
    refusal = await first_refusal(ctx, turn, turns, budget_day(ctx))
    if refusal is not None:
        await ctx.incidents.record_guard(
            guard=refusal.reason,
            reason=refusal.detail,
            platform=turn.platform,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            now=ctx.clock(),
        )
        return {**fresh, "refusal": Refusal(refusal.reason, refusal.message)}
    return {**fresh, "messages": [ChatMessage("user", turn.text)], "thread_turns": turns + 1}


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


async def _reserve(ctx: AgentContext, estimate: int) -> Reservation | Refusal:
    worst = worst_case_cost(ctx.price, estimate, ctx.limits.max_answer_tokens)
    micros = math.ceil(worst * 1_000_000)
    try:
        reservation = await ctx.budget.reserve(
            budget_day(ctx), micros, ctx.limits.daily_budget_micros, purpose="model call"
        )
    except BudgetUnavailableError:
        return BUDGET_UNAVAILABLE
    return reservation if reservation is not None else BUDGET_SPENT


@timed("generate")
async def generate(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Call the model once, streaming its text; book what it cost."""
    ctx, turn = runtime.context, state["turn"]
    tools = offered_tools(turn)
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
    )
    messages = [ChatMessage("system", system), *_history(state["messages"], 6)]
    specs = [tool.spec for tool in tools]
    estimate = estimate_tokens(
        "".join(m.content for m in messages) + json.dumps([s.parameters for s in specs])
    )
    reservation = await _reserve(ctx, estimate)
    if isinstance(reservation, Refusal):
        await ctx.incidents.record_guard(
            guard=reservation.reason,
            reason="model call reservation refused",
            platform=turn.platform,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            now=ctx.clock(),
        )
        return {"refusal": reservation}
    try:
        known = state.get("passages", {}).keys()
        completion = await _stream(ctx, runtime, messages, specs, choice, known=known)
    except ProviderUnavailableError as exc:
        await ctx.budget.release(reservation)
        logger.warning("Model unavailable: %s", exc)
        return {"error": "The language model is unavailable right now. Please try again soon."}
    except ProviderStreamError as exc:
        await ctx.budget.settle(reservation, reservation.amount_micros)  # unknown cost: fail closed
        logger.warning("Model stream broke off: %s", exc)
        return {"error": "The answer broke off half-way. Please ask again."}
    usage = completion.usage
    if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
        usage = Usage(estimate, estimate_tokens(completion.text), 0)
    cost = math.ceil(call_cost(ctx.price, usage) * 1_000_000)
    await ctx.budget.settle(reservation, cost)
    spent = TurnUsage(
        completion.model, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, cost
    )
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


async def _stream(
    ctx: AgentContext,
    runtime: Runtime[AgentContext],
    messages: list[ChatMessage],
    specs: list[Any],
    choice: Literal["auto", "none"],
    *,
    known: Collection[int],
) -> Completion:
    completion: Completion | None = None
    citations = StreamRenumberer(known)
    async for event in ctx.model.stream(
        messages, tools=specs, tool_choice=choice, max_tokens=ctx.limits.max_answer_tokens
    ):
        if isinstance(event, Completion):
            completion = event
        elif event.text and (shown := citations.feed(event.text)):
            runtime.stream_writer(AnswerDelta(shown))
    if rest := citations.flush():
        runtime.stream_writer(AnswerDelta(rest))
    if completion is None:
        raise ProviderStreamError("The model stream ended without a completion")
    return completion


def route_after_generate(
    state: AgentState,
) -> Literal["refuse", "verify", "execute_tools", "request_approval"]:
    """Tools to run, an approval to ask for, or an answer to check."""
    if state.get("refusal"):
        return "refuse"
    calls = state.get("pending_calls", [])
    if state.get("error") or not calls:
        return "verify"
    if any(TOOLS.get(call.name) is not None and TOOLS[call.name].high_risk for call in calls):
        return "request_approval"
    return "execute_tools"


def _next_ref(passages: dict[int, PassageRef]) -> int:
    return max(passages, default=0) + 1


async def _run_tool(
    ctx: AgentContext, state: AgentState, call: ToolCall, first_ref: int
) -> ToolResult:
    turn = state["turn"]
    tool = TOOLS.get(call.name)
    if tool is None or tool not in offered_tools(turn):
        return ToolResult({"error": f"There is no tool called {call.name!r} here."})
    try:
        arguments = parse_arguments(tool, call.arguments)
        async with asyncio.timeout(ctx.limits.tool_timeout_seconds):
            return await tool.run(ctx, turn, arguments, first_ref)
    except ToolArgumentError as exc:
        return ToolResult({"error": str(exc)})
    except TimeoutError:
        return ToolResult({"error": f"{call.name} took too long; try a narrower request."})
    except Exception:  # a tool failure is a tool result, never a crashed turn
        logger.exception("Tool %s failed", call.name)
        return ToolResult({"error": f"{call.name} failed; please try again."})


@timed("execute_tools")
async def execute_tools(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Run the low-risk tools the model asked for; number the sources they return."""
    ctx = runtime.context
    passages = dict(state.get("passages", {}))
    results: list[ChatMessage] = []
    used = list(state.get("tools_used", []))
    for call in state.get("pending_calls", []):
        tool = TOOLS.get(call.name)
        runtime.stream_writer(ToolStatus(call.name, tool.status if tool else "Working..."))
        result = await _run_tool(ctx, state, call, _next_ref(passages))
        passages.update({ref.ref: ref for ref in result.passages})
        results.append(ChatMessage("tool", result.content(), tool_call_id=call.id, name=call.name))
        used.append(call.name)
    return {
        "messages": results,
        "passages": passages,
        "pending_calls": [],
        "tools_used": used,
        "tool_rounds": state.get("tool_rounds", 0) + 1,
    }


async def _summary(ctx: AgentContext, call: ToolCall, arguments: dict[str, str]) -> str:
    if call.name == "draft_contact_message":
        return f"Send you this message: “{arguments['message']}”"
    title = arguments.get("document_id", "")
    document = await ctx.documents.get(title)  # type: ignore[arg-type]
    if document is not None:
        title = document.title
    return f"Publish their private document “{title}” to the shared knowledge"


@timed("request_approval")
async def request_approval(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Store the request for the owners and tell the requester; the turn ends here, and the
    request waits in its own approval thread (see `graphs.agent.graph`)."""
    ctx, turn = runtime.context, state["turn"]
    calls = state.get("pending_calls", [])
    call = next(c for c in calls if c.name in TOOLS and TOOLS[c.name].high_risk)
    results = [
        ChatMessage("tool", SKIPPED, tool_call_id=other.id, name=other.name)
        for other in calls
        if other is not call
    ]
    try:
        arguments = parse_arguments(TOOLS[call.name], call.arguments)
    except ToolArgumentError as exc:
        error = ChatMessage(
            "tool", json.dumps({"error": str(exc)}), tool_call_id=call.id, name=call.name
        )
        return {"messages": [*results, error], "pending_calls": []}
    approval = await ctx.approvals.create(
        thread_id=chat_thread_id(turn.platform, turn.chat_id, turn.user_id),
        requester_user_id=turn.user_id,
        chat_id=turn.chat_id,
        platform=turn.platform,
        tool_name=call.name,
        arguments_json=json.dumps(arguments),
        summary=await _summary(ctx, call, arguments),
        now=ctx.clock(),
        ttl=ctx.limits.approval_ttl,
    )
    runtime.stream_writer(
        ApprovalPending(
            approval.id, call.name, approval.summary, turn.user_id, approval.expires_at.isoformat()
        )
    )
    waiting = {"status": "awaiting_owner_approval", "approval_id": approval.id}
    results.append(ChatMessage("tool", json.dumps(waiting), tool_call_id=call.id, name=call.name))
    return {
        "messages": results,
        "pending_calls": [],
        "approval_id": approval.id,
        "answer": AWAITING_OWNER,
        "finish_reason": "awaiting_approval",
        "tools_used": [*state.get("tools_used", []), call.name],
    }


@timed("await_approval")
async def await_approval(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Pause until the owner decides (survives restarts); run the tool at most once if approved."""
    ctx = runtime.context
    approval_id = ApprovalId(state.get("approval_id") or "")
    decision = interrupt({"approval_id": approval_id})
    call = state["pending_calls"][0]
    approved = isinstance(decision, dict) and decision.get("approved") is True
    if not approved:
        reason = "expired" if isinstance(decision, dict) and decision.get("expired") else "rejected"
        result = ToolResult({"status": "rejected", "reason": f"The owner {reason} this request."})
    elif await ctx.approvals.start_execution(approval_id, ctx.clock()):
        result = await _run_tool(ctx, state, call, _next_ref(state.get("passages", {})))
        await ctx.approvals.mark_executed(approval_id, result.content(), ctx.clock())
    else:  # ran already (a resume after a crash): never run an irreversible tool twice
        record = await ctx.approvals.get(approval_id)
        stored = record.result_json if record is not None and record.result_json else None
        result = ToolResult(json.loads(stored) if stored else {"status": "already_done"})
    message = ChatMessage("tool", result.content(), tool_call_id=call.id, name=call.name)
    return {
        "messages": [message],
        "pending_calls": [],
        "approval_id": None,
        "tools_used": [*state.get("tools_used", []), call.name],
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
