"""What the extraction pool and its worker processes both know of their pipe protocol: the
ready signal, the limits of heavy reading (OCR, transcription) a job carries, and the steps
a long reading reports back while it runs.

A module of its own so that the pool (in the bot's process) never imports the worker,
whose extractor loads the parsers (see `graphs.ingest.extract_worker` for the protocol).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

__all__ = ["READY", "MediaLimits", "ReadingStep"]

READY: Final = b"READY"
"""What a worker writes once, when it is ready for its first job."""


@dataclass(frozen=True, slots=True)
class MediaLimits:
    """How much heavy reading one file may ask for; CPU time grows with the work found.

    Over `max_image_pixels` (decoded width x height), `max_ocr_pages` pages without a
    text layer or `max_audio_seconds` of sound, a file is refused before the work starts.
    Otherwise the job's CPU allowance grows by `ocr_cpu_seconds_per_page` for each page to
    OCR (an image is one page) and by `speech_cpu_seconds_per_minute` for each minute to
    transcribe. `threads` is how many threads OCR and transcription use in a worker, and
    `speech_beam_size` how many transcriptions whisper weighs at each step (1: the fastest).
    `speech_model_dir` is the assembled speech model (None: none prepared).
    """

    max_image_pixels: int = 40_000_000
    max_ocr_pages: int = 50
    ocr_cpu_seconds_per_page: float = 40.0
    max_audio_seconds: float = 1200.0
    speech_cpu_seconds_per_minute: float = 30.0
    threads: int = 1
    speech_beam_size: int = 2
    speech_model_dir: str | None = None

    @property
    def most_cpu_seconds(self) -> float:
        """The most CPU time heavy reading may add to one job (its largest allowance)."""
        pages = self.max_ocr_pages * self.ocr_cpu_seconds_per_page
        speech = self.max_audio_seconds / 60 * self.speech_cpu_seconds_per_minute
        return max(pages, speech)

    def to_json(self) -> dict[str, Any]:
        """The limits as a job header carries them."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MediaLimits:
        """The limits a job header carries."""
        return cls(**raw)


@dataclass(frozen=True, slots=True)
class ReadingStep:
    """How far a long reading is: the page being read (`done`) of `total` pages, a picture
    being read, or `done` of `total` seconds transcribed."""

    kind: Literal["page", "image", "audio"]
    done: float
    total: float

    def to_json(self) -> dict[str, Any]:
        """The step as a progress frame carries it."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ReadingStep:
        """The step a progress frame carries."""
        kind = raw.get("kind")
        if kind not in {"page", "image", "audio"}:
            raise ValueError(f"unknown reading step {kind!r}")
        return cls(kind, float(raw["done"]), float(raw["total"]))
