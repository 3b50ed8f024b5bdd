"""What the extraction pool sends a worker and how it reads the answers: the limits of a job,
one job on its way (its frames, its progress, its CPU allowance and the deadline that follows
it) and one worker process's pipes. The pool (`graphs.ingest.extract_pool`) decides which
worker runs what; the protocol is described in `graphs.ingest.extract_worker`.
"""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from graphs.ingest.extract_protocol import MediaLimits, ReadingStep

__all__ = [
    "MAX_HEADER",
    "ExtractionJob",
    "ExtractionLimits",
    "StepSink",
    "WorkerDiedError",
    "WorkerProcess",
]

MAX_HEADER: Final = 64 * 1024
StepSink = Callable[[ReadingStep], None]
"""Where a job's progress goes (pages OCR'd, seconds transcribed)."""


@dataclass(frozen=True, slots=True)
class ExtractionLimits:
    """What one extraction may cost, and how many run at once.

    `cpu_seconds` is CPU time per file, before heavy reading claims more within `media`;
    `memory_mb` the address space of a worker process (its parsers and models included);
    the wall-clock backstop is `wall_factor * allowance + wall_grace_seconds`, for a worker
    that stops answering without using CPU.
    """

    cpu_seconds: float
    memory_mb: int
    workers: int = 2
    media: MediaLimits = field(default_factory=MediaLimits)
    start_timeout_seconds: float = 60.0
    wall_factor: float = 3.0
    wall_grace_seconds: float = 10.0

    def wall_seconds(self, allowance: float) -> float:
        """How long a job with `allowance` CPU seconds may take on the clock."""
        return self.wall_factor * allowance + self.wall_grace_seconds

    @property
    def most_cpu_seconds(self) -> float:
        """The largest CPU allowance one job can reach (its claims included)."""
        return self.cpu_seconds + self.media.most_cpu_seconds


class WorkerDiedError(Exception):
    """The worker process ended (or stopped answering) in the middle of a job."""


@dataclass(slots=True)
class ExtractionJob:
    """One extraction on its way through a worker: what is sent, where its progress goes,
    and its CPU allowance (grown by the readers' claims) with the deadline that follows it."""

    header: dict[str, Any]
    data: bytes
    max_text: int
    limits: ExtractionLimits
    on_step: StepSink | None
    allowance: float = 0.0
    deadline: asyncio.Timeout | None = None
    started: float = 0.0  # the event loop's clock when the job was sent

    def __post_init__(self) -> None:
        self.allowance = self.limits.cpu_seconds

    def progress(self, frame: dict[str, Any]) -> None:
        """A progress frame: a step for the caller, or a larger allowance (the wall-clock
        backstop moves with it, never past the largest allowance the limits permit)."""
        if "allowance" in frame:
            self.allowance = min(float(frame["allowance"]), self.limits.most_cpu_seconds)
            if self.deadline is not None:
                self.deadline.reschedule(self.started + self.limits.wall_seconds(self.allowance))
        elif self.on_step is not None:
            try:
                step = ReadingStep.from_json(frame["step"])
            except (KeyError, TypeError, ValueError):
                return  # a malformed step is no reason to fail the job
            self.on_step(step)


@dataclass(slots=True)
class WorkerProcess:
    process: asyncio.subprocess.Process

    @property
    def stdin(self) -> asyncio.StreamWriter:
        if self.process.stdin is None:
            raise RuntimeError("extraction worker started without a stdin pipe")
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        if self.process.stdout is None:
            raise RuntimeError("extraction worker started without a stdout pipe")
        return self.process.stdout

    async def run(self, job: ExtractionJob) -> tuple[Any, bytes]:
        """Send one job, pass its progress frames on, read its answer; `WorkerDiedError` if
        the worker went away."""
        encoded = json.dumps(job.header).encode()
        try:
            self.stdin.write(struct.pack(">I", len(encoded)) + encoded)
            self.stdin.write(struct.pack(">Q", len(job.data)))
            self.stdin.write(job.data)
            await self.stdin.drain()
            while True:
                answer = json.loads(await self._read_frame(">I", MAX_HEADER))
                if "step" not in answer and "allowance" not in answer:
                    break
                job.progress(answer)
            text = await self._read_frame(">Q", job.max_text)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise WorkerDiedError from exc
        return answer, text

    async def _read_frame(self, length_format: str, limit: int) -> bytes:
        prefix = await self.stdout.readexactly(struct.calcsize(length_format))
        (length,) = struct.unpack(length_format, prefix)
        if length > limit:
            raise WorkerDiedError(f"answer of {length} bytes is over the {limit} limit")
        return await self.stdout.readexactly(length)

    def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        self.stdin.close()

    async def close(self, grace_seconds: float) -> None:
        """Ask the worker to stop (end of input), kill it if it does not, and reap it."""
        self.stdin.close()
        try:
            async with asyncio.timeout(grace_seconds):
                await self.process.wait()
        except TimeoutError:
            self.kill()
            await self.process.wait()
