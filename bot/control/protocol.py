"""The control socket's wire format: one JSON object per line, each at most `MAX_FRAME_BYTES`.

The CLI sends one request, `{"op": NAME, "args": {...}}`; the bot answers with a stream of
frames, each `{"kind": ...}`: `out` and `err` (a line for stdout or stderr), `progress`,
`advance` and `progress_end` (a folder ingest's bar), `confirm` (a yes/no question for the
person at the CLI's terminal, who answers with one line `{"answer": true|false|null}`, null
when there is no terminal to ask at), and last `exit` with the exit code. A request that
cannot be read gets an `err` frame and `exit` 2. Exit code `ELSEWHERE_EXIT` never reaches
the person: the bot does not see the folder the CLI named (it runs in another container),
and the CLI does the work beside it instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ELSEWHERE_EXIT",
    "MAX_FRAME_BYTES",
    "SOCKET_NAME",
    "ProtocolError",
    "Request",
    "decode",
    "encode",
    "parse_request",
    "socket_path",
]

MAX_FRAME_BYTES = 64 * 1024
ELSEWHERE_EXIT = 3
SOCKET_NAME = "control.sock"


class ProtocolError(Exception):
    """A frame that is not one JSON object within the size limit, or not a request."""


@dataclass(frozen=True, slots=True)
class Request:
    """One command for the bot: its name and its JSON arguments."""

    op: str
    args: dict[str, Any]


def socket_path(data_dir: Path) -> Path:
    """Where the bot holding `data_dir` listens."""
    return data_dir / SOCKET_NAME


def encode(frame: dict[str, Any]) -> bytes:
    """One frame as a line; a text too long for a frame is cut to fit."""
    line = json.dumps(frame, ensure_ascii=False).encode() + b"\n"
    if len(line) <= MAX_FRAME_BYTES:
        return line
    text = frame.get("text")
    if not isinstance(text, str) or not text:
        raise ProtocolError(f"A control frame is longer than {MAX_FRAME_BYTES} bytes.")
    return encode({**frame, "text": text[: len(text) // 2] + "..."})


def decode(line: bytes) -> dict[str, Any]:
    """A frame from its line; `ProtocolError` when it is not one JSON object."""
    if len(line) > MAX_FRAME_BYTES:
        raise ProtocolError(f"A control frame is longer than {MAX_FRAME_BYTES} bytes.")
    try:
        frame = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ProtocolError("A control frame is not JSON.") from None
    if not isinstance(frame, dict):
        raise ProtocolError("A control frame is not a JSON object.")
    return frame


def parse_request(line: bytes) -> Request:
    """The request in a client's first line."""
    frame = decode(line)
    op, args = frame.get("op"), frame.get("args", {})
    if not isinstance(op, str) or not isinstance(args, dict):
        raise ProtocolError('A control request needs "op" (a name) and "args" (an object).')
    return Request(op, args)
