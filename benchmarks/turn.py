"""Turn overhead: a chat turn through the agent graph next to the bare model call it wraps.

One run, one temporary DATA_DIR (the repository's docs/ ingested as shared knowledge), one
fake OpenAI-compatible server on 127.0.0.1 streaming with zero latency (tests.fakes), and
`--concurrency` members (invited by an owner, each in their own private chat). Reported side
by side, for 1 user at a time and for all of them at once:

- graph: `Bot.handle_message(...)` to the first `AnswerDelta` and to the end of the turn,
  p50/p95 in ms, and turns per second;
- raw: the request bodies the graph sent (captured), sent straight through
  `OpenAICompatibleModel.stream(...)` to the same server with the same scripted answer;
- process CPU time per turn (all threads, the fake included): noisy neighbours on a shared
  machine disturb it far less than wall-clock figures;
- the ratios graph/raw (latency, CPU) and raw/graph (throughput), and RSS after each row.

Two rows: `plain` (the model answers in text at once: one model call) and `search` (the
model first calls search_knowledge, then answers citing [1]: two model calls and one search;
its raw twin makes the same two calls around `Bot.search`). The fake runs in this process
and event loop, so raw and graph pay the same cost for it; the graph's prompt carries the
last turns of its thread, the raw request is the thread's first. Each phase starts fresh
threads (about turns/concurrency turns each). `--thread-turns N` then runs N turns of each
row in a single thread, to show how a turn slows down as its thread grows. Last, the size of
the checkpoint store the runs left behind.

Every search is for a query of its own (`query(n)`), so the cache of query embeddings never
answers one. With `--spans`, each row's one-user graph phase also prints where a turn's time
goes: the calls outside the model (benchmarks/spans.py: checkpoint reads and writes, searches,
embeddings, SQLite, guards) and the graph's own per-node timings from the turn log.

    .venv/bin/python -m benchmarks.turn [--turns 1000] [--concurrency 50] [--rows plain search]
                                        [--thread-turns 0] [--spans]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.spans import Spans
from bot.app import Lore, open_lore
from bot.events import AnswerDelta, ChatRef, Identity, TurnDone
from bot.settings import load_settings
from bot.sources import Source
from graphs.llm.openai_compat import OpenAICompatibleModel
from graphs.llm.types import ChatMessage, Completion, TextDelta, ToolCall, ToolSpec
from tests.fakes.openai_server import FakeOpenAI, RecordedRequest, Writer

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parents[1]
PLATFORM = "bench"
OWNER = Identity(PLATFORM, "owner", "Owner")
QUESTION = "How do I keep my notes private from other members?"
ANSWER = "Your notes stay in your private collection; only you can search them."
QUERY = "private notes"
MAX_THREAD_TURNS = 200  # AgentLimits.max_thread_turns: beyond it the guard refuses


def query(n: int) -> str:
    """The n-th search query: a different text every time, so no cache of query embeddings
    makes a turn look cheaper than a real one."""
    return f"{QUERY} {n}"


class RoutedFake(FakeOpenAI):
    """The fake, answering by what was asked: after a tool result, text citing [1]; otherwise
    a search_knowledge call (for a new query each time) when `search` is on, else text.

    It re-queues itself, so the script never runs dry however many turns run at once.
    """

    def __init__(self) -> None:
        super().__init__()
        self.search = False
        self.searches = 0
        self.captured: list[dict[str, Any]] | None = None
        self.enqueue_text(ANSWER, chunks=3)
        self.enqueue_text(ANSWER + " [1]", chunks=3)
        self._cited = self._script.pop()
        self._plain = self._script.pop()
        self._script.append(self._routed)

    async def _routed(self, writer: Writer, request: RecordedRequest) -> None:
        self._script.append(self._routed)
        body = request.body
        self.requests.clear()  # keep the fake's memory flat
        if self.captured is not None:
            self.captured.append(body)
        if body["messages"][-1]["role"] == "tool":
            reply = self._cited
        elif self.search:
            self.searches += 1
            self.enqueue_tool_call("search_knowledge", f'{{"query": "{query(self.searches)}"}}')
            reply = self._script.pop()
        else:
            reply = self._plain
        await reply(writer, request)


@dataclass(frozen=True, slots=True)
class Sample:
    """One turn or raw call: seconds to the first text and to the end."""

    first_text: float
    total: float


@dataclass(frozen=True, slots=True)
class Result:
    """One measured phase."""

    samples: list[Sample]
    wall: float
    cpu: float  # process CPU seconds (all threads, the in-process fake included)

    def first(self, q: float) -> float:
        return quantile([s.first_text for s in self.samples], q)

    def total(self, q: float) -> float:
        return quantile([s.total for s in self.samples], q)

    @property
    def rate(self) -> float:
        return len(self.samples) / self.wall

    @property
    def cpu_per_turn(self) -> float:
        return self.cpu / len(self.samples)


def quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if q == 0.5:
        return statistics.median(ordered)
    return ordered[max(0, int(len(ordered) * q + 0.5) - 1)]


def memory() -> str:
    """Peak RSS (getrusage) and, where /proc exists, the current RSS."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    statm = Path("/proc/self/statm")
    if not statm.exists():
        return f"peak RSS {peak:.0f} MiB"
    current = int(statm.read_text().split()[1]) * resource.getpagesize() / 2**20
    return f"peak RSS {peak:.0f} MiB, current {current:.0f} MiB"


