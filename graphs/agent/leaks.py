"""Spot answers that leak the system prompt or the tool definitions.

`leak_reason` says why an answer must not be shown: it contains the canary (a random
marker in the system prompt, see `AgentContext.canary`: the model copied its prompt), a
line of the instructions, or the tool definitions (three tool names, or one with JSON
schema words). Verify turns such an answer into a refusal and records an incident.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from graphs.agent.prompts import HARDENED, INSTRUCTIONS

__all__ = ["leak_reason"]

_MIN_LEAKED_LINE: Final = 40
_TOOL_SCHEMA_WORDS: Final = re.compile(
    r"additionalProperties|\"parameters\"\s*:|\"required\"\s*:\s*\[|\"type\"\s*:\s*\"object\""
)
_SPACE: Final = re.compile(r"\s+")


def _flat(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


_INSTRUCTION_LINES: Final = tuple(
    line
    for line in (_flat(raw.lstrip("- ")) for raw in (INSTRUCTIONS + HARDENED).splitlines())
    if len(line) >= _MIN_LEAKED_LINE
)


def leak_reason(answer: str, canary: str, tool_names: Iterable[str]) -> str | None:
    """Why `answer` leaks the system prompt or the tool definitions, or None."""
    if canary and canary in answer:
        return "answer contains the prompt canary"
    flat = _flat(answer)
    if any(line in flat for line in _INSTRUCTION_LINES):
        return "answer repeats the system instructions"
    named = {name for name in tool_names if name in answer}
    if len(named) >= 3 or (named and _TOOL_SCHEMA_WORDS.search(answer)):
        return f"answer describes the tool definitions ({len(named)} tool names)"
    return None
