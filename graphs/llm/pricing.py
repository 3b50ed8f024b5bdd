"""What a model call costs: per-model prices, the cost of a finished call, and a worst case.

Prices are USD per million tokens, split into uncached input, cached input and output, the
way OpenAI, DeepSeek and Gemini bill. The budget reserves `worst_case_cost` before a call
(every prompt token uncached, the full `max_tokens` of output) and settles `call_cost` after
it, from the usage the provider reported.

A reservation is only a cap if its prompt estimate is an upper bound: `estimate_tokens`
counts UTF-8 bytes, because a byte-level BPE (GPT, DeepSeek, Llama 3, Qwen) never makes
more tokens than bytes, and SentencePiece models with byte fallback make at most one per
byte too; `estimate_prompt_tokens` adds a generous overhead per message, tool call and
tool definition for the chat template's own tokens. Characters / 4 undercounts CJK text
by 2x and more, so it is kept only as `rough_tokens`, for sizing prompt sections.

`DEFAULT_PRICES` holds list prices of a few well-known models as published by their providers
in mid-2025. Prices change and discounts vary: operators should set their own table (a
setting parsed by `parse_price_table`). A model missing from the table is never guessed at:
`price_for` returns the conservative fallback the caller passes and logs a warning once.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from graphs.llm.types import ChatMessage, ToolSpec, Usage
from storage.money import Money

__all__ = [
    "DEFAULT_PRICES",
    "ModelPrice",
    "call_cost",
    "estimate_prompt_tokens",
    "estimate_tokens",
    "parse_price_table",
    "price_for",
    "rough_tokens",
    "worst_case_cost",
]

logger = logging.getLogger(__name__)

_PER_MILLION = 1_000_000  # prices are quoted per million tokens
_CHARS_PER_TOKEN = 4
# Tokens a chat template adds around content (OpenAI's is 3-4 per message; others differ).
_MESSAGE_OVERHEAD = 8  # role, separators and special tokens of one message
_TOOL_CALL_OVERHEAD = 8  # framing of one tool call in an assistant message
_TOOL_OVERHEAD = 16  # framing of one tool definition around its name, description and schema
_REPLY_OVERHEAD = 8  # the assistant header the reply is primed with


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per million tokens: uncached input, cached input, output."""

    input_per_million: float
    cached_input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        for value in (
            self.input_per_million,
            self.cached_input_per_million,
            self.output_per_million,
        ):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"a price must be a finite number >= 0, got {value!r}")


DEFAULT_PRICES: Mapping[str, ModelPrice] = MappingProxyType(
    {
        # OpenAI list prices, mid-2025.
        "gpt-4o-mini": ModelPrice(0.15, 0.075, 0.60),
        "gpt-4o": ModelPrice(2.50, 1.25, 10.00),
        "gpt-4.1": ModelPrice(2.00, 0.50, 8.00),
        "gpt-4.1-mini": ModelPrice(0.40, 0.10, 1.60),
        "gpt-4.1-nano": ModelPrice(0.10, 0.025, 0.40),
        # DeepSeek standard-hours prices, mid-2025 (cache hit = cached input).
        "deepseek-chat": ModelPrice(0.27, 0.07, 1.10),
        # Gemini through its OpenAI-compatible endpoint, paid tier, mid-2025.
        "gemini-2.0-flash": ModelPrice(0.10, 0.025, 0.40),
    }
)


def call_cost(price: ModelPrice, usage: Usage) -> Money:
    """One finished call's cost (rounded up to a micro-dollar): cached prompt tokens at the
    cached rate, the rest at input.

    Cached tokens are part of `prompt_tokens` (OpenAI and DeepSeek both count them there);
    a report claiming more cached than prompt tokens is clamped to the prompt.
    """
    prompt = max(usage.prompt_tokens, 0)
    cached = min(max(usage.cached_tokens, 0), prompt)
    completion = max(usage.completion_tokens, 0)
    return Money.cost(
        (
            (prompt - cached) * price.input_per_million
            + cached * price.cached_input_per_million
            + completion * price.output_per_million
        )
        / _PER_MILLION
    )


