"""The MCP edge: Lore's knowledge for other agents (MCP clients), read-only, over streamable
HTTP (per bearer token, in `lore run`) or stdio (the local owner, `lore mcp`)."""

from adapters.mcp.http import McpHttpConfig, McpHttpEdge
from adapters.mcp.stdio import McpStdioEdge
from adapters.mcp.tools import TOOL_NAMES

__all__ = ["TOOL_NAMES", "McpHttpConfig", "McpHttpEdge", "McpStdioEdge"]
