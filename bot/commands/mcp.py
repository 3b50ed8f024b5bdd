"""`/mcp`: a member's tokens for their MCP clients (other agents that search their knowledge,
read-only): list them, make one (shown once), revoke one or all. Private chats only: a token
is a secret."""

from __future__ import annotations

from bot.commands.registry import Access, Command, CommandCall, Place
from bot.errors import UsageError
from bot.replies import Message, Reply, Span, bold, code, italic, plain, rich

__all__ = ["MCP_COMMANDS"]

SHARED_ONLY_FLAGS = ("--shared-only", "shared-only")


def _usage(call: CommandCall) -> str:
    mcp = call.spell("mcp")
    return (
        f"Usage: {mcp} (your tokens), {mcp} token [NAME] [--shared-only] (a new one), "
        f"{mcp} revoke NAME|all."
    )


async def _list(call: CommandCall) -> Reply:
    tokens = await call.services.tokens.active(call.identity)
    if not tokens:
        return Message(
            rich(
                "You have no MCP tokens. An MCP client (a desktop assistant, an IDE agent) can "
                f"search your knowledge read-only with one: {call.spell('mcp')} token NAME"
            ),
            personal=True,
        )
    body: list[Span] = [bold("Your MCP tokens"), plain(f" ({len(tokens)})")]
    for token in tokens:
        reach = "shared knowledge only" if token.shared_only else "your notes and memory too"
        body += rich(
            "\n",
            bold(token.name),
            f" ({token.id}) ",
            italic(f"{reach}, {token.created_at:%Y-%m-%d}"),
        )
    body += rich(f"\nRevoke one with {call.spell('mcp')} revoke NAME.")
    return Message(tuple(body), personal=True)


async def _token(call: CommandCall, words: list[str]) -> Reply:
    tokens = call.services.tokens
    shared_only = any(word in SHARED_ONLY_FLAGS for word in words)
    names = [word for word in words if word not in SHARED_ONLY_FLAGS]
    if len(names) > 1:
        raise UsageError(_usage(call))
    name = names[0] if names else await tokens.free_name(call.identity)
    issued = await tokens.issue(call.identity, name, shared_only=shared_only)
    reach = (
        "the shared knowledge only"
        if shared_only
        else "the shared knowledge, your notes and memory"
    )
    return Message(
        rich(
            "🔑 Your MCP token ",
            bold(name),
            f" (reads {reach}, never writes):\n",
            code(issued.token),
            "\nI show it only this once: put it in your MCP client's configuration now, then "
            "delete this message. Revoke it with ",
            code(f"{call.spell('mcp')} revoke {name}"),
            ".",
        ),
        personal=True,
    )


async def _revoke(call: CommandCall, words: list[str]) -> Reply:
    if len(words) != 1:
        raise UsageError(_usage(call))
    revoked = await call.services.tokens.revoke(call.identity, words[0])
    names = ", ".join(token.name for token in revoked)
    return Message(rich(f"Revoked: {names}. Clients using it are refused from now on."))


async def _mcp(call: CommandCall) -> Reply:
    words = call.words
    if not words:
        return await _list(call)
    if words[0] == "token":
        return await _token(call, words[1:])
    if words[0] == "revoke":
        return await _revoke(call, words[1:])
    raise UsageError(_usage(call))


MCP_COMMANDS = (
    Command("mcp", "[token [NAME] [--shared-only] | revoke NAME|all]",
            "Tokens for MCP clients that search your knowledge (read-only)", Access.MEMBER,
            Place.PRIVATE, _mcp),
)  # fmt: skip
