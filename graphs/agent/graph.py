"""The agent graph, built by a factory with an injected checkpointer, and the ways to drive it.

A chat thread (one per platform, chat and user): guard_input -> refuse | retrieve (the
sources every question gets, `graphs.agent.retrieval_node`) -> generate | answer_offline;
generate -> execute_tools -> generate (at most N rounds); generate -> check_answer (claim by
claim, `graphs.agent.fallback_nodes`) -> verify | answer_offline; a failing model ->
answer_offline (the extractive answerer over the same sources, which may call tools too)
-> verify; and generate | answer_offline -> request_approval -> verify, which ends the turn
with "waiting for the owner".
An approval thread (one per request, `approval:{id}`) starts at await_approval, which
interrupt()s until the owner decides (the pause is checkpointed), then runs the tool at
most once -> generate -> verify. Keeping the wait in its own thread lets the person go
on chatting while the owner takes their time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from graphs.agent import approval_nodes, fallback_nodes, generate_node, nodes, retrieval_node
from graphs.agent.context import AgentContext
from graphs.agent.events import TurnEvent
from graphs.agent.state import AgentState, TurnInput
from graphs.agent.threads import approval_thread_id, thread_id_of
from storage.checkpoints import erase_checkpoint_wal

__all__ = [
    "AgentGraph",
    "build_agent_graph",
    "delete_conversation",
    "erase_conversations",
    "is_waiting",
    "resume_turn",
    "run_turn",
    "start_approval_wait",
]

AgentGraph = CompiledStateGraph[AgentState, AgentContext, AgentState, AgentState]
EVENT_TYPES = TurnEvent.__args__


def _entry(state: AgentState) -> Literal["await_approval", "guard_input"]:
    """An approval thread starts by waiting for the owner; a chat thread starts at the guard."""
    return "await_approval" if state.get("resume_from_approval") else "guard_input"


def _after_request(state: AgentState) -> Literal["verify", "generate", "answer_offline"]:
    """The turn ends waiting for the owner; a request not made goes back to who asked."""
    if state.get("approval_id"):
        return "verify"
    return nodes.route_to_answer(state)


def build_agent_graph(checkpointer: BaseCheckpointSaver[Any]) -> AgentGraph:
    """Compile the agent graph with its checkpointer."""
    builder = StateGraph(AgentState, context_schema=AgentContext)
    builder.add_node("guard_input", nodes.guard_input)
    builder.add_node("refuse", nodes.refuse)
    builder.add_node("retrieve", retrieval_node.retrieve)
    builder.add_node("generate", generate_node.generate)
    builder.add_node("execute_tools", nodes.execute_tools)
    builder.add_node("check_answer", fallback_nodes.check_answer)
    builder.add_node("answer_offline", fallback_nodes.answer_offline)
    builder.add_node("request_approval", approval_nodes.request_approval)
    builder.add_node("await_approval", approval_nodes.await_approval)
    builder.add_node("verify", nodes.verify)
    builder.add_conditional_edges(START, _entry)
    builder.add_conditional_edges("guard_input", nodes.route_after_guard)
    builder.add_conditional_edges("retrieve", nodes.route_to_answer)
    builder.add_conditional_edges("generate", nodes.route_after_generate)
    builder.add_conditional_edges("execute_tools", nodes.route_after_tools)
    builder.add_conditional_edges("check_answer", nodes.route_after_check)
    builder.add_conditional_edges("answer_offline", nodes.route_after_offline)
    builder.add_conditional_edges("request_approval", _after_request)
    builder.add_conditional_edges("await_approval", nodes.route_to_answer)
    builder.add_edge("refuse", END)
    builder.add_edge("verify", END)
    return builder.compile(checkpointer=checkpointer, name="agent")


async def _events(
    graph: AgentGraph, payload: Any, thread_id: str, context: AgentContext
) -> AsyncIterator[TurnEvent]:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    # Checkpoint when the run ends or pauses, not after every node: a turn cut short by a
    # crash is lost either way, and a paused approval is saved at its interrupt.
    async for event in graph.astream(
        payload, config, context=context, stream_mode="custom", durability="exit"
    ):
        if isinstance(event, EVENT_TYPES):
            yield event


def start_approval_wait(
    graph: AgentGraph, seed: AgentState, approval_id: str, context: AgentContext
) -> AsyncIterator[TurnEvent]:
    """Start the approval thread; it runs to its interrupt and stops there."""
    return _events(graph, seed, approval_thread_id(approval_id), context)


async def is_waiting(graph: AgentGraph, approval_id: str) -> bool:
    """Whether an approval thread exists and is paused for a decision."""
    config: RunnableConfig = {"configurable": {"thread_id": approval_thread_id(approval_id)}}
    snapshot = await graph.aget_state(config)
    return bool(snapshot.interrupts)


def run_turn(graph: AgentGraph, turn: TurnInput, context: AgentContext) -> AsyncIterator[TurnEvent]:
    """Stream one turn's events."""
    return _events(graph, {"turn": turn}, thread_id_of(turn), context)


def resume_turn(
    graph: AgentGraph,
    approval_id: str,
    decision: Mapping[str, Any],
    context: AgentContext,
) -> AsyncIterator[TurnEvent]:
    """Resume an approval thread with the owner's decision; stream what follows."""
    return _events(graph, Command(resume=dict(decision)), approval_thread_id(approval_id), context)


async def delete_conversation(graph: AgentGraph, thread_id: str) -> None:
    """Drop every checkpoint of one thread (a conversation reset)."""
    checkpointer = graph.checkpointer
    if isinstance(checkpointer, BaseCheckpointSaver):
        await checkpointer.adelete_thread(thread_id)


async def erase_conversations(
    graph: AgentGraph, chat_threads: Iterable[str], approval_ids: Iterable[str]
) -> None:
    """Drop chat threads and approval threads for good (a forgotten member): their
    checkpoints go, and the checkpointer's log is emptied so no copy survives on disk."""
    for thread_id in [*chat_threads, *map(approval_thread_id, approval_ids)]:
        await delete_conversation(graph, thread_id)
    if isinstance(graph.checkpointer, AsyncSqliteSaver):
        await erase_checkpoint_wal(graph.checkpointer)
