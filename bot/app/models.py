"""The composition root's choices of engine: the vector store (embedded or a server), the
chat model (offline or an OpenAI-compatible endpoint) with its price, the budget meter, and
the operator's reranker.

A model's price comes from LLM_PRICES (or the built-in list prices). A model with no price
that is served from a loopback or private address (llama.cpp, Ollama, vLLM on the same
machine or network) is free; any other unpriced model is charged a high assumed rate, so
the daily cap still holds. Both are said once at start, and `/budget` repeats it.
"""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.errors import StartupError
from bot.reports import ModelPricing
from bot.settings import Settings
from graphs.ingest.errors import IngestError
from graphs.ingest.url_safety import is_refused_address, parse_url, system_resolver
from graphs.llm.metered import Meter
from graphs.llm.offline import MODEL_NAME, OfflineModel
from graphs.llm.openai_compat import OpenAICompatibleModel
from graphs.llm.pricing import DEFAULT_PRICES, ModelPrice, parse_price_table
from graphs.llm.types import ChatModel
from storage.budget import BudgetLedger
from storage.budget import budget_day as ledger_day
from storage.edge_store import EdgeVectorStore
from storage.model_files import model_choice
from storage.money import Money
from storage.vectors import VectorStore

if TYPE_CHECKING:
    from storage.reranker import CrossEncoder

__all__ = [
    "ChatModelChoice",
    "chat_model",
    "extractive_model",
    "meter",
    "reranker",
    "utc_now",
    "vector_store",
]

logger = logging.getLogger(__name__)

# Charged for a model missing from the price table: high on purpose, so the cap still holds.
UNKNOWN_MODEL_PRICE = ModelPrice(10.0, 10.0, 30.0)
FREE = ModelPrice(0.0, 0.0, 0.0)


def utc_now() -> datetime:
    """The production clock."""
    return datetime.now(UTC)


ChatModelChoice = tuple[ChatModel, ModelPricing]


def extractive_model(settings: Settings) -> OfflineModel:
    """The offline extractive answerer: the model without LLM_BASE_URL, the fallback with it.
    Each embedding model spreads its cosines differently: its own calibrated gates."""
    choice = model_choice(settings.embedding_model)
    return OfflineModel(
        threshold=choice.answer_threshold,
        min_coverage=choice.answer_min_coverage,
        language=settings.language,
    )


async def _served_locally(base_url: str) -> bool:
    """Whether every address of the endpoint's host is loopback or private."""
    try:
        parsed = parse_url(base_url)
        addresses = (
            [parsed.literal]
            if parsed.literal is not None
            else await system_resolver(parsed.host, parsed.port)
        )
    except (IngestError, OSError, UnicodeError, ValueError):
        return False
    return bool(addresses) and all(is_refused_address(address) for address in addresses)


async def _pricing(settings: Settings, table: dict[str, ModelPrice]) -> ModelPricing:
    name = settings.llm_model
    if name in table:
        return ModelPricing(name, table[name], "table")
    if settings.llm_base_url and await _served_locally(settings.llm_base_url):
        logger.info(
            "LLM_MODEL %r has no price and is served from a local address: counted as free "
            "(set LLM_PRICES to charge it)",
            name,
        )
        return ModelPricing(name, FREE, "local")
    pricing = ModelPricing(name, UNKNOWN_MODEL_PRICE, "assumed")
    logger.warning("%s", pricing.note())
    return pricing


async def chat_model(settings: Settings, stack: AsyncExitStack) -> ChatModelChoice:
    """The configured OpenAI-compatible model and its pricing, or the offline answerer."""
    if not settings.llm_base_url:
        return extractive_model(settings), ModelPricing(MODEL_NAME, FREE, "offline")
    try:
        table = {**DEFAULT_PRICES, **parse_price_table(settings.llm_prices)}
    except ValueError as exc:
        raise StartupError(f"LLM_PRICES: {exc}") from exc
    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    model = await stack.enter_async_context(
        OpenAICompatibleModel(
            base_url=settings.llm_base_url,
            api_key=api_key,
            model=settings.llm_model,
            read_timeout=settings.llm_timeout_seconds,
        )
    )
    return model, await _pricing(settings, table)


def meter(settings: Settings, budget: BudgetLedger, price: ModelPrice) -> Meter:
    """Model calls booked against DAILY_BUDGET_USD, days rolling over in BUDGET_TIMEZONE."""
    zone = settings.budget_timezone

    def day() -> str:
        return ledger_day(utc_now(), zone)

    return Meter(budget, price, Money.usd(settings.daily_budget_usd), day)


def vector_store(settings: Settings) -> VectorStore:
    """A Qdrant server at QDRANT_URL, else Qdrant's engine in-process under DATA_DIR."""
    if settings.qdrant_url:
        # qdrant-client (with grpc, and fastembed when installed) costs ~100 MB of RSS:
        # imported only by deployments that use a server.
        from storage.server_store import ServerVectorStore  # noqa: PLC0415

        api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return ServerVectorStore.connect(
            settings.qdrant_url, api_key, settings.qdrant_timeout_seconds
        )
    return EdgeVectorStore(settings.qdrant_dir)


async def reranker(settings: Settings) -> CrossEncoder | None:
    """The operator's cross-encoder, if RERANKER_MODEL_DIR names one."""
    if settings.reranker_model_dir is None:
        return None
    from storage.reranker import CrossEncoder, RerankerError  # noqa: PLC0415 - only when set

    try:
        return await CrossEncoder.load(
            settings.reranker_model_dir, threads=settings.embedding_threads
        )
    except RerankerError as exc:
        raise StartupError(f"Lore cannot start: RERANKER_MODEL_DIR: {exc}") from exc
