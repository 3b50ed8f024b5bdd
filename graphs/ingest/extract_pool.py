"""A small pool of text-extraction worker processes, CPU- and memory-limited, replaced on overrun.

Parsing an untrusted PDF, DOCX or HTML file can cost unbounded CPU (a 5 KB PDF whose
pages share one huge drawing stream) or memory (a DOCX whose XML inflates to millions
of elements). `ExtractionPool.extract` therefore never parses in the bot's process: it
hands the bytes to a worker (`graphs.ingest.extract_worker`) that limits itself with
`RLIMIT_CPU` per job and `RLIMIT_AS` overall. A worker that overruns is killed by the
kernel (SIGXCPU), or answers `MemoryError`, or misses the wall-clock backstop and is
killed here; either way it is discarded and the next job starts a fresh one, and the
member gets `ExtractionLimitError`. At most `workers` jobs run at once; the rest wait
for a free worker, so one hostile file holds one worker for at most its CPU allowance
while the others keep serving.

Heavy reading scales its limits with the work: a reader that finds pages to OCR or minutes
to transcribe claims more CPU time within `ExtractionLimits.media`, the worker reports the
job's new allowance, and the wall-clock backstop moves with it (never past the largest
allowance the limits permit). The worker's progress frames (`ReadingStep`: page 3 of 12,
2:10 of 7:45) go to the caller's `on_step` as they arrive.

Watched feeds are parsed the same way (`ExtractionPool.parse_feed`), under the same limits.

Workers start on first use (none at all for a core that never ingests), run with an
empty environment (no tokens or keys to leak) and are closed with the pool.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from graphs.ingest.errors import (
    DecompressionBombError,
    EmptyDocumentError,
    ExtractionLimitError,
    IngestError,
    NotUtf8Error,
    ReaderUnavailableError,
    UnsupportedSourceError,
)
from graphs.ingest.extract_jobs import (
    MAX_HEADER,
    ExtractionJob,
    ExtractionLimits,
    StepSink,
    WorkerDiedError,
    WorkerProcess,
)
from graphs.ingest.extract_protocol import READY, MediaLimits
from graphs.ingest.feeds import Feed, FeedError, feed_from_json
from graphs.ingest.formats import ExtractedText, SourceFormat
from storage.speech_models import SpeechModelError

__all__ = [
    "ExtractionLimits",
    "ExtractionPool",
    "ExtractionUnavailableError",
    "SpeechModelSource",
    "StepSink",
]

SpeechModelSource = Callable[[], Awaitable[Path]]
"""Assembles and checks the speech model's directory (`storage.speech_models`)."""

logger = logging.getLogger(__name__)

_WORKER_MODULE: Final = "graphs.ingest.extract_worker"
_CODE_ROOT: Final = Path(__file__).resolve().parents[2]  # holds the `graphs` package
_MAX_MESSAGE: Final = 500
_KNOWN_ERRORS: Final[dict[str, type[IngestError]]] = {
    cls.__name__: cls
    for cls in (
        DecompressionBombError,
        EmptyDocumentError,
        ExtractionLimitError,
        NotUtf8Error,
        ReaderUnavailableError,
        UnsupportedSourceError,
        FeedError,
    )
}
_CRASHED = "Lore could not read this file safely (its reader stopped), so I did not save it."


class ExtractionUnavailableError(IngestError):
    """No extraction worker could be started (an installation problem, not the file's fault)."""


