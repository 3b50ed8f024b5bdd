"""`retrieve`: every question is looked up, whether or not the model would ask for it.

Beside a real model (`AgentContext.fallback` set), the extractive answerer plans the
turn's retrieval as it would for itself (`graphs.llm.offline_router`): a question searches
the shared knowledge and, in a private chat, the person's notes; a question about past
conversations searches them over the days it names; "open document ID" reads it; "share
my note about X" finds the note. Those low-risk calls run here, before the model is
called, and their results stand in the conversation as if the model had made them: the
model reads the passages, may search again to refine, and its answer is checked against
them (`graphs.agent.fallback_nodes.check_answer`).

The plan says what the message is: `search` (sources were looked up), `reply` (a greeting
or a question back: nothing to look up) or `act` (a message for the owner, a note to share:
the model must call the action, which the owner approves). With the extractive answerer as
the model there is nothing to do: it retrieves by itself.
"""

from __future__ import annotations

import json

from langgraph.runtime import Runtime

from graphs.agent.context import AgentContext
from graphs.agent.model_messages import model_messages
from graphs.agent.nodes import Update, run_calls, timed
from graphs.agent.state import AgentState
from graphs.agent.tools import TOOLS, offered_tools
from graphs.llm.offline_router import route
from graphs.llm.types import ChatMessage, ChatModel, Completion, ToolCall, ToolChoice, ToolSpec

__all__ = ["ACTIONS", "QUERY_CHARS", "complete", "retrieve"]

#: Message kinds that ask Lore to act for the person (an owner approves the action).
ACTIONS = frozenset({"contact", "share"})
#: A search query planned from a long message keeps its start: the embedding model reads
#: no more than this anyway, and every model call of the turn carries the query again.
QUERY_CHARS = 1000


def _bounded(call: ToolCall) -> ToolCall:
    """The call with its query cut to `QUERY_CHARS`, at a space where there is one."""
    arguments = json.loads(call.arguments)
    query = arguments.get("query")
    if not isinstance(query, str) or len(query) <= QUERY_CHARS:
        return call
    cut = query[:QUERY_CHARS]
    arguments["query"] = cut.rsplit(" ", 1)[0] if " " in cut else cut
    return ToolCall(call.id, call.name, json.dumps(arguments, ensure_ascii=False))


async def complete(
    model: ChatModel,
    messages: list[ChatMessage],
    *,
    tools: list[ToolSpec],
    tool_choice: ToolChoice,
    max_tokens: int,
) -> Completion:
    """One call of a model that costs nothing (the extractive answerer), to its end."""
    completion: Completion | None = None
    async for event in model.stream(
        messages, tools=tools, tool_choice=tool_choice, max_tokens=max_tokens
    ):
        if isinstance(event, Completion):
            completion = event
    if completion is None:
        raise RuntimeError("the extractive answerer ended without a completion")
    return completion


@timed("retrieve")
async def retrieve(state: AgentState, runtime: Runtime[AgentContext]) -> Update:
    """Run the retrieval the extractive answerer plans for this message (module docstring)."""
    ctx = runtime.context
    if ctx.fallback is None:
        return {}
    turn = state["turn"]
    tools = offered_tools(turn, hardened=state.get("hardened", False))
    pinned = await ctx.documents.pinned_shared()
    planned = await complete(
        ctx.fallback,
        model_messages(ctx, state, pinned),
        tools=[tool.spec for tool in tools],
        tool_choice="auto",
        max_tokens=ctx.limits.max_answer_tokens,
    )
    kind = "act" if route(turn.text).kind in ACTIONS else "search"
    calls = [_bounded(call) for call in planned.tool_calls if not TOOLS[call.name].high_risk]
    if not calls:
        return {"plan": "act" if kind == "act" else "reply"}
    update = await run_calls(state, runtime, calls)
    asked = ChatMessage("assistant", "", tuple(calls))
    return {**update, "messages": [asked, *update["messages"]], "plan": kind}
