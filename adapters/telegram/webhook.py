"""The webhook endpoint: a small HTTP/1.1 server that takes Telegram's POSTs, checks the secret
header in constant time (403 otherwise) and queues each update for the Application.

Telegram signs nothing else and retries deliveries, so the update processor de-duplicates
on `update_id`. Bodies are capped (413); a body that is not a JSON object is a 400; a head
over the stream limit (64 KiB) is a 431; anything but `POST <path>` is a 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from http import HTTPStatus
from typing import Any

from telegram import Update
from telegram.ext import Application

__all__ = ["SECRET_HEADER", "WebhookServer"]

logger = logging.getLogger(__name__)

SECRET_HEADER = "x-telegram-bot-api-secret-token"  # noqa: S105 - a header name
MAX_BODY = 1024 * 1024
HEADER_TIMEOUT = 10.0


class WebhookServer:
    """Receives updates on `listen:port` at `path` for one Application."""

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        *,
        secret: str,
        path: str,
        listen: str,
        port: int,
    ) -> None:
        if not secret:
            raise ValueError("A webhook needs a secret token")
        self._application = application
        self._secret = secret.encode()
        self._path = path or "/"
        self._listen = listen
        self._port = port
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        if self._server is None:
            raise RuntimeError("The webhook server is not running")
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Listen."""
        self._server = await asyncio.start_server(self._serve, self._listen, self._port)
        logger.info("Telegram webhook listening on %s:%d", self._listen, self.port)

    async def stop(self) -> None:
        """Stop listening and wait for open requests."""
        if self._server is None:
            return
        self._server.close()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            async with asyncio.timeout(HEADER_TIMEOUT):
                status = await self._handle(reader)
            await _respond(writer, status)
        except asyncio.LimitOverrunError:
            with contextlib.suppress(ConnectionError):
                await _respond(writer, HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError, ValueError):
            with contextlib.suppress(ConnectionError):
                await _respond(writer, HTTPStatus.BAD_REQUEST)
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader) -> HTTPStatus:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        method, path, _ = head[0].split(" ", 2)
        headers = {}
        for line in filter(None, head[1:]):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if method != "POST" or path.split("?", 1)[0] != self._path:
            return HTTPStatus.NOT_FOUND
        given = headers.get(SECRET_HEADER, "").encode("latin-1")
        if not hmac.compare_digest(given, self._secret):
            logger.warning("Webhook request with a wrong secret token refused")
            return HTTPStatus.FORBIDDEN
        length = int(headers.get("content-length", "0"))
        if length > MAX_BODY:
            return HTTPStatus.REQUEST_ENTITY_TOO_LARGE
        data = json.loads(await reader.readexactly(length))
        if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
            return HTTPStatus.BAD_REQUEST
        update = Update.de_json(data, self._application.bot)
        await self._application.update_queue.put(update)
        return HTTPStatus.OK


async def _respond(writer: asyncio.StreamWriter, status: HTTPStatus) -> None:
    body = status.phrase.encode()
    writer.write(
        f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    await writer.drain()
