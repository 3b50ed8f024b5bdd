"""The ingest graph: source_router -> fetch (url | file | note) -> clean -> chunk -> embed -> store.

Built by a factory, never compiled at import. Run it with an `IngestContext` as the
LangGraph runtime context; `ingest()` is the one call the `Bot` service makes.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs.ingest import nodes, store_node
from graphs.ingest.context import IngestContext
from graphs.ingest.state import IngestProgress, IngestRequest, IngestResult, IngestState

__all__ = ["IngestGraph", "build_ingest_graph", "ingest"]

IngestGraph = CompiledStateGraph[IngestState, IngestContext, IngestState, IngestState]
ProgressCallback = Callable[[IngestProgress], None]


def build_ingest_graph() -> IngestGraph:
    """Compile the ingest graph (no checkpointer: an ingest is one atomic run)."""
    builder = StateGraph(IngestState, context_schema=IngestContext)
    builder.add_node("source_router", nodes.source_router)
    builder.add_node("fetch_url", nodes.fetch_url)
    builder.add_node("read_file", nodes.read_file)
    builder.add_node("take_note", nodes.take_note)
    builder.add_node("clean", nodes.clean)
    builder.add_node("chunk", nodes.chunk)
    builder.add_node("embed", nodes.embed)
    builder.add_node("store", store_node.store)
    builder.add_edge(START, "source_router")
    builder.add_conditional_edges("source_router", nodes.route_source)
    for fetch in ("fetch_url", "read_file", "take_note"):
        builder.add_edge(fetch, "clean")
    builder.add_conditional_edges("clean", nodes.route_after_clean, {"chunk": "chunk", END: END})
    builder.add_edge("chunk", "embed")
    builder.add_edge("embed", "store")
    builder.add_edge("store", END)
    return builder.compile(name="ingest")


async def ingest(
    graph: IngestGraph,
    request: IngestRequest,
    context: IngestContext,
    *,
    on_progress: ProgressCallback | None = None,
) -> IngestResult:
    """Run one ingest; progress steps go to `on_progress`. Raises `IngestError` on bad input."""
    final: IngestState = {}
    async for mode, payload in graph.astream(
        {"request": request}, context=context, stream_mode=["custom", "values"]
    ):
        if mode == "custom" and isinstance(payload, IngestProgress):
            if on_progress is not None:
                on_progress(payload)
        elif mode == "values":
            final = payload  # type: ignore[assignment]
    return final["result"]