def worst_case_cost(price: ModelPrice, prompt_tokens_estimate: int, max_tokens: int) -> Money:
    """What to reserve before a call (rounded up): every prompt token uncached, `max_tokens`
    of output."""
    prompt = max(prompt_tokens_estimate, 0)
    output = max(max_tokens, 0)
    return Money.cost(
        (prompt * price.input_per_million + output * price.output_per_million) / _PER_MILLION
    )


def estimate_tokens(text: str) -> int:
    """An upper bound on the tokens of `text`: its UTF-8 bytes (see the module docstring).

    Used for reservations and when a provider reports no usage; the provider's reported
    usage is what gets billed when there is one.
    """
    return len(text.encode("utf-8", "surrogatepass"))


def estimate_prompt_tokens(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] = ()) -> int:
    """An upper bound on the prompt tokens of a chat call: every message with its tool calls,
    every tool definition, each with its template overhead, and the reply's header."""
    total = _REPLY_OVERHEAD
    for message in messages:
        total += _MESSAGE_OVERHEAD + estimate_tokens(message.content)
        total += estimate_tokens(message.name or "") + estimate_tokens(message.tool_call_id or "")
        for call in message.tool_calls:
            total += _TOOL_CALL_OVERHEAD + estimate_tokens(call.id + call.name + call.arguments)
    for tool in tools:
        definition = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        }
        total += _TOOL_OVERHEAD + estimate_tokens(json.dumps(definition, ensure_ascii=False))
    return total


def rough_tokens(text: str) -> int:
    """A typical token count (characters / 4, rounded up) for sizing prompt sections.

    Never for money: it undercounts CJK and other non-Latin text by 2x and more.
    """
    return -(-len(text) // _CHARS_PER_TOKEN)


def price_for(model: str, prices: Mapping[str, ModelPrice], fallback: ModelPrice) -> ModelPrice:
    """The price of `model` from `prices`, else the caller's fallback (logged once per model)."""
    price = prices.get(model)
    if price is not None:
        return price
    if model not in _warned_unknown:
        _warned_unknown.add(model)
        logger.warning("no price configured for model %r; using the fallback price", model)
    return fallback


_warned_unknown: set[str] = set()


def parse_price_table(text: str) -> dict[str, ModelPrice]:
    """Parse `"gpt-4o-mini=0.15/0.075/0.60,deepseek-chat=0.27/0.07/1.10"`.

    Each entry is `MODEL=INPUT/CACHED_INPUT/OUTPUT` in USD per million tokens, entries are
    separated by commas, blanks around them are ignored, and an empty text is an empty table.
    Raises `ValueError` naming the offending entry.
    """
    table: dict[str, ModelPrice] = {}
    for position, raw in enumerate(text.split(","), start=1):
        entry = raw.strip()
        if not entry:
            continue
        name, price = _parse_entry(position, entry)
        if name in table:
            raise ValueError(f"price entry {position} ({entry!r}): model {name!r} is listed twice")
        table[name] = price
    return table


def _parse_entry(position: int, entry: str) -> tuple[str, ModelPrice]:
    where = f"price entry {position} ({entry!r})"
    name, equals, rates = entry.partition("=")
    name = name.strip()
    if not equals or not name:
        raise ValueError(f"{where}: expected MODEL=INPUT/CACHED_INPUT/OUTPUT (USD per 1M tokens)")
    parts = [part.strip() for part in rates.split("/")]
    if len(parts) != 3:
        raise ValueError(f"{where}: expected three prices INPUT/CACHED_INPUT/OUTPUT")
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise ValueError(f"{where}: prices must be numbers") from None
    try:
        return name, ModelPrice(values[0], values[1], values[2])
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
