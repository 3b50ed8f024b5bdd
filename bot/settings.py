"""Lore's settings: one pydantic-settings model read once, from the environment and `.env`.

Only the composition root (`bot.app`, `bot.cli`) reads it; lower layers get plain values.
Every field is documented in `.env.example`, and a test keeps the two in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Self
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator

from bot.edge_settings import EdgeSettings, blank_is_unset, is_loopback, split_list
from bot.log_redaction import MIN_SECRET_CHARS
from storage.model_registry import default_model

__all__ = ["Settings", "SettingsError", "is_loopback", "load_settings", "split_list"]


class SettingsError(Exception):
    """A setting has a wrong value; the message names the variable and what is expected."""


class Settings(EdgeSettings):
    """Everything an operator can configure. Field names map to UPPER_CASE variables; the
    chat edges' settings come from `EdgeSettings`, and so does how they are read (`.env`,
    unknown variables ignored, frozen)."""

    data_dir: Path = Field(default=Path("data"), description="Where Lore keeps its state.")
    qdrant_url: str | None = Field(
        default=None, description="A Qdrant server; unset means the embedded engine."
    )
    qdrant_api_key: SecretStr | None = Field(default=None, description="API key for QDRANT_URL.")
    qdrant_timeout_seconds: Annotated[float, Field(gt=0, le=300)] = 10.0
    hnsw_threshold: Annotated[int, Field(ge=1_000)] = Field(
        default=100_000, description="Points per collection above which an HNSW index is built."
    )

    language: Literal["en", "de", "fr", "es", "it", "pt", "ru", "zh", "ja"] = Field(
        default="en",
        description="The bot's language where a member's own cannot be told (ISO 639-1).",
    )
    embedding_model: str = Field(
        default_factory=lambda data: default_model(data["language"]),
        description="Embedding model choice (default: by LANGUAGE, see storage.model_registry).",
    )
    models_dir_override: Path | None = Field(
        default=None,
        validation_alias="MODELS_DIR",
        description="Where assembled model files live; default DATA_DIR/models.",
    )
    embedding_threads: Annotated[int, Field(ge=1, le=64)] = 1
    embedding_batch_tokens: Annotated[int, Field(ge=64, le=65_536)] = Field(
        default=1024, description="Padded tokens per embedding run (texts x longest text)."
    )
    embedding_memory_arena: bool = Field(
        default=False,
        description="Keep ONNX Runtime's growing CPU arena (a little faster, far more memory).",
    )
    malloc_arenas: Annotated[int, Field(ge=0, le=64)] = Field(
        default=2,
        description="glibc malloc arenas Lore's threads share (0: glibc's own rule).",
    )

    search_mode: Literal["hybrid", "hybrid-rrf", "dense"] = Field(
        default="hybrid",
        description="Rank by dense + lexical (tuned fusion, or RRF) or by dense vectors only.",
    )
    reranker_model_dir: Path | None = Field(
        default=None,
        description="An ONNX cross-encoder (model.onnx + tokenizer.json) that re-orders hits.",
    )
    reranker_candidates: Annotated[int, Field(ge=1, le=200)] = Field(
        default=20, description="Best fused hits the reranker reads (one model run each)."
    )

    chunk_tokens: Annotated[int, Field(ge=32, le=8192)] = 256
    chunk_overlap_tokens: Annotated[int, Field(ge=0, le=4096)] = 48

    max_file_bytes: Annotated[int, Field(ge=1024)] = 20 * 1024 * 1024
    max_chunks_per_document: Annotated[int, Field(ge=1, le=1_000_000)] = Field(
        default=10_000, description="Chunks one document may be cut into (bounds its embedding)."
    )
    max_decompressed_bytes: Annotated[int, Field(ge=1024)] = 100 * 1024 * 1024
    fetch_max_bytes: Annotated[int, Field(ge=1024)] = 10 * 1024 * 1024
    fetch_timeout_seconds: Annotated[float, Field(gt=0, le=300)] = 20.0
    fetch_max_redirects: Annotated[int, Field(ge=0, le=20)] = 5
    extract_cpu_seconds: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=60.0, description="CPU seconds text extraction may spend on one file."
    )
    extract_memory_mb: Annotated[int, Field(ge=128, le=65_536)] = Field(
        default=2048, description="Address space of one extraction worker process, in MiB."
    )
    extract_workers: Annotated[int, Field(ge=1, le=32)] = Field(
        default=2, description="Extraction worker processes (files read at the same time)."
    )
    max_image_pixels: Annotated[int, Field(ge=10_000, le=1_000_000_000)] = Field(
        default=40_000_000, description="Largest picture read (decoded width x height)."
    )
    max_ocr_pages: Annotated[int, Field(ge=1, le=10_000)] = Field(
        default=50, description="Most pages without a text layer OCR'd in one document."
    )
    ocr_cpu_seconds_per_page: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=40.0, description="CPU seconds OCR may add for each page or picture."
    )
    media_threads: Annotated[int, Field(ge=1, le=64)] = Field(
        default=1, description="Threads one worker uses for OCR and transcription."
    )
    speech_model: Literal["whisper-base", "whisper-tiny.en"] = Field(
        default="whisper-base",
        description="Speech recognition model: multilingual base, or faster English-only tiny.",
    )
    max_audio_seconds: Annotated[float, Field(gt=0, le=24 * 3600)] = Field(
        default=1200.0, description="Longest recording transcribed, in seconds."
    )
    speech_cpu_seconds_per_minute: Annotated[float, Field(gt=0, le=3600)] = Field(
        default=30.0, description="CPU seconds transcription may add per minute of sound."
    )
    speech_beam_size: Annotated[int, Field(ge=1, le=10)] = Field(
        default=2, description="Transcriptions whisper weighs at each step (1: fastest)."
    )
    watch_interval_minutes: Annotated[int, Field(ge=5, le=7 * 24 * 60)] = Field(
        default=60, description="Least time between two checks of one watched source."
    )
    watch_host_pacing_seconds: Annotated[float, Field(ge=0, le=600)] = Field(
        default=2.0, description="Least time between two requests to one host within a scan."
    )
    watch_max_entries_per_scan: Annotated[int, Field(ge=1, le=1000)] = Field(
        default=20, description="Feed entries ingested per scan; the rest wait for the next."
    )

    sample_docs_dir: Path | None = Field(
        default=None,
        description="A folder `lore run` loads as shared sample knowledge; `make run` sets docs.",
    )

    owners: str = Field(
        default="console:owner",
        description="Owner identities as platform:user_id, comma-separated.",
    )
    daily_budget_usd: Annotated[float, Field(ge=0, le=10_000)] = 1.0
    budget_timezone: str = Field(default="UTC", description="Budget days roll over here.")
    llm_base_url: str | None = Field(
        default=None, description="An OpenAI-compatible endpoint; unset = offline answerer."
    )
    llm_api_key: SecretStr | None = None
    llm_model: str = "gpt-4o-mini"
    llm_prices: str = Field(
        default="", description="model=input/cached/output dollars per million tokens, ..."
    )
    llm_timeout_seconds: Annotated[float, Field(gt=0, le=600)] = 60.0
    max_answer_tokens: Annotated[int, Field(ge=64, le=32_000)] = 800
    tool_timeout_seconds: Annotated[float, Field(gt=0, le=300)] = Field(
        default=20.0, description="Time one tool call (a search) may take before it is an error."
    )
    rate_limit_turns: Annotated[int, Field(ge=1, le=10_000)] = 20
    rate_limit_minutes: Annotated[int, Field(ge=1, le=1440)] = 10
    max_message_chars: Annotated[int, Field(ge=100, le=100_000)] = 4000
    approval_ttl_hours: Annotated[float, Field(gt=0, le=24 * 30)] = 24.0

    log_level: str = Field(default="INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    log_level_third_party: str = Field(
        default="WARNING",
        pattern=r"^(DEBUG|INFO|WARNING|ERROR)$",
        description="Level of libraries' loggers (they can log SQL parameters and bodies).",
    )

    @field_validator(
        "sample_docs_dir",
        "models_dir_override",
        "reranker_model_dir",
        "qdrant_url",
        "llm_base_url",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return blank_is_unset(value)

    @model_validator(mode="after")
    def _overlap_below_chunk(self) -> Self:
        if self.chunk_overlap_tokens >= self.chunk_tokens:
            msg = (
                "CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_TOKENS "
                f"(got {self.chunk_overlap_tokens} >= {self.chunk_tokens})"
            )
            raise ValueError(msg)
        return self

    @field_validator("budget_timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder ("Europe")
            raise ValueError(f"unknown timezone {value!r} (use e.g. Europe/Berlin)") from None
        return value

    @field_validator("owners")
    @classmethod
    def _owner_pairs(cls, value: str) -> str:
        for entry in filter(None, (part.strip() for part in value.split(","))):
            platform, _, user = entry.partition(":")
            if not platform or not user:
                raise ValueError(f"{entry!r} is not platform:user_id")
        return value

    @model_validator(mode="after")
    def _secrets_long_enough(self) -> Self:
        """A secret shorter than the log redaction's minimum cannot be kept out of the logs
        (redacting "x" would mangle every word with an x), so it is refused. Checked last:
        a value of the wrong kind is named as such first."""
        for name in type(self).model_fields:
            value = getattr(self, name)
            if (
                isinstance(value, SecretStr)
                and 0 < len(value.get_secret_value()) < MIN_SECRET_CHARS
            ):
                variable = name.upper()
                msg = (
                    f"{variable} is shorter than {MIN_SECRET_CHARS} characters, too short to "
                    f"keep out of the logs; leave {variable} unset if the service needs no key"
                )
                raise ValueError(msg)
        return self

    def secret_values(self) -> list[str]:
        """The value of every secret setting that is set (for the log redaction filter).

        Every `SecretStr` field counts, so a secret added later is redacted too.
        """
        values = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr) and value.get_secret_value():
                values.append(value.get_secret_value())
        return values

    @property
    def owner_identities(self) -> frozenset[tuple[str, str]]:
        """(platform, platform user id) pairs of the owners."""
        pairs = (part.strip().partition(":") for part in self.owners.split(","))
        return frozenset((platform, user) for platform, _, user in pairs if platform and user)

    @property
    def checkpoint_path(self) -> Path:
        """LangGraph's checkpoints (paused turns survive restarts here)."""
        return self.data_dir / "checkpoints.sqlite3"

    @property
    def qdrant_dir(self) -> Path:
        """Where the embedded engine keeps one shard per collection."""
        return self.data_dir / "qdrant"

    @property
    def database_path(self) -> Path:
        """The SQLite file: the source of truth."""
        return self.data_dir / "lore.sqlite3"

    @property
    def uploads_dir(self) -> Path:
        """Originals of every ingested source."""
        return self.data_dir / "uploads"

    @property
    def models_dir(self) -> Path:
        """Model directories assembled from installed packages."""
        return self.models_dir_override or self.data_dir / "models"


def load_settings(**overrides: object) -> Settings:
    """Read settings; a wrong value raises `SettingsError` naming the variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = "_".join(str(part) for part in error["loc"]).upper()
            message = str(error["msg"]).removeprefix("Value error, ")
            # A check across settings names its variables in its message.
            problems.append(f"{location}: {message}" if location else message)
        raise SettingsError("Invalid configuration: " + "; ".join(problems)) from None
