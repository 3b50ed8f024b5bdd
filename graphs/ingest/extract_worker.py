"""The text-extraction worker process: reads jobs on stdin, extracts under CPU and memory limits.

Run as `python -m graphs.ingest.extract_worker MEMORY_MB` by `extract_pool.ExtractionPool`,
never imported by the bot. It imports only the extraction module and its readers (and,
for pictures and sound, the OCR and speech models they load): no storage, no secrets (the
pool starts it with an empty environment).

Limits, set by the worker on itself:
- `RLIMIT_AS`: the whole process may map at most MEMORY_MB; a parser that asks for
  more gets a `MemoryError` (reported as such) or dies;
- `RLIMIT_CPU`: before each job the soft limit is set to the CPU time used so far plus
  the job's allowance, so the kernel stops an overrunning job with SIGXCPU (the pool
  sees the signal and replaces the worker). A reader that finds heavy work (pages to OCR,
  minutes to transcribe) claims more, within the job's `MediaLimits`, and the worker
  tells the pool its new allowance so the pool's wall-clock backstop follows;
- `RLIMIT_CORE` 0: a killed worker leaves no core file behind.

A failed job whose peak address space reached 90% of the limit is reported as a memory
overrun (lxml reports a failed allocation as "unknown error" in a broken file); a worker
whose peak passed half the limit asks to be retired, so the next job starts fresh.

Protocol (all lengths big-endian): the worker first writes `READY`. A job is a 4-byte
length and a JSON header (format, filename, charset, max_decompressed_bytes,
cpu_seconds, media; or, for a feed, `feed_base_url` and cpu_seconds), then an 8-byte length
and the source bytes. While it runs, the worker
may write progress frames: a 4-byte length and a JSON header with `step` (a `ReadingStep`)
or `allowance` (the job's CPU seconds now), with nothing after them. The answer is a 4-byte
length and a JSON header (`title`, `is_markdown`, `recognised` and `language`, or `feed`,
or `error` with `kind` and `message`; and `retire`), then an 8-byte length and the UTF-8 text
(the feed as JSON for a feed; empty after an error).
"""

from __future__ import annotations

import json
import logging
import math
import resource
import struct
import sys
import warnings
from pathlib import Path
from typing import IO, Any, Final

from graphs.ingest.errors import IngestError
from graphs.ingest.extract import extract_text
from graphs.ingest.extract_protocol import READY, MediaLimits, ReadingStep
from graphs.ingest.feed_parsing import parse_feed
from graphs.ingest.feeds import feed_to_json
from graphs.ingest.formats import SourceFormat
from graphs.ingest.reading_job import ReadingJob

__all__ = ["main"]

_MEGABYTE: Final = 1024 * 1024
_NEAR_LIMIT: Final = 0.9


def main() -> None:
    """Serve jobs until stdin closes."""
    memory_mb = int(sys.argv[1])
    logging.disable(logging.CRITICAL)  # parsers' warnings about broken files go nowhere
    warnings.simplefilter("ignore")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = memory_mb * _MEGABYTE
    resource.setrlimit(resource.RLIMIT_AS, (_lower(limit, hard), _lower(limit, hard)))
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    outbox.write(READY)
    outbox.flush()
    while (header := _read_frame(inbox, ">I")) is not None:
        data = _read_frame(inbox, ">Q")
        if data is None:
            return
        answer, text = _run(json.loads(header), data, outbox)
        peak = _peak_address_space()
        if peak >= _NEAR_LIMIT * limit and "error" in answer and answer["error"]["kind"] != "crash":
            # Parsers report a failed allocation as a broken file ("unknown error"):
            # a failure at the memory ceiling is the limit, whatever they said.
            answer = {"error": {"kind": "memory", "message": ""}}
        answer["retire"] = peak >= limit // 2  # a fresh worker, not a bloated one, next time
        _write_frame(outbox, ">I", json.dumps(answer).encode())
        _write_frame(outbox, ">Q", text.encode("utf-8", "replace"))
        outbox.flush()


class _Allowance:
    """One job's CPU allowance: set when it starts, grown by the readers' claims."""

    def __init__(self, seconds: float, outbox: IO[bytes]) -> None:
        self._start = _cpu_used()
        self._seconds = seconds
        self._outbox = outbox
        _limit_cpu(self._start + seconds)

    def claim(self, seconds: float) -> None:
        """Allow `seconds` more, and tell the pool the job's allowance now."""
        self._seconds += max(0.0, seconds)
        _limit_cpu(self._start + self._seconds)
        _send_progress(self._outbox, {"allowance": self._seconds})


def _run(job: dict[str, Any], data: bytes, outbox: IO[bytes]) -> tuple[dict[str, Any], str]:
    """Extract one source (or parse one feed) under its CPU allowance; an answer header and
    the text."""
    allowance = _Allowance(float(job["cpu_seconds"]), outbox)

    def report(step: ReadingStep) -> None:
        _send_progress(outbox, {"step": step.to_json()})

    reading = ReadingJob(MediaLimits.from_json(job.get("media", {})), report, allowance.claim)
    out_of_memory = False
    try:
        if "feed_base_url" in job:
            feed = parse_feed(data, base_url=str(job["feed_base_url"]))
            return {"feed": True}, feed_to_json(feed)
        extracted = extract_text(
            data,
            SourceFormat(job["format"]),
            filename=job["filename"],
            charset=job["charset"],
            max_decompressed_bytes=int(job["max_decompressed_bytes"]),
            job=reading,
        )
    except IngestError as exc:
        return {"error": {"kind": type(exc).__name__, "message": str(exc)}}, ""
    except MemoryError:
        # Nothing is allocated here: the failed parse's objects are still held by the
        # exception; they are freed when this block ends, and the answer is built after it.
        out_of_memory = True
    except Exception as exc:  # the job boundary: a parser bug must not look like an answer
        return {"error": {"kind": "crash", "message": type(exc).__name__}}, ""
    finally:
        _limit_cpu(None)
    if out_of_memory:
        return {"error": {"kind": "memory", "message": ""}}, ""
    answer = {
        "title": extracted.title,
        "is_markdown": extracted.is_markdown,
        "recognised": extracted.recognised,
        "language": extracted.language,
    }
    return answer, extracted.text


def _send_progress(outbox: IO[bytes], header: dict[str, Any]) -> None:
    _write_frame(outbox, ">I", json.dumps(header).encode())
    outbox.flush()


def _peak_address_space() -> int:
    """The most address space this process has mapped so far (VmPeak), in bytes."""
    try:
        for line in Path("/proc/self/status").read_bytes().splitlines():
            if line.startswith(b"VmPeak:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB of RSS


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _limit_cpu(total: float | None) -> None:
    """Stop the process once it has used `total` CPU seconds in all (None: no limit)."""
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if total is None:
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        return
    resource.setrlimit(resource.RLIMIT_CPU, (_lower(math.ceil(total), hard), hard))


def _lower(value: int, hard: int) -> int:
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def _read_frame(stream: IO[bytes], length_format: str) -> bytes | None:
    size = struct.calcsize(length_format)
    prefix = stream.read(size)
    if len(prefix) < size:
        return None
    (length,) = struct.unpack(length_format, prefix)
    body = stream.read(length)
    return body if len(body) == length else None


def _write_frame(stream: IO[bytes], length_format: str, body: bytes) -> None:
    stream.write(struct.pack(length_format, len(body)))
    stream.write(body)


if __name__ == "__main__":
    main()