class ExtractionPool:
    """Runs `extract_text` in limited worker processes. Use as an async context manager."""

    def __init__(
        self, limits: ExtractionLimits, *, speech_model: SpeechModelSource | None = None
    ) -> None:
        """`speech_model` assembles (once) and checks the speech model's directory, before
        the first recording; without it recordings are refused."""
        if limits.workers < 1:
            raise ValueError("an extraction pool needs at least one worker")
        self._limits = limits
        self._speech_model = speech_model
        self._speech_dir: Path | None = None
        self._speech_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(limits.workers)
        self._idle: list[WorkerProcess] = []
        self._dying: list[WorkerProcess] = []
        self._open = False

    async def __aenter__(self) -> Self:
        self._open = True
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._open = False
        workers, self._idle = self._idle, []
        await asyncio.gather(*(worker.close(5.0) for worker in workers))
        await self._reap()

    async def extract(
        self,
        data: bytes,
        fmt: SourceFormat,
        *,
        filename: str | None,
        charset: str | None,
        max_decompressed_bytes: int,
        on_step: StepSink | None = None,
    ) -> ExtractedText:
        """Clean text and title of `data`, extracted in a worker; an `IngestError` if not.
        A long reading's steps (page 3 of 12...) go to `on_step` while it runs."""
        if not self._open:
            raise RuntimeError("use ExtractionPool as an async context manager")
        header = {
            "format": fmt.value,
            "filename": filename,
            "charset": charset,
            "max_decompressed_bytes": max_decompressed_bytes,
            "cpu_seconds": self._limits.cpu_seconds,
            "media": (await self._media(fmt)).to_json(),
        }
        max_text = 4 * max(max_decompressed_bytes, len(data)) + MAX_HEADER
        if on_step is not None:
            # The steps go back to the caller in its own context (a LangGraph stream writer
            # finds its run there); the job itself runs in an empty one, see below.
            caller = contextvars.copy_context()
            report = on_step
            on_step = lambda step: caller.run(report, step)  # noqa: E731
        job = ExtractionJob(header, data, max_text, self._limits, on_step)
        answer, text = await self._isolated(job)
        self._raise_error(answer, job.allowance)
        return ExtractedText(
            title=str(answer["title"]),
            text=text.decode("utf-8", "replace"),
            is_markdown=bool(answer["is_markdown"]),
            recognised=bool(answer.get("recognised", False)),
            language=str(answer.get("language") or ""),
        )

    async def parse_feed(self, body: bytes, *, base_url: str) -> Feed:
        """An RSS or Atom feed, parsed in a worker under the same limits as a file; a
        `FeedError` (or another `IngestError`) if not."""
        if not self._open:
            raise RuntimeError("use ExtractionPool as an async context manager")
        header = {"feed_base_url": base_url, "cpu_seconds": self._limits.cpu_seconds}
        # JSON escapes a character in at most six.
        job = ExtractionJob(header, body, 6 * len(body) + MAX_HEADER, self._limits, None)
        answer, text = await self._isolated(job)
        self._raise_error(answer, job.allowance)
        return feed_from_json(text.decode("utf-8", "replace"))

    async def _isolated(self, job: ExtractionJob) -> tuple[Any, bytes]:
        """One job, run in an empty context. A worker outlives the call that starts or uses
        it, and so do the callbacks that its pipes and timeouts register with the event loop,
        each with the context it was registered in. The caller's context can hold a whole
        ingest (a LangGraph run's config reaches its state: the file, its text, its
        vectors)."""
        return await asyncio.create_task(self._job(job), context=contextvars.Context())

    async def _media(self, fmt: SourceFormat) -> MediaLimits:
        """The job's media limits; for a recording, with the speech model's directory."""
        if fmt is not SourceFormat.AUDIO:
            return self._limits.media
        async with self._speech_lock:
            if self._speech_dir is None and self._speech_model is not None:
                try:
                    self._speech_dir = await self._speech_model()
                except SpeechModelError as exc:
                    logger.error("The speech model is not usable: %s", exc)  # noqa: TRY400
                    raise ReaderUnavailableError(_NO_SPEECH) from exc
        if self._speech_dir is None:
            raise ReaderUnavailableError(_NO_SPEECH)
        return replace(self._limits.media, speech_model_dir=str(self._speech_dir))

    async def _job(self, job: ExtractionJob) -> tuple[Any, bytes]:
        """Run one job in a free worker (started if none is idle); its answer and text."""
        async with self._slots:
            worker = self._idle.pop() if self._idle else await self._start()
            reusable = False
            try:
                answer, text = await self._run(worker, job)
                failed = "error" in answer and answer["error"]["kind"] not in _KNOWN_ERRORS
                reusable = not failed and not answer.get("retire", True)
            finally:
                if reusable and self._open:
                    self._idle.append(worker)
                else:
                    worker.kill()
                    self._dying.append(worker)
                    await self._reap()
        return answer, text

    async def _run(self, worker: WorkerProcess, job: ExtractionJob) -> tuple[Any, bytes]:
        started = time.monotonic()
        try:
            async with asyncio.timeout(self._limits.wall_seconds(job.allowance)) as deadline:
                job.deadline, job.started = deadline, asyncio.get_running_loop().time()
                return await worker.run(job)
        except TimeoutError:
            logger.warning("Extraction worker passed the wall-clock backstop; killed")
            raise self._limit_error(job.allowance) from None
        except WorkerDiedError as exc:
            worker.kill()
            code = await worker.process.wait()
            # A worker that died after working at least its CPU allowance was stopped by it
            # (on a busy machine the kernel's signal can race the pipe closing).
            spent_allowance = time.monotonic() - started >= job.allowance
            if code == -signal.SIGXCPU or spent_allowance:
                logger.warning("Extraction stopped at its CPU limit (%gs)", job.allowance)
                raise self._limit_error(job.allowance) from exc
            logger.warning("Extraction worker died (exit code %s): %s", code, exc)
            raise UnsupportedSourceError(_CRASHED) from exc

    def _limit_error(self, cpu_seconds: float) -> ExtractionLimitError:
        return ExtractionLimitError(
            "This file needs more work to read than Lore allows for one document "
            f"({cpu_seconds:g} seconds of CPU, {self._limits.memory_mb} MB of memory), "
            "so I did not save it. If it is a normal document, try sending it in parts."
        )

    async def _start(self) -> WorkerProcess:
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                _WORKER_MODULE,
                str(self._limits.memory_mb),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
                env={"PYTHONPATH": str(_CODE_ROOT)},
            )
        except OSError as exc:
            logger.error("Cannot start an extraction worker: %s", exc)  # noqa: TRY400 - no trace
            raise ExtractionUnavailableError(_UNAVAILABLE) from exc
        worker = WorkerProcess(process)
        try:
            async with asyncio.timeout(self._limits.start_timeout_seconds):
                ready = await worker.stdout.readexactly(len(READY))
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            ready = b""
        if ready != READY:
            worker.kill()
            code = await process.wait()
            logger.error("Extraction worker did not start (exit code %s)", code)
            raise ExtractionUnavailableError(_UNAVAILABLE)
        return worker

    def _raise_error(self, answer: Any, allowance: float) -> None:
        """The `IngestError` a worker reported, if it reported one."""
        error = answer.get("error")
        if error is None:
            return
        kind, message = str(error["kind"]), str(error["message"])[:_MAX_MESSAGE]
        if kind in _KNOWN_ERRORS:
            raise _KNOWN_ERRORS[kind](message)
        if kind == "memory":
            logger.warning("Extraction stopped at its memory limit (%d MB)", self._limits.memory_mb)
            raise self._limit_error(allowance)
        logger.warning("Extraction failed inside the worker: %s", message)
        raise UnsupportedSourceError(_CRASHED)

    async def _reap(self) -> None:
        dying, self._dying = self._dying, []
        for worker in dying:
            await worker.process.wait()


_UNAVAILABLE = "Lore's file reader is not working right now; please try again later."
_NO_SPEECH = (
    "Lore's speech recognition is not installed correctly, so it cannot transcribe "
    "recordings right now; the owner's log says why."
)
