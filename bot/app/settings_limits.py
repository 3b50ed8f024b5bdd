"""What the core's parts take from `Settings`, as the plain values they expect: the agent's
and the lookups' limits, the fetcher's, the extraction workers' (media included), the
ingest context, and the fusion of the embedding model in use."""

from __future__ import annotations

from contextlib import AsyncExitStack
from datetime import timedelta

from bot.app.stores import Stores
from bot.lookups import LookupLimits
from bot.settings import Settings
from graphs.agent.context import AgentLimits
from graphs.fair_embedding import FairEmbedder
from graphs.fusion import Fusion
from graphs.ingest.context import IngestContext, IngestLimits
from graphs.ingest.extract_pool import ExtractionLimits, ExtractionPool
from graphs.ingest.extract_protocol import MediaLimits
from graphs.ingest.url_fetch import FetchLimits, SafeFetcher
from graphs.ingest.url_safety import Address
from storage.documents import DocumentRepository
from storage.lexical import LexicalEncoder
from storage.model_files import model_choice
from storage.originals import OriginalStore

__all__ = [
    "agent_limits",
    "extraction_limits",
    "fusion",
    "ingest_context",
    "lookup_limits",
    "open_fetcher",
]


def fusion(settings: Settings) -> Fusion:
    """Hybrid ranking with the embedding model's own dense weight and cosine floor."""
    choice = model_choice(settings.embedding_model)
    return Fusion(dense_weight=choice.dense_weight, dense_floor=choice.cosine_floor)


def agent_limits(settings: Settings) -> AgentLimits:
    return AgentLimits(
        rate_limit_turns=settings.rate_limit_turns,
        rate_limit_window=timedelta(minutes=settings.rate_limit_minutes),
        max_message_chars=settings.max_message_chars,
        max_answer_tokens=settings.max_answer_tokens,
        tool_timeout_seconds=settings.tool_timeout_seconds,
        approval_ttl=timedelta(hours=settings.approval_ttl_hours),
    )


def lookup_limits(settings: Settings) -> LookupLimits:
    return LookupLimits(
        rate_limit_turns=settings.rate_limit_turns,
        rate_limit_window=timedelta(minutes=settings.rate_limit_minutes),
        max_query_chars=settings.max_message_chars,
    )


async def open_fetcher(
    settings: Settings, stack: AsyncExitStack, allowed: frozenset[Address]
) -> SafeFetcher:
    limits = FetchLimits(
        max_bytes=settings.fetch_max_bytes,
        max_redirects=settings.fetch_max_redirects,
        timeout_seconds=settings.fetch_timeout_seconds,
    )
    return await stack.enter_async_context(SafeFetcher(limits, allowed_addresses=allowed))


def extraction_limits(settings: Settings) -> ExtractionLimits:
    return ExtractionLimits(
        cpu_seconds=settings.extract_cpu_seconds,
        memory_mb=settings.extract_memory_mb,
        workers=settings.extract_workers,
        media=MediaLimits(
            max_image_pixels=settings.max_image_pixels,
            max_ocr_pages=settings.max_ocr_pages,
            ocr_cpu_seconds_per_page=settings.ocr_cpu_seconds_per_page,
            max_audio_seconds=settings.max_audio_seconds,
            speech_cpu_seconds_per_minute=settings.speech_cpu_seconds_per_minute,
            speech_beam_size=settings.speech_beam_size,
            threads=settings.media_threads,
        ),
    )


def ingest_context(
    settings: Settings,
    stores: Stores,
    *,
    fetcher: SafeFetcher,
    lexical: LexicalEncoder,
    extractor: ExtractionPool,
    embedding: FairEmbedder,
) -> IngestContext:
    return IngestContext(
        documents=DocumentRepository(stores.database),
        originals=OriginalStore(settings.uploads_dir),
        index=stores.index,
        embedder=embedding,
        lexical=lexical,
        fetcher=fetcher,
        extractor=extractor,
        limits=IngestLimits(
            max_file_bytes=settings.max_file_bytes,
            max_decompressed_bytes=settings.max_decompressed_bytes,
            chunk_tokens=settings.chunk_tokens,
            overlap_tokens=settings.chunk_overlap_tokens,
            max_chunks=settings.max_chunks_per_document,
            max_audio_seconds=settings.max_audio_seconds,
        ),
    )
