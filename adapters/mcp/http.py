"""MCP over streamable HTTP as an edge of `lore run`: the SDK's Starlette app served by
uvicorn in Lore's event loop, every request checked for a bearer token the `Bot` accepts.

The socket is bound before the server starts (port 0 works: `port` says which one was
taken), and Lore's run loop, not uvicorn, owns SIGINT/SIGTERM.

The SDK's DNS-rebinding check (the Host and Origin headers) is always on: for a loopback
address it allows that address and the loopback names; any other host a client may use is
listed in MCP_ALLOWED_HOSTS (which the settings require off loopback), browser origins in
MCP_ALLOWED_ORIGINS. A request for another host gets 421, from another origin 403.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

from adapters.mcp.tools import build_server
from bot.edge import RunningEdge
from bot.errors import StartupError
from bot.events import Identity
from bot.mcp_tokens import MCP_PLATFORM
from bot.service import Bot
from bot.settings import is_loopback

__all__ = ["McpHttpConfig", "McpHttpEdge", "transport_security"]

logger = logging.getLogger(__name__)

# Open event streams end only when the server goes: don't wait for them for long.
SHUTDOWN_GRACE_SECONDS = 3
BACKLOG = 128


@dataclass(frozen=True, slots=True)
class McpHttpConfig:
    """Where the MCP endpoint listens: `http://listen:port/path`."""

    listen: str = "127.0.0.1"
    port: int = 0
    path: str = "/mcp"
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _with_ports(name: str) -> tuple[str, ...]:
    """Host header values for a name: as given when it has a port, else bare or any port."""
    has_port = ":" in name.rpartition("]")[2]
    return (name,) if has_port else (name, f"{name}:*")


def transport_security(config: McpHttpConfig) -> TransportSecuritySettings:
    """The Host and Origin headers the endpoint accepts (DNS-rebinding protection, on)."""
    listen = f"[{config.listen}]" if ":" in config.listen else config.listen
    names = [*LOOPBACK_NAMES, listen] if is_loopback(config.listen) else []
    names += config.allowed_hosts
    hosts = [host for name in dict.fromkeys(names) for host in _with_ports(name)]
    origins = [
        f"http://{name}:*" for name in (LOOPBACK_NAMES if is_loopback(config.listen) else ())
    ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[*origins, *config.allowed_origins],
    )


class BotTokenVerifier:
    """The SDK's token-verifier hook: a bearer token is good if the `Bot` says whose it is."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot

    async def verify_token(self, token: str) -> AccessToken | None:
        """The caller behind `token` (the token's public id), or None: 401."""
        identity = await self._bot.mcp_identity(token)
        if identity is None:
            logger.info("MCP request refused: unknown or revoked token")
            return None
        return AccessToken(
            token=identity.platform_user_id,  # the public id; the secret is kept nowhere
            client_id=identity.platform_user_id,
            subject=identity.platform_user_id,
            scopes=[],
            claims={"name": identity.display_name},
        )


def token_caller() -> Identity:
    """Who the current HTTP request is for, from the token the SDK's middleware verified."""
    access = get_access_token()
    if access is None:
        raise ToolError("Authentication required.")
    name = str((access.claims or {}).get("name", ""))
    return Identity(MCP_PLATFORM, access.client_id, name)


class _Server(uvicorn.Server):
    """uvicorn inside Lore's loop: it leaves signals alone and says when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.ready.set()


def _bind(listen: str, port: int) -> socket.socket:
    """A listening TCP socket. Made with IPPROTO_TCP, not 0 as `socket.create_server` does:
    asyncio sets TCP_NODELAY only on connections of sockets that say they are TCP, and
    without it every answer waited ~40 ms for a delayed ACK."""
    family = socket.AF_INET6 if ":" in listen else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((listen, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        raise StartupError(f"MCP cannot listen on {listen}:{port}: {exc.strerror}") from exc
    return sock


class McpHttpEdge:
    """Lore's knowledge for MCP clients over streamable HTTP, read-only, per bearer token."""

    platform = MCP_PLATFORM

    def __init__(self, config: McpHttpConfig) -> None:
        self._config = config
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The bound port (useful with port 0)."""
        if self._port is None:
            raise RuntimeError("The MCP edge is not running")
        return self._port

    @property
    def url(self) -> str:
        """The endpoint MCP clients connect to."""
        host = self._config.listen
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}{self._config.path}"

    @asynccontextmanager
    async def running(self, bot: Bot) -> AsyncIterator[RunningEdge]:
        """Listen, serve until the block ends, then stop (open streams get a short grace)."""
        config = self._config
        sock = _bind(config.listen, config.port)
        self._port = int(sock.getsockname()[1])
        mcp = build_server(bot, token_caller, verifier=BotTokenVerifier(bot), issuer_url=self.url)
        # The tools send no progress or log notifications: a plain JSON answer per call.
        app = mcp.streamable_http_app(
            streamable_http_path=config.path,
            host=config.listen,
            json_response=True,
            transport_security=transport_security(config),
        )
        server = _Server(
            uvicorn.Config(
                app,
                log_config=None,
                access_log=False,
                lifespan="on",
                ws="none",
                timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
            )
        )
        task = asyncio.create_task(self._serve(server, sock), name="mcp-http")
        ready = asyncio.create_task(server.ready.wait())
        await asyncio.wait([task, ready], return_when=asyncio.FIRST_COMPLETED)
        if not server.ready.is_set():
            ready.cancel()
            sock.close()
            await task  # raises what stopped it
            raise StartupError("The MCP server stopped while starting.")
        logger.info("MCP (streamable HTTP) listening on %s", self.url)
        try:
            yield RunningEdge(MCP_PLATFORM)
        finally:
            server.should_exit = True
            await task
            self._port = None

    @staticmethod
    async def _serve(server: _Server, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn's way of saying its startup failed
            raise StartupError("The MCP server could not start; see the log.") from exc
        finally:
            sock.close()
