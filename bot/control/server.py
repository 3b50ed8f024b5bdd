"""The bot's side of the control socket: `ControlServer` listens on `DATA_DIR/control.sock`
while a bot holds the data directory, and runs each CLI command it receives.

Requests are trusted because only the bot's own user can reach them: the socket file is
created owner-only (0600, bound inside a fresh 0700 directory, then renamed into place) and
each connection's peer uid (SO_PEERCRED) must equal the bot's. The command runs as the local
owner (`terminal_operator`), like the CLI's own; commands run one at a time (`health` and
`backup`, which waits for no ingest to be half-way by itself, never wait). A question for
the person (`confirm`) goes to the CLI, whose answer comes back on the same connection. A
socket file left by a crashed bot is replaced: whoever holds the data directory lock is the
only one who may serve it. Where no socket can be made, the bot runs without.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import struct
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from bot.control.operations import Args, Call, perform
from bot.control.protocol import MAX_FRAME_BYTES, ProtocolError, decode, encode, parse_request
from bot.control.protocol import socket_path as control_socket_path
from bot.control.socket_paths import reachable
from bot.people import terminal_operator
from bot.service import Bot

__all__ = ["HEALTH", "UNQUEUED", "ControlServer", "StreamOutput"]

logger = logging.getLogger(__name__)

HEALTH = "health"
_PEERCRED = struct.Struct("3i")  # pid, uid, gid


#: Commands that run at once, beside another one (never "Waiting for the bot...").
UNQUEUED = frozenset({"backup"})


class StreamOutput:
    """An `Output` that sends each call as a frame to the CLI (dropped once it has gone);
    `replies` holds the lines the CLI sends back (answers to `confirm`)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def send(self, frame: dict[str, Any]) -> None:
        """Queue one frame."""
        if not self._writer.is_closing():
            self._writer.write(encode(frame))

    def echo(self, text: str, *, err: bool = False) -> None:
        """A line for the CLI's stdout or stderr."""
        self.send({"kind": "err" if err else "out", "text": text})

    def progress(self, total: int, description: str) -> None:
        """A bar begins."""
        self.send({"kind": "progress", "total": total, "text": description})

    def advance(self) -> None:
        """One step done."""
        self.send({"kind": "advance"})

    def progress_end(self) -> None:
        """The bar is done."""
        self.send({"kind": "progress_end"})

    async def confirm(self, question: str) -> bool | None:
        """Ask the person at the CLI's terminal; their answer (None: no terminal there)."""
        self.send({"kind": "confirm", "text": question})
        await self._writer.drain()
        answer = (await self.replies.get()).get("answer")
        return answer if isinstance(answer, bool) else None


async def _listen(reader: asyncio.StreamReader, replies: asyncio.Queue[dict[str, Any]]) -> None:
    """Pass the CLI's lines to `replies` until it goes away (end of input, or garbage)."""
    while True:
        try:
            line = await reader.readuntil(b"\n")
            replies.put_nowait(decode(line))
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ProtocolError):
            return


def _peer_uid(writer: asyncio.StreamWriter) -> int | None:
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    _pid, uid, _gid = _PEERCRED.unpack(
        sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    )
    return int(uid)


def _bind_owner_only(path: Path) -> socket.socket:
    """A listening socket at `path`, never reachable by others: bound in a new 0700
    directory, made 0600, then renamed over `path` (replacing a stale one)."""
    for left in path.parent.glob(".control-*"):  # a crash between bind and rename
        shutil.rmtree(left, ignore_errors=True)
    private = Path(tempfile.mkdtemp(prefix=".control-", dir=path.parent))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with reachable(private / "s") as address:
            sock.bind(address)
        (private / "s").chmod(0o600)
        sock.listen(8)
        (private / "s").replace(path)
    except BaseException:
        sock.close()
        raise
    finally:
        with contextlib.suppress(OSError):
            (private / "s").unlink()
        private.rmdir()
    return sock


