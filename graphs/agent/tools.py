"""The agent's tools: strict schemas, argument parsing, risk labels, and what each one does.

Arguments are parsed from the model's JSON (never by matching text) and checked against
the schema; the acting user always comes from the turn, never from the arguments.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphs.agent.context import AgentContext
from graphs.agent.state import PassageRef, TurnInput
from graphs.llm.types import ToolSpec
from graphs.retrieval import RetrievedPassage
from storage.ids import DocumentId

__all__ = [
    "TOOLS",
    "AgentTool",
    "ToolArgumentError",
    "ToolResult",
    "offered_tools",
    "parse_arguments",
]

MAX_ARGUMENT_CHARS = 2000
ENTRY_CHARS = 4000


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's JSON answer for the model, plus the numbered sources it showed."""

    payload: Mapping[str, Any]
    passages: tuple[PassageRef, ...] = ()

    def content(self) -> str:
        """The tool message text the model reads."""
        return json.dumps(self.payload, ensure_ascii=False)


Runner = Callable[[AgentContext, TurnInput, Mapping[str, str], int], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A tool: its schema, risk label, status line, and runner."""

    name: str
    description: str
    argument: str
    argument_description: str
    high_risk: bool
    status: str
    run: Runner
    private_only: bool = False

    @property
    def spec(self) -> ToolSpec:
        """The strict JSON schema offered to the model."""
        return ToolSpec(
            self.name,
            self.description,
            {
                "type": "object",
                "properties": {
                    self.argument: {"type": "string", "description": self.argument_description}
                },
                "required": [self.argument],
                "additionalProperties": False,
            },
        )


def parse_arguments(tool: AgentTool, raw: str) -> dict[str, str]:
    """Parse and check the model's JSON arguments; raise `ToolArgumentError` if they don't fit."""
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(f"{tool.name}: arguments are not valid JSON") from exc
    if not isinstance(value, dict):
        raise ToolArgumentError(f"{tool.name}: arguments must be a JSON object")
    extra = set(value) - {tool.argument}
    if extra:
        raise ToolArgumentError(f"{tool.name}: unexpected arguments {sorted(extra)}")
    argument = value.get(tool.argument)
    if not isinstance(argument, str) or not argument.strip():
        raise ToolArgumentError(f"{tool.name}: {tool.argument} must be a non-empty string")
    if len(argument) > MAX_ARGUMENT_CHARS:
        raise ToolArgumentError(f"{tool.name}: {tool.argument} is too long")
    return {tool.argument: argument.strip()}


def _passages(hits: list[RetrievedPassage], first_ref: int) -> ToolResult:
    refs: list[PassageRef] = []
    rows: list[dict[str, Any]] = []
    for offset, hit in enumerate(hits):
        passage = hit.passage
        ref = PassageRef(
            first_ref + offset,
            passage.document_id,
            passage.document_title,
            passage.source_ref,
            hit.private,
        )
        refs.append(ref)
        rows.append(
            {
                "ref": ref.ref,
                "document_id": passage.document_id,
                "title": passage.document_title,
                "source": passage.source_ref,
                "section": " > ".join(passage.heading_path),
                "text": passage.text,
                "relevance": round(hit.relevance, 3),
                "private": hit.private,
            }
        )
    return ToolResult({"passages": rows}, tuple(refs))


async def _search_knowledge(
    ctx: AgentContext, _turn: TurnInput, args: Mapping[str, str], first_ref: int
) -> ToolResult:
    hits = await ctx.retriever.search(args["query"], user_id=None, limit=ctx.limits.search_limit)
    return _passages(hits, first_ref)


async def _search_private(
    ctx: AgentContext, turn: TurnInput, args: Mapping[str, str], first_ref: int
) -> ToolResult:
    if turn.is_group:  # never reached: the tool is not offered in groups; fail closed anyway
        return ToolResult({"error": "Private notes are not searched in group chats."})
    hits = await ctx.retriever.search(
        args["query"],
        user_id=turn.user_id,
        include_shared=False,
        limit=ctx.limits.search_limit,
    )
    return _passages(hits, first_ref)


async def _get_entry(
    ctx: AgentContext, turn: TurnInput, args: Mapping[str, str], first_ref: int
) -> ToolResult:
    document = await ctx.documents.get(DocumentId(args["document_id"]))
    visible = document is not None and (
        document.owner_id is None or (document.owner_id == turn.user_id and not turn.is_group)
    )
    if document is None or not visible:
        return ToolResult({"error": "There is no such document you can read."})
    text = await ctx.documents.document_text(document.id)
    ref = PassageRef(
        first_ref, document.id, document.title, document.source_ref, document.owner_id is not None
    )
    payload = {
        "document": {
            "ref": first_ref,
            "document_id": document.id,
            "title": document.title,
            "source": document.source_ref,
            "text": text[:ENTRY_CHARS],
            "truncated": len(text) > ENTRY_CHARS,
        }
    }
    return ToolResult(payload, (ref,))


async def _draft_contact_message(
    ctx: AgentContext, turn: TurnInput, args: Mapping[str, str], _first_ref: int
) -> ToolResult:
    note = await ctx.actions.send_to_owner(turn.user_id, args["message"])
    return ToolResult({"status": "delivered", "message": args["message"], "note": note})


async def _share_to_knowledge(
    ctx: AgentContext, turn: TurnInput, args: Mapping[str, str], _first_ref: int
) -> ToolResult:
    document = await ctx.documents.get(DocumentId(args["document_id"]))
    if document is None or document.owner_id != turn.user_id:
        return ToolResult({"status": "rejected", "reason": "That is not one of your documents."})
    title = await ctx.actions.share_document(turn.user_id, document.id)
    return ToolResult({"status": "shared", "document_id": document.id, "title": title})


TOOLS: Mapping[str, AgentTool] = {
    tool.name: tool
    for tool in (
        AgentTool(
            "search_knowledge",
            "Search the team's shared knowledge base.",
            "query",
            "What to look for, in plain words.",
            high_risk=False,
            status="Searching the knowledge base...",
            run=_search_knowledge,
        ),
        AgentTool(
            "search_private",
            "Search the private notes of the person you are talking with.",
            "query",
            "What to look for, in plain words.",
            high_risk=False,
            status="Searching your notes...",
            run=_search_private,
            private_only=True,
        ),
        AgentTool(
            "get_entry",
            "Read one stored document by its id.",
            "document_id",
            "The document_id from a search result.",
            high_risk=False,
            status="Opening the document...",
            run=_get_entry,
        ),
        AgentTool(
            "draft_contact_message",
            "Send a message from this person to the owner. Runs only after owner approval.",
            "message",
            "The message for the owner.",
            high_risk=True,
            status="Asking the owner...",
            run=_draft_contact_message,
        ),
        AgentTool(
            "share_to_knowledge",
            "Publish one of this person's private documents to the shared knowledge base. "
            "Runs only after owner approval.",
            "document_id",
            "The document_id of one of the person's private documents.",
            high_risk=True,
            status="Asking the owner...",
            run=_share_to_knowledge,
            private_only=True,
        ),
    )
}


def offered_tools(turn: TurnInput) -> list[AgentTool]:
    """The tools this chat may use: no private tools in group chats."""
    return [tool for tool in TOOLS.values() if not (tool.private_only and turn.is_group)]
