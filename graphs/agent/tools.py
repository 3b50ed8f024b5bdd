"""The agent's tools: strict schemas, argument parsing, risk labels, and what each one does.

Arguments are parsed from the model's JSON (never by matching text) and checked against
the schema; the acting user always comes from the turn, never from the arguments. Every
argument is a string; an optional one may be absent, null or "" (strict schemas list it
as required with type ["string", "null"]), and a "date" one must be a real YYYY-MM-DD.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal
from zoneinfo import ZoneInfo

from graphs.agent.context import AgentContext
from graphs.agent.passage_warnings import WARN_RISK, passage_risks, warning_field
from graphs.agent.state import PassageRef, TurnInput
from graphs.ingest.locations import passage_location
from graphs.llm.types import ToolSpec
from graphs.memory_recall import RecalledExchange
from graphs.retrieval import RetrievedPassage
from storage.ids import DocumentId

__all__ = [
    "HARDENED_TOOLS",
    "TOOLS",
    "AgentTool",
    "ToolArgument",
    "ToolArgumentError",
    "ToolResult",
    "offered_tools",
    "parse_arguments",
]

MAX_ARGUMENT_CHARS = 2000

ENTRY_CHARS = 4000
MEMORY_ANSWER_CHARS = 1200
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class ToolArgumentError(ValueError):
    """The model's arguments do not fit the tool's schema."""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's JSON answer for the model, plus the numbered sources it showed."""

    payload: Mapping[str, Any]
    passages: tuple[PassageRef, ...] = ()
    # How many of the texts shown carry a warning (they read like instructions to an AI).
    flagged: int = 0
    # The tool ran out of time: a slow search, not an answer missing from the knowledge.
    timed_out: bool = False

    def content(self) -> str:
        """The tool message text the model reads."""
        return json.dumps(self.payload, ensure_ascii=False)


Runner = Callable[[AgentContext, TurnInput, Mapping[str, str], int], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class ToolArgument:
    """One string argument of a tool: required or optional, free text or a YYYY-MM-DD date."""

    name: str
    description: str
    required: bool = True
    format: Literal["text", "date"] = "text"

    def schema(self) -> dict[str, Any]:
        """The property's JSON schema (optional ones may be null, as strict mode requires)."""
        kind: str | list[str] = "string" if self.required else ["string", "null"]
        return {"type": kind, "description": self.description}


@dataclass(frozen=True, slots=True)
class AgentTool:
    """A tool: its schema, risk label and runner (its status line, in the member's language:
    `graphs.agent.status_lines`)."""

    name: str
    description: str
    arguments: tuple[ToolArgument, ...]
    high_risk: bool
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
                "properties": {argument.name: argument.schema() for argument in self.arguments},
                "required": [argument.name for argument in self.arguments],
                "additionalProperties": False,
            },
        )


def parse_arguments(tool: AgentTool, raw: str) -> dict[str, str]:
    """Parse and check the model's JSON arguments; raise `ToolArgumentError` if they don't fit.

    Absent optional arguments (missing, null or blank) are left out of the result.
    """
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(f"{tool.name}: arguments are not valid JSON") from exc
    if not isinstance(value, dict):
        raise ToolArgumentError(f"{tool.name}: arguments must be a JSON object")
    extra = set(value) - {argument.name for argument in tool.arguments}
    if extra:
        raise ToolArgumentError(f"{tool.name}: unexpected arguments {sorted(extra)}")
    parsed: dict[str, str] = {}
    for argument in tool.arguments:
        text = _argument_text(tool, argument, value.get(argument.name))
        if text is not None:
            parsed[argument.name] = text
    return parsed


def _argument_text(tool: AgentTool, argument: ToolArgument, item: object) -> str | None:
    blank = item is None or (isinstance(item, str) and not item.strip())
    if blank and not argument.required:
        return None
    if not isinstance(item, str) or not item.strip():
        raise ToolArgumentError(f"{tool.name}: {argument.name} must be a non-empty string")
    if len(item) > MAX_ARGUMENT_CHARS:
        raise ToolArgumentError(f"{tool.name}: {argument.name} is too long")
    text = item.strip()
    if argument.format == "date" and _day(text) is None:
        raise ToolArgumentError(f"{tool.name}: {argument.name} must be a date like 2026-11-28")
    return text


def _day(text: str | None) -> date | None:
    """A YYYY-MM-DD string as a date; None when absent or not a real day."""
    if text is None or not _ISO_DAY.fullmatch(text):
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


async def _passages(hits: list[RetrievedPassage], first_ref: int) -> ToolResult:
    refs: list[PassageRef] = []
    rows: list[dict[str, Any]] = []
    risks = await passage_risks([(h.passage.text, h.passage.injection_score) for h in hits])
    for offset, (hit, risk) in enumerate(zip(hits, risks, strict=True)):
        passage = hit.passage
        ref = PassageRef(
            first_ref + offset,
            passage.document_id,
            passage.document_title,
            passage.source_ref,
            hit.private,
            location=passage_location(passage.document_format, passage.heading_path),
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
                **warning_field(risk),
            }
        )
    flagged = sum(risk >= WARN_RISK for risk in risks)
    return ToolResult({"passages": rows}, tuple(refs), flagged)


