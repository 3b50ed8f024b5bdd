"""Hostile inputs against the configured caps: peak memory and CPU of the bot and of the workers.

Each case runs in a fresh process (so its peak RSS is its own) through the real core
(`open_lore`, `Bot.ingest`, the ingest graph, SQLite, the embedded Qdrant engine and the
packaged embedding model), with the default caps unless overridden:

- `normal`: a short Markdown note, the reference row;
- `nested-gzip`: a page of 1 GiB of zeros sent as `Content-Encoding: gzip, gzip` (about
  2.5 KB on the wire) by a loopback server, against FETCH_MAX_BYTES;
- `pdf-bomb`: a few KB of PDF whose 20 pages share one drawing stream, against
  EXTRACT_CPU_SECONDS;
- `docx-bomb`: a .docx whose document.xml holds ~90 MB of empty paragraphs (compression
  ratio ~150, under the zip-bomb checks), against EXTRACT_MEMORY_MB;
- `text-100k`: a plain-text file of 100,000 lines (a legitimate file: it is saved).

Printed per case: the outcome, the bot process's peak RSS during the ingest (VmHWM after
resetting it) and its growth over the RSS before the ingest, the bot's CPU seconds (the
benchmark's own polling taken off), the extraction workers' peak RSS (their VmHWM,
polled every 100 ms: a worker killed at its limit shows its last reading) and CPU
seconds (counted once they have exited, their ~0.3 s start-up included), and wall time,
next to the caps. Each case's file is built beforehand by the orchestrating process.

    .venv/bin/python -m benchmarks.hostile_inputs [--cases ...] [--extract-cpu-seconds 60]
        [--extract-memory-mb 1024] [--fetch-max-bytes 10485760]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

from bot.app import Lore, open_lore
from bot.errors import IngestRefusedError
from bot.events import Identity
from bot.people import LOCAL_OWNER
from bot.settings import Settings, load_settings
from bot.sources import Source
from tests.fakes.http_server import ScriptedServer, SeenRequest, Writer, answer
from tests.hostile_files import docx_memory_bomb, nested_gzip_bomb, pdf_drawing_bomb

CASES = ("normal", "nested-gzip", "pdf-bomb", "docx-bomb", "text-100k")
_MIB = 1024 * 1024
_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak_rss() -> bool:
    """Reset VmHWM (Linux 4.0+), so the next reading is this ingest's peak."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def _child_peak_kib(pid: int) -> int:
    """VmHWM of a child process (its own peak RSS since exec), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _children() -> list[int]:
    """Pids of this process's children (without scanning every process on the machine)."""
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        try:
            pids += [int(pid) for pid in (task / "children").read_text().split()]
        except OSError:
            continue
    return pids


async def _watch_workers(peaks: dict[int, int], own_cpu: list[float]) -> None:
    """Poll the extraction workers' peak RSS until cancelled (a killed worker's last
    reading stands: VmHWM only grows, so it is at most one interval short); the CPU
    time the polling costs goes to `own_cpu`, to be taken off the bot's figure."""
    while True:
        started = time.thread_time()
        for pid in _children():
            peaks[pid] = max(peaks.get(pid, 0), _child_peak_kib(pid))
        own_cpu[0] += time.thread_time() - started
        await asyncio.sleep(0.1)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


_FILES = {
    "normal": "boiler.md",
    "nested-gzip": "page.gz.gz",
    "pdf-bomb": "plan.pdf",
    "docx-bomb": "report.docx",
    "text-100k": "log.txt",
}


def _write_sources(folder: Path, cases: Sequence[str]) -> None:
    """Build each case's file in the orchestrating process, so the measured process pays
    only for ingesting it, not for building a bomb."""
    builders = {
        "normal": lambda: b"# Boiler\n\nThe boiler is serviced in May.\n",
        "nested-gzip": lambda: nested_gzip_bomb(1024),
        "pdf-bomb": lambda: pdf_drawing_bomb(20, 200_000),
        "docx-bomb": lambda: docx_memory_bomb(90_000_000),
        "text-100k": lambda: "".join(f"line {n}\n" for n in range(100_000)).encode(),
    }
    for case in cases:
        (folder / _FILES[case]).write_bytes(builders[case]())


async def _ingest(lore: Lore, case: str, folder: Path) -> str:
    owner = await lore.bot.local_member(LOCAL_OWNER, "mallory", create=True)
    path = folder / _FILES[case]
    if case != "nested-gzip":
        return await _outcome(lore, owner, Source(path=path))
    body = path.read_bytes()

    async def route(_: SeenRequest, __: asyncio.StreamReader, writer: Writer) -> None:
        await answer(
            writer, "200 OK", body, Content_Type="text/html", Content_Encoding="gzip, gzip"
        )

    async with ScriptedServer(routes={"/bomb": route}) as site:
        return await _outcome(lore, owner, Source(url=site.url("/bomb")))


