"""Reading speech: a recording (voice note, audio file, the sound of a video) decoded with PyAV
and transcribed offline with faster-whisper, from the model directory Lore assembled.

The length is checked before the work: the duration a file declares first, then the sound
actually decoded (at most `max_audio_seconds` of it is ever held: 16 kHz mono floats, 77 MB
for 20 minutes). Only then is the transcription's CPU time claimed, and its progress
reported as it goes ("2:10 of 7:45"). Decoding is a beam search at temperature 0 with
silence skipped (whisper's VAD), so the same recording always gives the same transcript
(and so the same content hash).

The transcript is Markdown: the segments follow one another in blocks of about half a
minute, each block under a heading with the time it starts at ("1:23"), so a citation can
say where in the recording a passage is. Whisper's language guess is kept with the text.
"""

from __future__ import annotations

import functools
import io
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import av
import numpy as np

from graphs.ingest.errors import ReaderUnavailableError, UnsupportedSourceError
from graphs.ingest.extract_protocol import ReadingStep
from graphs.ingest.locations import time_heading
from graphs.ingest.reading_job import ReadingJob
from graphs.ingest.text_cleanup import escape_headings

__all__ = ["Transcript", "read_audio"]

SAMPLE_RATE: Final = 16_000
_BLOCK_SECONDS: Final = 30.0
_BLOCK_CHARS: Final = 600
_REPORT_EVERY_SECONDS: Final = 1.5  # wall-clock time between two progress reports
_AUDIO_BROKEN = "This recording could not be read; it may be damaged or not really a sound file."
_NO_SOUND = "This file holds no sound to transcribe."
_SPEECH_MISSING = (
    "Lore's speech recognition is not installed correctly (its model is missing), so it "
    "cannot transcribe recordings right now."
)


@dataclass(frozen=True, slots=True)
class Transcript:
    """What was heard: the Markdown text (blocks under their start times), its first words
    (a title), the detected language, and the recording's length in seconds."""

    text: str
    first_words: str
    language: str
    seconds: float


def read_audio(data: bytes, job: ReadingJob) -> Transcript:
    """Transcribe a recording; an `IngestError` if it is too long, broken or silent."""
    model_dir = job.limits.speech_model_dir
    if not model_dir or not (Path(model_dir) / "tokenizer.json").is_file():
        raise ReaderUnavailableError(_SPEECH_MISSING)  # never let faster-whisper fetch one
    sound = _decode(data, job)
    seconds = len(sound) / SAMPLE_RATE
    job.claim_audio(seconds)
    segments, info = _model(model_dir, job.limits.threads).transcribe(
        sound,
        beam_size=job.limits.speech_beam_size,
        temperature=0.0,
        condition_on_previous_text=False,
        vad_filter=True,
    )
    heard = list(_reported(segments, seconds, job))
    return Transcript(
        text="\n\n".join(_blocks(heard)),
        first_words=heard[0][1] if heard else "",
        language=str(info.language or ""),
        seconds=seconds,
    )


def _decode(data: bytes, job: ReadingJob) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The first audio stream as 16 kHz mono floats; refused past the length limit."""
    most = job.limits.max_audio_seconds
    try:
        with av.open(io.BytesIO(data), metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise UnsupportedSourceError(_NO_SOUND)
            stream = container.streams.audio[0]
            declared = _declared_seconds(container, stream)
            if declared is not None and declared > most:
                job.claim_audio(declared)  # refuses before anything is decoded
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            chunks: list[np.ndarray[Any, np.dtype[np.float32]]] = []
            held = 0
            for frame in _frames(container, stream, resampler):
                samples = frame.to_ndarray().reshape(-1)
                held += len(samples)
                if held > (most + 1) * SAMPLE_RATE:
                    job.claim_audio(held / SAMPLE_RATE)  # over the limit: refuses
                chunks.append(samples)
    except (av.error.FFmpegError, ValueError, IndexError) as exc:
        raise UnsupportedSourceError(_AUDIO_BROKEN) from exc
    if not chunks:
        raise UnsupportedSourceError(_NO_SOUND)
    return np.concatenate(chunks).astype(np.float32, copy=False)


def _declared_seconds(container: Any, stream: Any) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return float(container.duration) / av.time_base
    return None


def _frames(container: Any, stream: Any, resampler: Any) -> Iterator[Any]:
    for frame in container.decode(stream):
        yield from resampler.resample(frame)
    yield from resampler.resample(None)


def _reported(
    segments: Iterable[Any], seconds: float, job: ReadingJob
) -> Iterator[tuple[float, str]]:
    """Each segment's start and text, reporting how far the transcription is as it goes."""
    last = 0.0
    job.report(ReadingStep("audio", 0.0, seconds))
    for segment in segments:
        now = time.monotonic()
        if now - last >= _REPORT_EVERY_SECONDS:
            job.report(ReadingStep("audio", min(float(segment.end), seconds), seconds))
            last = now
        text = " ".join(str(segment.text).split())
        if text:
            yield float(segment.start), text


def _blocks(heard: list[tuple[float, str]]) -> Iterator[str]:
    """Segments in blocks of about half a minute, each under the time it starts at."""
    start: float | None = None
    lines: list[str] = []
    for at, text in heard:
        if start is not None and (
            at - start >= _BLOCK_SECONDS or sum(map(len, lines)) >= _BLOCK_CHARS
        ):
            yield _block(start, lines)
            start, lines = None, []
        start = at if start is None else start
        lines.append(text)
    if start is not None:
        yield _block(start, lines)


def _block(start: float, lines: list[str]) -> str:
    return f"# {time_heading(start)}\n\n" + escape_headings(" ".join(lines))


@functools.cache
def _model(model_dir: str, threads: int) -> Any:
    """The whisper model of `model_dir`, loaded once per worker process."""
    from faster_whisper import WhisperModel  # noqa: PLC0415 - heavy: only for a first recording

    return WhisperModel(
        model_dir,
        device="cpu",
        compute_type="int8",
        cpu_threads=threads,
        num_workers=1,
        local_files_only=True,
    )