async def _search_knowledge(
    ctx: AgentContext, _turn: TurnInput, args: Mapping[str, str], first_ref: int
) -> ToolResult:
    hits = await ctx.retriever.search(args["query"], user_id=None, limit=ctx.limits.search_limit)
    return await _passages(hits, first_ref)


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
    return await _passages(hits, first_ref)


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
    [risk] = await passage_risks([(text[:ENTRY_CHARS], None)])
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
            **warning_field(risk),
        }
    }
    return ToolResult(payload, (ref,), int(risk >= WARN_RISK))


def _exchanges(found: list[RecalledExchange], first_ref: int, timezone: str) -> ToolResult:
    try:
        zone = ZoneInfo(timezone)
    except (KeyError, ValueError):
        zone = ZoneInfo("UTC")
    refs: list[PassageRef] = []
    rows: list[dict[str, Any]] = []
    for offset, exchange in enumerate(found):
        when = f"{exchange.created_at.astimezone(zone):%Y-%m-%d %H:%M}"
        ref = PassageRef(
            first_ref + offset,
            exchange.turn_id,
            f"Our conversation on {when}",
            "conversation memory",
            True,
            kind="memory",
        )
        refs.append(ref)
        answer = exchange.answer
        if len(answer) > MEMORY_ANSWER_CHARS:
            answer = answer[:MEMORY_ANSWER_CHARS].rstrip() + "\u2026"
        rows.append(
            {
                "ref": ref.ref,
                "when": when,
                "question": exchange.question,
                "answer": answer,
                "relevance": round(exchange.relevance, 3),
            }
        )
    return ToolResult({"exchanges": rows}, tuple(refs))


async def _search_memory(
    ctx: AgentContext, turn: TurnInput, args: Mapping[str, str], first_ref: int
) -> ToolResult:
    if turn.is_group:  # never reached: the tool is not offered in groups; fail closed anyway
        return ToolResult({"error": "Past conversations are not searched in group chats."})
    if ctx.memory is None:
        return ToolResult({"error": "Conversation memory is not switched on here."})
    day_from, day_to = _day(args.get("day_from")), _day(args.get("day_to"))
    if day_from is not None and day_to is not None and day_from > day_to:
        raise ToolArgumentError("search_memory: day_from is after day_to")
    found = await ctx.memory.search(
        args["query"],
        user_id=turn.user_id,
        day_from=day_from,
        day_to=day_to,
        limit=ctx.limits.search_limit,
    )
    return _exchanges(found, first_ref, turn.timezone)


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
            (ToolArgument("query", "What to look for, in plain words."),),
            high_risk=False,
            run=_search_knowledge,
        ),
        AgentTool(
            "search_private",
            "Search the private notes of the person you are talking with.",
            (ToolArgument("query", "What to look for, in plain words."),),
            high_risk=False,
            run=_search_private,
            private_only=True,
        ),
        AgentTool(
            "search_memory",
            "Search your past conversations with the person you are talking with: what they "
            "asked and what you answered, optionally only on days from day_from to day_to "
            "(inclusive, in their timezone).",
            (
                ToolArgument("query", "What to look for; the whole question if no topic."),
                ToolArgument(
                    "day_from",
                    "First day to search, YYYY-MM-DD, or null for no lower bound.",
                    required=False,
                    format="date",
                ),
                ToolArgument(
                    "day_to",
                    "Last day to search, YYYY-MM-DD, or null for no upper bound.",
                    required=False,
                    format="date",
                ),
            ),
            high_risk=False,
            run=_search_memory,
            private_only=True,
        ),
        AgentTool(
            "get_entry",
            "Read one stored document by its id.",
            (ToolArgument("document_id", "The document_id from a search result."),),
            high_risk=False,
            run=_get_entry,
        ),
        AgentTool(
            "draft_contact_message",
            "Send a message from this person to the owner. Runs only after owner approval.",
            (ToolArgument("message", "The message for the owner."),),
            high_risk=True,
            run=_draft_contact_message,
        ),
        AgentTool(
            "share_to_knowledge",
            "Publish one of this person's private documents to the shared knowledge base. "
            "Runs only after owner approval.",
            (
                ToolArgument(
                    "document_id", "The document_id of one of the person's private documents."
                ),
            ),
            high_risk=True,
            run=_share_to_knowledge,
            private_only=True,
        ),
    )
}


HARDENED_TOOLS = frozenset({"search_knowledge"})


def offered_tools(turn: TurnInput, *, hardened: bool = False) -> list[AgentTool]:
    """The tools this chat may use: no private tools in group chats; in a hardened turn only
    the shared-knowledge tools (no private or memory search, nothing high-risk)."""
    return [
        tool
        for tool in TOOLS.values()
        if not (tool.private_only and turn.is_group)
        and (not hardened or tool.name in HARDENED_TOOLS)
    ]