class ControlServer:
    """Serves CLI commands for `bot` on `DATA_DIR/control.sock` while entered."""

    def __init__(self, bot: Bot, data_dir: Path) -> None:
        self._bot = bot
        self._data_dir = data_dir
        self._path = control_socket_path(data_dir)
        self._server: asyncio.Server | None = None
        self._inode = 0
        self._one_at_a_time = asyncio.Lock()
        self._handlers: set[asyncio.Task[None]] = set()
        self._started = time.monotonic()

    async def __aenter__(self) -> Self:
        stale = await asyncio.to_thread(self._path.is_socket)
        try:
            sock = await asyncio.to_thread(_bind_owner_only, self._path)
        except OSError as exc:
            # A file system without Unix sockets, or something else at the path: the bot
            # runs on; CLI commands find no bot and say the directory is busy.
            logger.warning(
                "CLI commands cannot reach this bot: no socket at %s (%s)", self._path, exc
            )
            return self
        self._inode = (await asyncio.to_thread(self._path.stat)).st_ino
        if stale:
            logger.info("Replaced the control socket a stopped bot left at %s", self._path)
        self._server = await asyncio.start_unix_server(
            self._serve, sock=sock, limit=MAX_FRAME_BYTES
        )
        self._started = time.monotonic()
        logger.info("CLI commands reach this bot at %s", self._path)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for handler in self._handlers:
            handler.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await asyncio.to_thread(self._remove_socket)

    def _remove_socket(self) -> None:
        if not self._inode:
            return
        with contextlib.suppress(FileNotFoundError):
            if self._path.stat().st_ino == self._inode:
                self._path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        out = StreamOutput(writer)
        handler = asyncio.current_task()
        if handler is not None:
            self._handlers.add(handler)
        try:
            if _peer_uid(writer) != os.getuid():
                logger.warning("Refused a control connection from another user")
                out.echo("Only the user running the bot may send it commands.", err=True)
                out.send({"kind": "exit", "code": 2})
                return
            code = await self._answer(reader, out)
            logger.info("A CLI command ended with exit status %d", code)
            out.send({"kind": "exit", "code": code})
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            # Its CLI went away (Ctrl-C), or the bot is stopping: this handler ends here.
            logger.info("A CLI command went away before its answer")
        except Exception:
            logger.exception("A control request failed")
            with contextlib.suppress(ConnectionError, RuntimeError):
                out.echo("The bot failed to run that command; its log says why.", err=True)
                out.send({"kind": "exit", "code": 1})
        finally:
            self._handlers.discard(handler)
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader, out: StreamOutput) -> int:
        try:
            line = await reader.readuntil(b"\n")
            request = parse_request(line)
        except (asyncio.LimitOverrunError, ValueError):
            out.echo(f"A control request must be one line under {MAX_FRAME_BYTES} bytes.", err=True)
            return 2
        except asyncio.IncompleteReadError:
            out.echo("A control request must end with a newline.", err=True)
            return 2
        except ProtocolError as exc:
            out.echo(str(exc), err=True)
            return 2
        if request.op == HEALTH:
            out.echo(self._health())
            return 0
        call = Call(bot=self._bot, out=out, args=Args(request.args), alone=False)
        if request.op in UNQUEUED:
            return await self._until_gone(reader, request.op, call, out)
        if self._one_at_a_time.locked():
            out.echo("Waiting for the bot to finish another command...", err=True)
        async with self._one_at_a_time:
            return await self._until_gone(reader, request.op, call, out)

    async def _until_gone(
        self, reader: asyncio.StreamReader, op: str, call: Call, out: StreamOutput
    ) -> int:
        """Run the command; cancel it if the CLI goes away (Ctrl-C) before it ends."""
        with terminal_operator():
            work = asyncio.create_task(perform(op, call))
        gone = asyncio.create_task(_listen(reader, out.replies))
        try:
            await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not work.done():
                logger.info("The CLI went away; stopping %s", op)
                work.cancel()
            # Stopped or not, the command is over before the bot may close its stores.
            await asyncio.gather(gone, work, return_exceptions=True)
        return await work

    def _health(self) -> str:
        seconds = int(time.monotonic() - self._started)
        hours, rest = divmod(seconds, 3600)
        return (
            f"Lore is running: process {os.getpid()}, up {hours}:{rest // 60:02d}:{rest % 60:02d},"
            f" data in {self._data_dir}."
        )
