"""MCP from the command line, as a person sets it up: `lore mcp` over stdio as a subprocess of
the SDK's client, `lore mcp-token`, and `lore run` serving MCP over HTTP beside the rest."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from bot.app import open_lore
from bot.errors import LookupRefusedError
from bot.settings import Settings, load_settings
from tests.mcp_client import connect, passages
from tests.test_cli import LORE, lore, workdir

__all__ = ["workdir"]  # the fixture, shared with test_cli

pytestmark = pytest.mark.slow


def settings_of(workdir: Path) -> Settings:
    """The settings the subprocesses read from `workdir/.env`."""
    return load_settings(_env_file=workdir / ".env")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_lore_mcp_serves_the_local_owner_over_stdio(workdir: Path) -> None:
    assert lore(workdir, "ingest", "notes", "--shared").returncode == 0
    assert lore(workdir, "ingest", "notes/wifi.md").returncode == 0  # the owner's own note
    server = StdioServerParameters(command=str(LORE), args=["mcp"], cwd=workdir)
    async with Client(server) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"search_knowledge", "search_private", "search_memory", "get_entry"}
        found = passages(await client.call_tool("search_knowledge", {"query": "visitor parking"}))
        assert found[0]["title"].startswith("Parking")
        mine = passages(await client.call_tool("search_private", {"query": "wifi password"}))
        assert [(p["title"], p["private"]) for p in mine] == [("Office wifi", True)]
    # The client hung up: `lore mcp` closed the store, and logged both calls as MCP lookups.
    async with open_lore(settings_of(workdir)) as core:
        logged = await core.database.fetch_all("SELECT platform, chat_id, outcome FROM turn_log")
    assert [tuple(row) for row in logged] == [("mcp", "console:owner", "answered")] * 2


async def test_lore_mcp_token_prints_a_token_once(workdir: Path) -> None:
    made = lore(workdir, "mcp-token", "laptop", "--shared-only")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("lore_")
    assert "only this once" in made.stderr
    again = lore(workdir, "mcp-token", "laptop")
    assert again.returncode == 1
    assert "already have a token called 'laptop'" in again.stderr
    async with open_lore(settings_of(workdir)) as core:
        caller = await core.bot.mcp_identity(token)
        assert caller is not None
        assert (await core.bot.search_knowledge(caller, "wifi")).passages == ()
        with pytest.raises(LookupRefusedError):
            await core.bot.search_private(caller, "wifi")


async def test_lore_run_serves_mcp_over_http_beside_the_other_edges(workdir: Path) -> None:
    assert lore(workdir, "ingest", "notes", "--shared").returncode == 0
    token = lore(workdir, "mcp-token", "laptop").stdout.strip()
    port = free_port()
    with (workdir / ".env").open("a") as env:
        env.write(f"MCP_HTTP_PORT={port}\n")
    process = await asyncio.create_subprocess_exec(
        str(LORE),
        "run",
        cwd=workdir,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=90)
        assert line.decode().startswith("Lore is running on mcp."), line
        async with connect(f"http://127.0.0.1:{port}/mcp", token) as client:
            found = passages(await client.call_tool("search_knowledge", {"query": "guest wifi"}))
            assert found[0]["title"] == "Office wifi"
    finally:
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), timeout=60)
    assert code == 0