def checkpoint_store(path: Path, thread_prefix: str = "") -> str:
    """How much the LangGraph checkpointer has stored, for threads whose id starts with
    `thread_prefix` (read-only; WAL lets it read beside the running bot)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        count, total, largest = db.execute(
            "SELECT count(*), sum(length(checkpoint)), max(length(checkpoint)) FROM checkpoints"
            " WHERE thread_id LIKE ?",
            (thread_prefix + "%",),
        ).fetchone()
        writes = db.execute(
            "SELECT count(*) FROM writes WHERE thread_id LIKE ?", (thread_prefix + "%",)
        ).fetchone()[0]
    on_disk = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    return (
        f"checkpoints: {count} checkpoints and {writes} writes, {total / 2**20:.1f} MiB of"
        f" checkpoint blobs (largest {largest / 1024:.1f} KiB); whole store {on_disk / 2**20:.1f}"
        " MiB on disk"
    )


# -- the raw model calls ----------------------------------------------------------------------


def message_of(m: dict[str, Any]) -> ChatMessage:
    calls = tuple(
        ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in m.get("tool_calls") or ()
    )
    return ChatMessage(m["role"], m["content"] or "", calls, m.get("tool_call_id"), m.get("name"))


@dataclass(frozen=True, slots=True)
class Request:
    """A recorded request body, as `OpenAICompatibleModel.stream` arguments."""

    messages: list[ChatMessage]
    tools: list[ToolSpec]
    tool_choice: Any
    max_tokens: int

    @classmethod
    def of(cls, body: dict[str, Any]) -> Request:
        functions = [tool["function"] for tool in body.get("tools", [])]
        tools = [ToolSpec(f["name"], f["description"], f["parameters"]) for f in functions]
        messages = [message_of(m) for m in body["messages"]]
        return cls(messages, tools, body.get("tool_choice", "auto"), body["max_tokens"])


async def raw_call(model: OpenAICompatibleModel, request: Request, started: float) -> float | None:
    """Consume one stream; the moment of its first text (None if it had none)."""
    first, completion = None, None
    async for event in model.stream(
        request.messages,
        tools=request.tools,
        tool_choice=request.tool_choice,
        max_tokens=request.max_tokens,
    ):
        if isinstance(event, TextDelta) and event.text and first is None:
            first = time.perf_counter() - started
        elif isinstance(event, Completion):
            completion = event
    if completion is None:
        raise RuntimeError("raw stream ended without a completion")
    return first


# -- the runs ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Bench:
    """What every phase needs."""

    lore: Lore
    model: OpenAICompatibleModel
    members: list[Identity]


async def graph_turn(bench: Bench, member: Identity, chat: ChatRef) -> Sample:
    started, first, done = time.perf_counter(), None, None
    async for event in bench.lore.bot.handle_message(member, chat, QUESTION):
        if isinstance(event, AnswerDelta) and first is None:
            first = time.perf_counter() - started
        elif isinstance(event, TurnDone):
            done = event
    total = time.perf_counter() - started
    if done is None or done.outcome != "answered" or first is None:
        outcome = done.outcome if done else "no TurnDone"
        raise RuntimeError(f"turn not answered ({outcome}): the benchmark would measure a refusal")
    return Sample(first, total)


async def raw_turn(
    bench: Bench, first_call: Request, second_call: Request | None, n: int
) -> Sample:
    """The same model work as one turn, without the graph (and, for search, the same kind of
    search, for a query of its own)."""
    started = time.perf_counter()
    first = await raw_call(bench.model, first_call, started)
    if second_call is not None:
        await bench.lore.bot.search(OWNER, query(-n - 1), limit=5, private=False)
        first = await raw_call(bench.model, second_call, started)
    total = time.perf_counter() - started
    if first is None:
        raise RuntimeError("raw turn streamed no text")
    return Sample(first, total)


async def run_phase(turns: int, workers: int, turn: Callable[[int], Awaitable[Sample]]) -> Result:
    """`turns` turns over `workers` concurrent workers; turn i belongs to worker i % workers."""
    samples: list[Sample] = []

    async def worker(w: int) -> None:
        samples.extend([await turn(i) for i in range(w, turns, workers)])

    started, cpu = time.perf_counter(), time.process_time()
    async with asyncio.TaskGroup() as group:
        for w in range(workers):
            group.create_task(worker(w))
    return Result(samples, time.perf_counter() - started, time.process_time() - cpu)


async def invite_members(lore: Lore, count: int) -> list[Identity]:
    members = []
    for n in range(count):
        invite = await lore.bot.create_invite(OWNER)
        member = Identity(PLATFORM, f"member{n}", f"Member {n}")
        await lore.bot.redeem_invite(member, invite.code)
        members.append(member)
    return members


def row(name: str, users: int, result: Result, raw: Result | None) -> str:
    ms = 1000
    line = (
        f"{name:<13} {users:>5} {len(result.samples):>6} {result.first(0.5) * ms:>9.2f}"
        f" {result.first(0.95) * ms:>9.2f} {result.total(0.5) * ms:>9.2f}"
        f" {result.total(0.95) * ms:>9.2f} {result.rate:>8.1f} {result.cpu_per_turn * ms:>7.2f}"
    )
    if raw is not None:
        p50, p95 = result.first(0.5) / raw.first(0.5), result.first(0.95) / raw.first(0.95)
        rate, cpu = raw.rate / result.rate, result.cpu_per_turn / raw.cpu_per_turn
        line += f" {p50:>7.1f}x {p95:>6.1f}x {rate:>7.1f}x {cpu:>6.1f}x"
    return line


HEADER = (
    f"{'':<13} {'':>5} {'':>6} {'1st p50':>9} {'1st p95':>9} {'end p50':>9} {'end p95':>9}"
    f" {'':>8} {'CPU':>7}   graph/raw  raw/graph  graph/raw\n"
    f"{'path':<13} {'users':>5} {'turns':>6} {'ms':>9} {'ms':>9} {'ms':>9} {'ms':>9}"
    f" {'turns/s':>8} {'ms/turn':>7} {'1st p50':>8} {'1st p95':>7} {'turns/s':>8} {'CPU':>7}"
)


async def node_times(lore: Lore, chat_prefix: str) -> str:
    """Mean ms per graph node over the turns logged in chats starting with `chat_prefix`."""
    rows = await lore.database.fetch_all(
        "SELECT node_latency_json FROM turn_log WHERE chat_id LIKE ?", (chat_prefix + "%",)
    )
    totals: dict[str, float] = {}
    for row in rows:
        for node, ms in json.loads(row["node_latency_json"] or "{}").items():
            totals[node] = totals.get(node, 0.0) + ms
    parts = sorted(totals.items(), key=lambda item: -item[1])
    return ", ".join(f"{node} {ms / max(1, len(rows)):.2f}" for node, ms in parts)


async def measure_row(  # noqa: PLR0917 - the command line's options
    bench: Bench, fake: RoutedFake, kind: str, turns: int, concurrency: int, spans: bool
) -> None:
    fake.search = kind == "search"
    members = bench.members
    for n in range(3):  # warm up
        await graph_turn(bench, members[0], ChatRef(PLATFORM, f"warm-{kind}-{n}"))
    first_call, second_call = await capture_requests(bench, fake, kind)
    for users in sorted({1, concurrency}):

        async def raw(i: int, users: int = users) -> Sample:
            return await raw_turn(bench, first_call, second_call, users * 1_000_000 + i)

        async def graph(i: int, users: int = users) -> Sample:
            member = members[i % len(members)]
            chat = ChatRef(PLATFORM, f"{kind}-{users}-{member.platform_user_id}")
            return await graph_turn(bench, member, chat)

        await run_phase(min(turns, 50), users, raw)  # warm the raw path too
        raw_result = await run_phase(turns, users, raw)
        with Spans.installed() if spans and users == 1 else nullcontext() as recorded:
            graph_result = await run_phase(turns, users, graph)
        print(row(f"{kind} raw", users, raw_result, None))
        print(row(f"{kind} graph", users, graph_result, raw_result))
        if recorded is not None:
            recorded.print(turns=turns, wall=graph_result.wall)
            nodes = await node_times(bench.lore, f"{kind}-1-")
            print(f"    graph nodes, ms per turn (turn log): {nodes}")
    print(f"{'':<13} after the {kind} row: {memory()}")


async def capture_requests(
    bench: Bench, fake: RoutedFake, kind: str
) -> tuple[Request, Request | None]:
    """Run one turn in a fresh chat and keep the request bodies the graph sent for it."""
    fake.captured = []
    try:
        await graph_turn(bench, bench.members[0], ChatRef(PLATFORM, f"capture-{kind}"))
        requests = [Request.of(body) for body in fake.captured]
    finally:
        fake.captured = None
    expected = 2 if kind == "search" else 1
    if len(requests) != expected:
        raise RuntimeError(f"{kind}: expected {expected} model calls per turn, saw {len(requests)}")
    return requests[0], requests[1] if kind == "search" else None


async def long_thread(bench: Bench, fake: RoutedFake, kind: str, turns: int) -> None:
    """One member, one chat, `turns` turns in a row: does a turn slow down as its thread
    grows (every checkpoint carries the whole conversation, tool results included)?"""
    fake.search = kind == "search"
    member = bench.members[0]
    chat = ChatRef(PLATFORM, f"long-{kind}")
    samples = [await graph_turn(bench, member, chat) for _ in range(turns)]
    window = max(1, min(10, turns // 3))
    print(f"\none thread of {turns} {kind} turns (p50 of {window} turns, ms):")
    for label, part in (("first", samples[:window]), ("last", samples[-window:])):
        first = quantile([s.first_text for s in part], 0.5) * 1000
        total = quantile([s.total for s in part], 0.5) * 1000
        print(f"  {label:<5} turns: first text {first:7.2f}  end {total:7.2f}")
    path = bench.lore.settings.checkpoint_path
    print(
        "  this thread's "
        + await asyncio.to_thread(checkpoint_store, path, f"{chat.platform}:{chat.chat_id}:")
    )


async def run(
    turns: int, concurrency: int, rows: Sequence[str], thread_turns: int, spans: bool
) -> None:
    async with RoutedFake() as fake:
        with tempfile.TemporaryDirectory() as tmp:
            settings = load_settings(
                _env_file=None,
                data_dir=Path(tmp),
                sample_docs_dir="",
                llm_base_url=fake.base_url,
                llm_model="fake",
                llm_prices="fake=0/0/0",
                rate_limit_turns=10_000,  # the settings cap; far above any run here
                owners=f"{OWNER.platform}:{OWNER.platform_user_id}",
            )
            async with (
                open_lore(settings) as lore,
                OpenAICompatibleModel(base_url=fake.base_url, api_key=None, model="fake") as model,
            ):
                for path in sorted((REPO_ROOT / "docs").glob("*.md")):
                    await lore.bot.maintenance.load_shared(Source(path=path))
                bench = Bench(lore, model, await invite_members(lore, concurrency))
                print(
                    f"{turns} turns per phase, {concurrency} members, about"
                    f" {turns // concurrency} turns per thread; docs/ ingested: {memory()}\n"
                )
                print(HEADER)
                for kind in rows:
                    await measure_row(bench, fake, kind, turns, concurrency, spans)
                for kind in rows if thread_turns else ():
                    await long_thread(bench, fake, kind, thread_turns)
                    print(f"  {memory()}")
                print(
                    "\nall " + await asyncio.to_thread(checkpoint_store, settings.checkpoint_path)
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="turns per measured phase")
    parser.add_argument("--concurrency", type=int, default=50, help="members talking at once")
    parser.add_argument(
        "--rows", nargs="+", choices=["plain", "search"], default=["plain", "search"]
    )
    parser.add_argument(
        "--thread-turns", type=int, default=0, help="then N turns of each row in one thread"
    )
    parser.add_argument("--spans", action="store_true", help="print where a turn's time goes")
    args = parser.parse_args()
    if args.concurrency < 1 or args.turns < args.concurrency:
        parser.error("need --concurrency >= 1 and --turns >= --concurrency")
    if args.turns // args.concurrency + 5 >= MAX_THREAD_TURNS:
        parser.error(f"keep --turns / --concurrency under {MAX_THREAD_TURNS - 5} (thread cap)")
    if not 0 <= args.thread_turns < MAX_THREAD_TURNS:
        parser.error(f"--thread-turns must be below {MAX_THREAD_TURNS} (thread cap)")
    asyncio.run(run(args.turns, args.concurrency, args.rows, args.thread_turns, args.spans))


if __name__ == "__main__":
    main()
