"""What a reader doing heavy work (OCR, transcription) gets from the worker that runs it: the
limits, a way to report how far it is, and a way to claim CPU time for the work it found.

Readers call `claim_pages` or `claim_audio` once they know how much work a file holds (its
pages without a text layer, its duration): over a limit that raises the polite refusal, before
any of the work starts; under it, the job's CPU allowance grows with the work. Outside a
worker (a test calling `extract_text` directly) the reports and claims go nowhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphs.ingest.errors import ExtractionLimitError
from graphs.ingest.extract_protocol import MediaLimits, ReadingStep
from graphs.ingest.locations import timestamp

__all__ = ["ReadingJob", "too_long"]


def _ignore_step(_step: ReadingStep) -> None:
    return None


def _ignore_claim(_seconds: float) -> None:
    return None


@dataclass(frozen=True, slots=True)
class ReadingJob:
    """One file's heavy reading: its limits, where its progress goes, and its CPU claims."""

    limits: MediaLimits = field(default_factory=MediaLimits)
    report: Callable[[ReadingStep], None] = _ignore_step
    allow_cpu: Callable[[float], None] = _ignore_claim

    def claim_pages(self, pages: int, *, what: str) -> None:
        """Before OCR'ing `pages` pages of `what` ("This PDF"): refuse over the page limit,
        else add their CPU time to the job's allowance."""
        most = self.limits.max_ocr_pages
        if pages > most:
            raise ExtractionLimitError(
                f"{what} has {pages} pages without a text layer (scanned); Lore reads at most "
                f"{most} such pages of one document. Please send it in parts."
            )
        self.allow_cpu(pages * self.limits.ocr_cpu_seconds_per_page)

    def claim_audio(self, seconds: float) -> None:
        """Before transcribing `seconds` of sound: refuse over the length limit, else add the
        transcription's CPU time to the job's allowance."""
        if seconds > self.limits.max_audio_seconds:
            raise ExtractionLimitError(too_long(seconds, self.limits.max_audio_seconds))
        self.allow_cpu(seconds / 60 * self.limits.speech_cpu_seconds_per_minute)


def too_long(seconds: float, most: float) -> str:
    """The refusal of a recording longer than `most` seconds."""
    return (
        f"This recording is {timestamp(seconds)} long; Lore transcribes at most "
        f"{timestamp(most)} of one recording. Please send a shorter one, or cut it in parts."
    )
