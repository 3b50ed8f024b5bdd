"""Tool calls a model wrote as text, and the markup no person should see in an answer.

Small and local models often write a tool call into their text instead of the API's
`tool_calls` field, and a server that does not parse their format passes it on as text.
`read_text_calls` finds the common forms and turns those naming a known tool into
`ToolCall`s, so they run like any other call:

- Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (the closing
  tag may be missing);
- Llama 3.x: `<|python_tag|>{"name": ..., "parameters": {...}}` and
  `<function=NAME>{...}</function>`;
- Mistral: `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`;
- a bare JSON object (also in a code fence) that names a tool: `{"name": ...}`,
  `{"function": ...}`, `{"tool": ...}`, `{"function": {"name": ..., "arguments": ...}}`.

`strip_markup` removes every such call (known tool or not), imitated tool responses
(`<tool_response>...</tool_response>`), chat-template tokens (`<|im_end|>`) and the
data markers of tool results (`<<data ...>>`) from a text. What is left is the text a
person may read, once it has been checked (`graphs.agent.grounding`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Final

from graphs.llm.types import ToolCall

__all__ = ["TextCalls", "looks_like_markup", "read_text_calls", "strip_markup"]

_DECODER: Final = json.JSONDecoder()
#: Where a written tool call (or its JSON) may start.
_OPENER: Final = re.compile(
    r"<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|<function=(?P<function>[\w.-]+)>|[{\[]"
)
_WRAPPERS: Final = re.compile(
    r"</?tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|<function=[\w.-]+>|</function>"
    r"|<\|[a-z_]+\|>|<\|?(?:im_start|im_end|eot_id|end_of_turn)\|?>"
    r"|```(?:json|tool_code|python)?[ \t]*\n?(?=\s*[{\[])|(?<=[}\]])\s*```",
    re.IGNORECASE,
)
_RESPONSE: Final = re.compile(
    r"<tool_response>.*?(?:</tool_response>|\Z)|<<data from [^>]*>>.*?(?:<<end data [^>]*>>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
#: A text that reads like markup, not prose: template tags, JSON keys, a lone brace.
_MARKUP: Final = re.compile(
    r"</?tool_(?:call|response)>|<\|[\w]+\|>|\[TOOL_CALLS\]|<function=|<<(?:end )?data\b"
    r"|\"[\w-]+\"\s*:|^\s*[{}\[\]]+[,;]?\s*$|^\s*[{\[]\s*\"",
    re.IGNORECASE | re.MULTILINE,
)
#: A written call that is still open: its opening tag and the start of its JSON.
_UNFINISHED: Final = re.compile(
    r"(?:<tool_call>|<\|python_tag\|>|\[TOOL_CALLS\]|<function=[\w.-]+>)\s*(?:[{\[]|$)"
)
_EMPTY_FENCE: Final = re.compile(r"```[\w-]*\s*```")
_NAME_KEYS: Final = ("name", "function", "tool", "tool_name")
_ARGUMENT_KEYS: Final = ("arguments", "parameters", "args", "tool_input", "input")


@dataclass(frozen=True, slots=True)
class TextCalls:
    """The tool calls found in a model's text, and the text without any of its markup."""

    calls: tuple[ToolCall, ...]
    text: str


def looks_like_markup(text: str) -> bool:
    """Whether `text` holds tool-call or template markup, or reads like JSON."""
    return _MARKUP.search(text) is not None


def _objects(text: str) -> Iterator[tuple[int, int, Any]]:
    """Every JSON object or array in `text` that parses whole: start, end and value."""
    position = 0
    while (match := _OPENER.search(text, position)) is not None:
        start = match.start()
        brace = start if match.group(0) in "{[" else text.find("{", match.end())
        bracket = text.find("[", match.end()) if match.group(0) == "[TOOL_CALLS]" else -1
        begin = bracket if 0 <= bracket < brace or brace < 0 else brace
        if begin < 0:
            position = match.end()
            continue
        try:
            value, end = _DECODER.raw_decode(text, begin)
        except ValueError:
            position = match.end()
            continue
        if match.group("function") and isinstance(value, dict):
            value = {"name": match.group("function"), "arguments": value}
        yield start, end, value
        position = end


def _call_parts(value: Any) -> tuple[str, Any] | None:
    """The tool name and arguments an object names, if it names one."""
    if not isinstance(value, dict):
        return None
    inner = value.get("function")
    if isinstance(inner, dict) and isinstance(inner.get("name"), str):
        return inner["name"], inner.get("arguments", inner.get("parameters", {}))
    for key in _NAME_KEYS:
        if isinstance(value.get(key), str):
            arguments: Any = next((value[k] for k in _ARGUMENT_KEYS if k in value), {})
            return value[key], arguments
    return None


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def read_text_calls(text: str, known: Collection[str]) -> TextCalls:
    """The calls of `known` tools written in `text`, and `text` without its markup."""
    calls: list[ToolCall] = []
    for _start, _end, value in _objects(text):
        if not _is_call(value):
            continue
        for item in value if isinstance(value, list) else [value]:
            parts = _call_parts(item)
            if parts is not None and parts[0] in known:
                name, arguments = parts
                calls.append(ToolCall(f"text-call-{len(calls)}", name, _arguments_text(arguments)))
    return TextCalls(tuple(calls), strip_markup(text, known))


def _is_call(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(_call_parts(item) is not None for item in items)


def _cut_unfinished(text: str, known: Collection[str]) -> str:
    """`text` up to a written tool call that never finished (cut off by the token limit)."""
    cut = _UNFINISHED.search(text)
    if known:
        names = "|".join(map(re.escape, known))
        bare = re.search(rf'\{{\s*"(?:name|function|tool)"\s*:\s*"(?:{names})\b', text)
        if bare is not None and (cut is None or bare.start() < cut.start()):
            cut = bare
    return text if cut is None else text[: cut.start()]


def strip_markup(text: str, known: Collection[str] = ()) -> str:
    """`text` without written tool calls, imitated tool responses, template tokens and data
    markers; JSON that names no tool stays (an answer may show a configuration snippet)."""
    text = _RESPONSE.sub("", text)
    pieces: list[str] = []
    position = 0
    for start, end, value in _objects(text):
        if _is_call(value):
            pieces.append(text[position:start])
            position = end
    pieces.append(text[position:])
    kept = _WRAPPERS.sub("", _cut_unfinished("".join(pieces), known))
    kept = _EMPTY_FENCE.sub("", kept)
    return re.sub(r"\n{3,}", "\n\n", kept).strip()
