"""A scripted HTTP/1.1 server on 127.0.0.1:0 for tests: fixed routes, every request recorded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

Writer = asyncio.StreamWriter

__all__ = ["Route", "ScriptedServer", "SeenRequest", "Writer", "answer", "head", "static"]


@dataclass
class SeenRequest:
    path: str
    headers: dict[str, str]


Route = Callable[[SeenRequest, asyncio.StreamReader, Writer], Awaitable[None]]


def head(status: str, headers: Mapping[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode()


async def answer(writer: Writer, status: str, body: bytes = b"", **headers: str) -> None:
    fields = {"Connection": "close", "Content-Length": str(len(body)), **headers}
    writer.write(head(status, {k.replace("_", "-"): v for k, v in fields.items()}) + body)
    await writer.drain()


@dataclass
class ScriptedServer:
    """A real HTTP/1.1 server on 127.0.0.1:0 with fixed routes; records every request."""

    routes: Mapping[str, Route] = field(default_factory=dict)
    prefixes: Mapping[str, Route] = field(default_factory=dict)
    fallback: Route | None = None
    requests: list[SeenRequest] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _writers: set[Writer] = field(default_factory=set)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        # Hang up on every open connection (never cancel a handler: asyncio logs that
        # as an unhandled error); each handler then ends on its own.
        for writer in list(self._writers):
            writer.close()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
            request_line, *lines = raw.decode("latin-1").split("\r\n")
            headers = {}
            for line in filter(None, lines):
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            seen = SeenRequest(path=request_line.split(" ")[1], headers=headers)
            self.requests.append(seen)
            route = self._route(seen.path) or _not_found
            await route(seen, reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _route(self, path: str) -> Route | None:
        for prefix, route in self.prefixes.items():
            if path.startswith(prefix):
                return route
        return self.routes.get(path, self.fallback)


async def _not_found(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
    await answer(writer, "404 Not Found", b"not found", Content_Type="text/plain")


def static(body: bytes, content_type: str, status: str = "200 OK") -> Route:
    """A route that always answers with this body."""

    async def route(seen: SeenRequest, reader: asyncio.StreamReader, writer: Writer) -> None:
        await answer(writer, status, body, Content_Type=content_type)

    return route
