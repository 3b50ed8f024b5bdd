"""What a person reads while a long reading runs: "🔎 Reading page 3 of 12…",
"🎙 Transcribing 2:10 of 7:45…" (the status message an edge edits as the steps arrive)."""

from __future__ import annotations

from graphs.ingest.extract_protocol import ReadingStep
from graphs.ingest.locations import timestamp
from graphs.ingest.state import IngestProgress

__all__ = ["reading_progress"]


def reading_progress(step: ReadingStep) -> IngestProgress:
    """The ingest progress line for one step of a long reading."""
    if step.kind == "audio":
        done = timestamp(min(step.done, step.total))
        return IngestProgress(
            "transcribing", f"Transcribing {done} of {timestamp(step.total)}…", icon="🎙"
        )
    if step.kind == "image":
        return IngestProgress("ocr", "Reading the text in the picture…", icon="🔎")
    return IngestProgress("ocr", f"Reading page {step.done:g} of {step.total:g}…", icon="🔎")
