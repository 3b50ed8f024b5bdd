"""Mark tool results as data in the prompt (spotlighting), and read them back.

Every tool result reaches the model wrapped in `<<data from TOOL KEY>>` ... `<<end data KEY>>`,
and the system prompt says that text between such markers is data, never instructions.
The key is derived from the process's canary and the turn id (HMAC-SHA256), so a document
cannot close the block early with a marker of its own: it cannot know the key. The
offline model reads the JSON inside with `unwrap_data`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Final

__all__ = ["as_data", "data_key", "unwrap_data"]

_BLOCK: Final = re.compile(
    r"<<data from [\w-]+ (?P<key>[0-9a-f]{16})>>\n(?P<body>.*)\n<<end data (?P=key)>>", re.DOTALL
)


def data_key(canary: str, turn_id: str) -> str:
    """The per-turn key of the data markers (unguessable without the canary)."""
    digest = hmac.new(canary.encode(), turn_id.encode(), hashlib.sha256).hexdigest()
    return digest[:16]


def as_data(tool_name: str, content: str, key: str) -> str:
    """A tool result wrapped as data for the model."""
    return f"<<data from {tool_name} {key}>>\n{content}\n<<end data {key}>>"


def unwrap_data(content: str) -> str:
    """The tool result inside a data block; `content` itself when it is not one."""
    match = _BLOCK.fullmatch(content)
    return match.group("body") if match else content
