"""Search through MCP against the same search without it: calls/s and p50/p95 latency, side
by side in one run, and their ratio.

Lore's own `docs/` are loaded as the shared knowledge of a fresh data directory. The same
questions (Natural Questions from `../shared/corpora/benign_questions.txt`, those the
input guards pass) are asked two ways, interleaved so that both see the same machine:
`Retriever.search` called directly (what the `search_knowledge` tool runs underneath), the
`search_knowledge` tool called by the MCP SDK's client over streamable HTTP on loopback
with a bearer token (token check, guards, rate-limit count, turn-log write, JSON-RPC and
HTTP on top), and between the two `Bot.search_knowledge`, the core's lookup without the
transport. Calls are sequential, one client, one connection; the ratio is MCP / direct.

    .venv/bin/python benchmarks/mcp.py [--queries 300] [--limit 5]
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as `python benchmarks/mcp.py`, this file's folder comes first on the import path, and
# the file's name would shadow the MCP SDK: take the folder off before anything imports it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from adapters.mcp import McpHttpConfig, McpHttpEdge
from bot.app import open_lore
from bot.cli_runner import ingest_folder
from bot.people import LOCAL_OWNER
from bot.settings import load_settings
from graphs.guards import check_input
from graphs.retrieval import Retriever
from storage.documents import DocumentRepository
from storage.lexical import LexicalEncoder

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT.parent / "shared" / "corpora" / "benign_questions.txt"


def questions(count: int) -> list[str]:
    lines = QUESTIONS.read_text().splitlines()
    return [line for line in lines if line.strip() and check_input(line).allowed][:count]


def summary(samples: list[float], wall: float) -> tuple[float, float, float]:
    """calls/s, p50 ms, p95 ms."""
    ordered = sorted(samples)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return len(samples) / wall, statistics.median(ordered), p95


async def timed(call: Callable[[], Awaitable[object]], samples: list[float]) -> None:
    started = time.perf_counter()
    await call()
    samples.append((time.perf_counter() - started) * 1000)


async def run(count: int, limit: int) -> None:
    asked = questions(count)
    plain: list[float] = []
    core: list[float] = []
    mcp: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None, data_dir=Path(tmp), sample_docs_dir="", rate_limit_turns=10_000
        )
        async with open_lore(settings) as lore:
            await ingest_folder(
                lore.bot.maintenance.load_shared, ROOT / "docs", shared=True, lines=False
            )
            stats = await lore.bot.maintenance.stats()
            print(f"{stats.shared_documents} shared documents, {stats.chunks} chunks")
            retriever = Retriever(
                index=lore.index,
                documents=DocumentRepository(lore.database),
                embedder=lore.embedder,
                lexical=LexicalEncoder() if settings.search_mode == "hybrid" else None,
            )
            token = (await lore.bot.create_mcp_token(LOCAL_OWNER, "bench")).token
            edge = McpHttpEdge(McpHttpConfig(port=0))
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                edge.running(lore.bot),
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(edge.url, http_client=http)) as client,
            ):

                async def direct(query: str) -> object:
                    return await retriever.search(query, user_id=None, limit=limit)

                async def lookup(query: str) -> object:
                    return await lore.bot.search_knowledge(LOCAL_OWNER, query, limit=limit)

                async def through_mcp(query: str) -> object:
                    result = await client.call_tool(
                        "search_knowledge", {"query": query, "limit": limit}
                    )
                    assert not result.is_error, result.content
                    return result

                paths = [(direct, plain), (lookup, core), (through_mcp, mcp)]
                for query in asked[:10]:  # warm every path
                    for call, _ in paths:
                        await call(query)
                for number, query in enumerate(asked):
                    for call, samples in paths if number % 2 == 0 else reversed(paths):
                        await timed(lambda c=call, q=query: c(q), samples)
    report(plain, core, mcp, limit)


def report(plain: list[float], core: list[float], mcp: list[float], limit: int) -> None:
    # Interleaved calls: each path's throughput is its calls over the time spent in it.
    direct = summary(plain, sum(plain) / 1000)
    looked = summary(core, sum(core) / 1000)
    served = summary(mcp, sum(mcp) / 1000)
    print(f"{len(plain)} queries each, limit {limit}, hybrid search, shared knowledge")
    print(f"{'path':<34} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for name, (rate, p50, p95) in (
        ("Retriever.search (direct)", direct),
        ("Bot.search_knowledge (no MCP)", looked),
        ("search_knowledge via MCP (HTTP)", served),
    ):
        print(f"{name:<34} {rate:>8.1f} {p50:>8.2f} {p95:>8.2f}")
    print(
        f"MCP / direct: throughput {served[0] / direct[0]:.2f}x, "
        f"p50 {served[1] / direct[1]:.2f}x, p95 {served[2] / direct[2]:.2f}x "
        f"(overhead p50 {served[1] - direct[1]:+.2f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(run(args.queries, args.limit))


if __name__ == "__main__":
    main()
