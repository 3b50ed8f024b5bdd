"""The approval nodes: `request_approval` stores a high-risk tool call for the owners (after
checking that the requester could have made it here), and `await_approval` pauses until an
owner decides, then runs the tool at most once."""

from __future__ import annotations

import json
import logging

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from graphs.agent.context import AgentContext
from graphs.agent.events import ApprovalPending
from graphs.agent.links import defang_untrusted, record_untrusted_links, turn_texts
from graphs.agent.nodes import Update, next_ref, run_tool, timed
from graphs.agent.state import AgentState
from graphs.agent.threads import thread_id_of
from graphs.agent.tools import TOOLS, ToolArgumentError, ToolResult, offered_tools, parse_arguments
from graphs.llm.data_blocks import as_data, data_key
from graphs.llm.types import ChatMessage, ToolCall
from storage.ids import ApprovalId, DocumentId

__all__ = ["await_approval", "request_approval"]

logger = logging.getLogger(__name__)

SKIPPED = json.dumps({"error": "Not run: one action that needs approval at a time."})
AWAITING_OWNER = (
    "This needs the owner's approval, so I've asked them. I'll tell you here when they decide."
)


# Added to what owners read when the turn had read a text that carries a warning.
AFTER_FLAGGED = (
    "⚠️ Asked after reading a passage that contains instructions aimed at an AI: check that "
    "this is what the person wants."
)
NOT_HERE = "There is no tool called {name!r} here."
NOT_YOURS = "That is not one of your private documents."


async def _refusal_before_asking(
    ctx: AgentContext, state: AgentState, call: ToolCall, arguments: dict[str, str]
) -> str | None:
    """Why the requester could not have made this request here (so no owner is asked and
    nothing of anyone else's is shown), or None."""
    turn = state["turn"]
    if TOOLS[call.name] not in offered_tools(turn, hardened=state.get("hardened", False)):
        return NOT_HERE.format(name=call.name)
    if call.name == "share_to_knowledge":
        document = await ctx.documents.get(DocumentId(arguments["document_id"]))
        if document is None or document.owner_id != turn.user_id:
            return NOT_YOURS
    return None


def _not_asked(results: list[ChatMessage], call: ToolCall, error: str) -> Update:
    """The call becomes an error result for the model; no request, no owner asked."""
    message = ChatMessage(
        "tool", json.dumps({"error": error}), tool_call_id=call.id, name=call.name
    )
    return {"messages": [*results, message], "pending_calls": []}


async def _links_checked(
    ctx: AgentContext, state: AgentState, arguments: dict[str, str]
) -> dict[str, str]:
    """The arguments with every link that no source and no question holds defanged (the
    model wrote them; owners read them on the card and, approved, in their inbox)."""
    turn = state["turn"]
    trusted = turn_texts(state.get("messages", []), turn.text)
    checked_arguments = {}
    for name, value in arguments.items():
        checked = defang_untrusted(value, trusted)
        checked_arguments[name] = checked.text
        await record_untrusted_links(
            ctx.incidents,
            checked,
            where="a request for the owners",
            platform=turn.platform,
            chat_id=turn.chat_id,
            user_id=turn.user_id,
            now=ctx.clock(),
        )
    return checked_arguments


async def _summary(
    ctx: AgentContext, call: ToolCall, arguments: dict[str, str], *, flagged: bool
) -> str:
    """What owners read (the requester's own document title: checked before this), with a
    warning when the turn read a passage that reads like instructions to an AI."""
    if call.name == "draft_contact_message":
        summary = f"Send you this message: “{arguments['message']}”"
    else:
        document = await ctx.documents.get(DocumentId(arguments["document_id"]))
        title = document.title if document is not None else arguments["document_id"]
        summary = f"Publish their private document “{title}” to the shared knowledge"
    return f"{summary}\n{AFTER_FLAGGED}" if flagged else summary


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
        return _not_asked(results, call, str(exc))
    refusal = await _refusal_before_asking(ctx, state, call, arguments)
    if refusal is not None:
        logger.info("High-risk call %s refused before asking an owner", call.name)
        return _not_asked(results, call, refusal)
    arguments = await _links_checked(ctx, state, arguments)
    approval = await ctx.approvals.create(
        thread_id=thread_id_of(turn),
        requester_user_id=turn.user_id,
        chat_id=turn.chat_id,
        platform=turn.platform,
        tool_name=call.name,
        arguments_json=json.dumps(arguments),
        summary=await _summary(ctx, call, arguments, flagged=state.get("flagged_passages", 0) > 0),
        now=ctx.clock(),
        ttl=ctx.limits.approval_ttl,
        is_group=turn.is_group,
        chat_thread=turn.chat_thread,
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
        result = await run_tool(ctx, state, call, next_ref(state.get("passages", {})))
        await ctx.approvals.mark_executed(approval_id, result.content(), ctx.clock())
    else:  # ran already (a resume after a crash): never run an irreversible tool twice
        record = await ctx.approvals.get(approval_id)
        stored = record.result_json if record is not None and record.result_json else None
        result = ToolResult(json.loads(stored) if stored else {"status": "already_done"})
    content = as_data(call.name, result.content(), data_key(ctx.canary, state["turn"].turn_id))
    message = ChatMessage("tool", content, tool_call_id=call.id, name=call.name)
    return {
        "messages": [message],
        "pending_calls": [],
        "approval_id": None,
        "tools_used": [*state.get("tools_used", []), call.name],
        "tool_rounds": state.get("tool_rounds", 0) + 1,
    }
