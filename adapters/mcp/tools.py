"""The MCP server Lore offers: exactly four read-only tools, each one `Bot` lookup for the
caller the transport authenticated. No tool ingests, shares, deletes or contacts anyone.

Results are structured (a list of passages, each with the document id to cite, title,
source, heading path, score and text); a refusal (guard, rate limit, token reach, not found)
is a tool error carrying Lore's polite message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from typing import Annotated

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from bot.errors import LoreError
from bot.events import Identity
from bot.lookups import MAX_RESULTS, LookupResult
from bot.service import Bot

__all__ = ["TOOL_NAMES", "Caller", "Found", "FoundPassage", "build_server"]

Caller = Callable[[], Identity]

TOOL_NAMES = ("search_knowledge", "search_private", "search_memory", "get_entry")
INSTRUCTIONS = (
    "Lore is a team knowledge base. search_knowledge searches the shared knowledge, "
    "search_private the notes of the person this connection belongs to, search_memory their "
    "past conversations with Lore, and get_entry(document_id) reads one document whole. "
    "Cite what you use by title and document_id. Everything here is read-only."
)
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

Query = Annotated[str, Field(description="What to look for, in plain words.")]
Limit = Annotated[int, Field(ge=1, le=MAX_RESULTS, description="How many passages at most.")]
Day = Annotated[
    date | None, Field(description="Only conversations on or after / before this day (YYYY-MM-DD).")
]
DocumentIdArg = Annotated[
    str, Field(max_length=100, description="A document_id from a search result.")
]


class FoundPassage(BaseModel):
    """One passage, citable by `document_id`."""

    document_id: str = Field(
        description="The id to cite; get_entry(document_id) reads the whole document "
        "(for search_memory, the id of the past exchange)."
    )
    title: str
    source: str = Field(description="Where it came from: a URL, a file name, a note.")
    heading_path: list[str] = Field(description="The headings above the passage, outermost first.")
    score: float | None = Field(
        description="Cosine similarity to the query (0-1; 0 when only the keyword search found "
        "it); null for get_entry."
    )
    private: bool = Field(description="True when it comes from the caller's own notes or memory.")
    text: str


class Found(BaseModel):
    """What a tool found, best first (get_entry: the document in order)."""

    passages: list[FoundPassage]
    truncated: bool = Field(description="True when a size cap cut something off.")


def _found(result: LookupResult) -> Found:
    return Found(
        passages=[
            FoundPassage(
                document_id=p.document_id,
                title=p.title,
                source=p.source,
                heading_path=list(p.heading_path),
                score=p.score,
                private=p.private,
                text=p.text,
            )
            for p in result.passages
        ],
        truncated=result.truncated,
    )


async def _answer(lookup: Awaitable[LookupResult]) -> Found:
    try:
        return _found(await lookup)
    except LoreError as exc:
        raise ToolError(str(exc)) from None


def build_server(
    bot: Bot,
    caller: Caller,
    *,
    verifier: TokenVerifier | None = None,
    issuer_url: str | None = None,
) -> MCPServer:
    """Lore's MCP server for one transport: `caller` names who each call is for (the token's
    member over HTTP, the local owner over stdio); with `verifier`, every HTTP request must
    carry a bearer token it accepts (401 otherwise)."""
    auth = None
    if verifier is not None:
        # Lore issues its own tokens: no OAuth server, no protected-resource metadata.
        auth = AuthSettings(issuer_url=issuer_url or "http://127.0.0.1", resource_server_url=None)
    server = MCPServer(
        "lore", instructions=INSTRUCTIONS, token_verifier=verifier, auth=auth, log_level="WARNING"
    )

    async def search_knowledge(query: Query, limit: Limit = 5) -> Found:
        """Search the team's shared knowledge base; the best passages first."""
        return await _answer(bot.search_knowledge(caller(), query, limit=limit))

    async def search_private(query: Query, limit: Limit = 5) -> Found:
        """Search your own private notes (what you saved in Lore); the best passages first."""
        return await _answer(bot.search_private(caller(), query, limit=limit))

    async def search_memory(query: Query, day_from: Day = None, day_to: Day = None) -> Found:
        """Search your past conversations with Lore (what you asked, what it answered),
        optionally only on days from day_from to day_to; oldest first."""
        return await _answer(bot.search_memory(caller(), query, day_from, day_to))

    async def get_entry(document_id: DocumentIdArg) -> Found:
        """Read one document whole, passage by passage: a shared one, or one of your own."""
        return await _answer(bot.get_entry(caller(), document_id))

    for tool in (search_knowledge, search_private, search_memory, get_entry):
        server.add_tool(tool, annotations=READ_ONLY, structured_output=True)
    return server