async def _outcome(lore: Lore, owner: Identity, source: Source) -> str:
    try:
        result = await lore.bot.ingest(owner, source)
    except IngestRefusedError as exc:
        return f"refused: {str(exc)[:70]}"
    return f"{result.outcome.value}: {result.chunk_count} chunks"


async def _measure(settings: Settings, case: str, folder: Path) -> dict[str, Any]:
    loopback = frozenset({IPv4Address("127.0.0.1")})
    async with open_lore(settings, fetch_allowed_addresses=loopback) as lore:
        rss_before = _status_kib("VmRSS")
        exact = _reset_peak_rss()
        cpu_before = _cpu(resource.RUSAGE_SELF)
        peaks: dict[int, int] = {}
        polling = [0.0]
        watcher = asyncio.create_task(_watch_workers(peaks, polling))
        started = time.perf_counter()
        outcome = await _ingest(lore, case, folder)
        wall = time.perf_counter() - started
        watcher.cancel()
        cpu = _cpu(resource.RUSAGE_SELF) - cpu_before - polling[0]
        peak = _status_kib("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # workers, reaped at close
    return {
        "case": case,
        "outcome": outcome,
        "bot_peak_mib": peak / 1024,
        "bot_growth_mib": (peak - rss_before) / 1024,
        "bot_cpu_s": cpu,
        "worker_peak_mib": max(peaks.values(), default=0) / 1024,
        "worker_cpu_s": children.ru_utime + children.ru_stime,
        "wall_s": wall,
    }


def _child(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None,
            data_dir=Path(tmp) / "data",
            MODELS_DIR=args.models_dir or Path(tmp) / "models",
            sample_docs_dir="",
            extract_cpu_seconds=args.extract_cpu_seconds,
            extract_memory_mb=args.extract_memory_mb,
            fetch_max_bytes=args.fetch_max_bytes,
        )
        print(json.dumps(asyncio.run(_measure(settings, args.child, args.sources))))


def _caps(args: argparse.Namespace) -> str:
    defaults = load_settings(_env_file=None)
    return (
        f"caps: FETCH_MAX_BYTES {args.fetch_max_bytes / _MIB:g} MiB, "
        f"EXTRACT_CPU_SECONDS {args.extract_cpu_seconds:g}, "
        f"EXTRACT_MEMORY_MB {args.extract_memory_mb} (per worker), "
        f"MAX_FILE_BYTES {defaults.max_file_bytes / _MIB:g} MiB, "
        f"MAX_DECOMPRESSED_BYTES {defaults.max_decompressed_bytes / _MIB:g} MiB"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    defaults = load_settings(_env_file=None)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--extract-cpu-seconds", type=float, default=defaults.extract_cpu_seconds)
    parser.add_argument("--extract-memory-mb", type=int, default=defaults.extract_memory_mb)
    parser.add_argument("--fetch-max-bytes", type=int, default=defaults.fetch_max_bytes)
    parser.add_argument("--models-dir", type=Path, default=None)
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    parser.add_argument("--sources", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return
    with tempfile.TemporaryDirectory() as models, tempfile.TemporaryDirectory() as sources:
        _write_sources(Path(sources), args.cases)
        forwarded = [
            f"--sources={sources}",
            f"--extract-cpu-seconds={args.extract_cpu_seconds}",
            f"--extract-memory-mb={args.extract_memory_mb}",
            f"--fetch-max-bytes={args.fetch_max_bytes}",
            f"--models-dir={args.models_dir or models}",
        ]
        rows = []
        for case in args.cases:
            command = [sys.executable, "-m", "benchmarks.hostile_inputs", "--child", case]
            done = subprocess.run(  # noqa: S603 - our own interpreter and module
                [*command, *forwarded], capture_output=True, text=True, check=False
            )
            if done.returncode != 0:
                print(f"{case}: the measuring process failed\n{done.stderr[-2000:]}")
                continue
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
            rows[-1]["log"] = [line for line in done.stderr.splitlines() if "extract" in line]
    print(_caps(args))
    header = (
        f"{'case':<12} {'bot peak':>9} {'growth':>8} {'bot cpu':>8} "
        f"{'worker peak':>12} {'worker cpu':>11} {'wall':>7}  outcome"
    )
    print(header)
    for row in rows:
        print(
            f"{row['case']:<12} {row['bot_peak_mib']:>5.0f} MiB {row['bot_growth_mib']:>+4.0f} MiB"
            f" {row['bot_cpu_s']:>6.1f} s {row['worker_peak_mib']:>8.0f} MiB"
            f" {row['worker_cpu_s']:>9.1f} s {row['wall_s']:>5.1f} s  {row['outcome']}"
        )
        for line in row["log"]:
            print(f"{'':<12} log: {line}")


if __name__ == "__main__":
    main()
