"""The CLI's side of the control socket: reach the bot holding a data directory, send it one
command, and play the frames it streams back into an `Output`; a question the command asks
(`lore delete`'s y/N) is asked here, at the CLI's terminal, and answered back."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from bot.control.output import Output
from bot.control.protocol import MAX_FRAME_BYTES, ProtocolError, decode, encode, socket_path
from bot.control.socket_paths import reachable

__all__ = ["CONNECT_SECONDS", "HEALTH_SECONDS", "Connection", "ask_health", "connect"]

CONNECT_SECONDS = 10.0
HEALTH_SECONDS = 10.0


class Connection:
    """One command's connection to the running bot (an async context manager)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()

    async def run(self, op: str, args: dict[str, Any], out: Output) -> int:
        """Send the command, play its output into `out`; its exit code."""
        self._writer.write(encode({"op": op, "args": args}))
        await self._writer.drain()
        try:
            return await self._play(out)
        finally:
            out.progress_end()

    async def _play(self, out: Output) -> int:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
                frame = decode(line)
            except asyncio.IncompleteReadError:
                out.echo("The bot stopped before the command finished.", err=True)
                return 1
            except (asyncio.LimitOverrunError, ValueError, ProtocolError):
                out.echo("The bot sent an answer this command cannot read.", err=True)
                return 1
            if frame.get("kind") == "confirm":
                await self._answer(out, str(frame.get("text", "")))
                continue
            code = _play_frame(frame, out)
            if code is not None:
                return code

    async def _answer(self, out: Output, question: str) -> None:
        """Ask the bot's question here, at this terminal, and send the answer back."""
        answer = await out.confirm(question)
        self._writer.write(encode({"answer": answer}))
        await self._writer.drain()


def _play_frame(frame: dict[str, Any], out: Output) -> int | None:
    """Show one frame; the exit code when it is the last."""
    kind, text = frame.get("kind"), str(frame.get("text", ""))
    if kind in {"out", "err"}:
        out.echo(text, err=kind == "err")
    elif kind == "progress":
        total = frame.get("total")
        out.progress(total if isinstance(total, int) else 0, text)
    elif kind == "advance":
        out.advance()
    elif kind == "progress_end":
        out.progress_end()
    elif kind == "exit":
        code = frame.get("code")
        return code if isinstance(code, int) else 1
    return None


async def connect(data_dir: Path) -> Connection | None:
    """A connection to the bot holding `data_dir`, or None when no bot listens there (no
    socket, or one a stopped bot left behind)."""
    try:
        with reachable(socket_path(data_dir)) as address:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(address, limit=MAX_FRAME_BYTES), CONNECT_SECONDS
            )
    except (OSError, TimeoutError):
        return None
    return Connection(reader, writer)


async def ask_health(data_dir: Path, out: Output, *, seconds: float = HEALTH_SECONDS) -> int:
    """0 when the bot holding `data_dir` answers within `seconds` (its line shown); else 1,
    with one line saying why."""
    path = socket_path(data_dir)
    connection = await connect(data_dir)
    if connection is None:
        out.echo(f"Lore is not running: no bot answers at {path}.", err=True)
        return 1
    async with connection:
        try:
            return await asyncio.wait_for(connection.run("health", {}, out), seconds)
        except (TimeoutError, ConnectionError):
            out.echo(
                f"Lore is not answering: nothing came back from {path} in {seconds:g} s.", err=True
            )
            return 1
