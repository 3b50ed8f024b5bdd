"""An MCP client as other agents use it (the SDK's `Client` over streamable HTTP with a bearer
token), and small readers of its tool results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

__all__ = ["connect", "error_text", "passages"]


@asynccontextmanager
async def connect(url: str, token: str | None, *, mode: str = "auto") -> AsyncIterator[Client]:
    """A connected client; with `token`, every request carries `Authorization: Bearer`.
    `mode="legacy"` speaks the older protocol (the initialize handshake) many clients use."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def passages(result: CallToolResult) -> list[dict[str, Any]]:
    """The passages of a successful tool call."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    found: list[dict[str, Any]] = result.structured_content["passages"]
    return found


def error_text(result: CallToolResult) -> str:
    """The message of a tool call that was refused."""
    assert result.is_error, result.structured_content
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text
