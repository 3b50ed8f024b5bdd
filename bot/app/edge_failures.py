"""Why an edge did not start, as one line naming the setting to change (never its value).

`lore run` starts each configured edge; a refused token, an API it cannot reach or a port
another program holds surfaces as a library's exception (PTB, discord.py, slack-sdk,
matrix-nio, aiohttp, httpx, or an `OSError` from `bind`), sometimes already translated by the
adapter into a `StartupError`. The composition root knows which settings built each edge, so the
translation into the operator's words happens here: `edge_start_error(settings, platform,
exc)` reads the exception chain and returns an `EdgeStartError`. The core never imports a
chat SDK (an import-linter contract), so their exceptions are recognised by class name.
"""

from __future__ import annotations

import errno
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass

from bot.errors import EdgeStartError, LoreError
from bot.log_redaction import SecretRedactor
from bot.settings import Settings

__all__ = ["edge_start_error"]

# Slack's answers to auth.test / apps.connections.open that mean "this token is wrong".
_SLACK_REFUSALS = frozenset(
    {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}
)
_SETTING = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b")  # TELEGRAM_BOT_TOKEN
_UNREACHABLE_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
    }
)


@dataclass(frozen=True, slots=True)
class _EdgeSettings:
    """The settings an operator changes for one edge, as they write them."""

    label: str
    auth: str | None = None
    auth_hint: str = ""
    url: str | None = None
    url_value: str = ""
    port: str | None = None
    port_value: str = ""


def _edge_settings(settings: Settings, platform: str) -> _EdgeSettings:
    if platform == "telegram":
        webhook = settings.telegram_webhook_url is not None
        return _EdgeSettings(
            "Telegram",
            auth="TELEGRAM_BOT_TOKEN",
            auth_hint="the token @BotFather gave you",
            url="TELEGRAM_API_ROOT",
            url_value=settings.telegram_api_root or "https://api.telegram.org",
            port="TELEGRAM_WEBHOOK_PORT" if webhook else None,
            port_value=f"{settings.telegram_webhook_listen}:{settings.telegram_webhook_port}",
        )
    if platform == "slack":
        return _EdgeSettings(
            "Slack",
            auth="SLACK_BOT_TOKEN",
            auth_hint="the app's xoxb- token (and SLACK_APP_TOKEN's xapp- token)",
            url="SLACK_API_URL",
            url_value=settings.slack_api_url,
            port="SLACK_HTTP_PORT",
            port_value=f"{settings.slack_http_listen}:{settings.slack_http_port}",
        )
    if platform == "discord":
        return _EdgeSettings(
            "Discord",
            auth="DISCORD_BOT_TOKEN",
            auth_hint="the bot token from the Developer Portal",
            url="DISCORD_API_URL",
            url_value=settings.discord_api_url or "https://discord.com/api",
        )
    if platform == "matrix":
        token = settings.matrix_access_token is not None
        return _EdgeSettings(
            "Matrix",
            auth="MATRIX_ACCESS_TOKEN" if token else "MATRIX_PASSWORD",
            auth_hint="the bot account's " + ("access token" if token else "password"),
            url="MATRIX_HOMESERVER",
            url_value=settings.matrix_homeserver or "",
        )
    if platform == "mcp":
        return _EdgeSettings(
            "MCP",
            port="MCP_HTTP_PORT",
            port_value=f"{settings.mcp_http_listen}:{settings.mcp_http_port}",
        )
    return _EdgeSettings(platform.capitalize())


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what caused it, as far back as the chain goes (each once)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _kinds(exc: BaseException) -> set[str]:
    """The class names `exc` is an instance of (an SDK's exceptions, without importing it)."""
    return {cls.__name__ for cls in type(exc).__mro__}


def _token_refused(exc: BaseException) -> bool:
    if _kinds(exc) & {"InvalidToken", "LoginFailure", "Unauthorized"}:
        return True  # PTB, discord.py, (some HTTP clients)
    lookup = getattr(getattr(exc, "response", None), "get", None)  # a slack-sdk response
    if callable(lookup) and lookup("error") in _SLACK_REFUSALS:
        return True
    return getattr(exc, "status", None) == 401 or getattr(exc, "status_code", None) == 401


def _port_taken(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE


def _unreachable(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError | socket.gaierror | TimeoutError):
        return True
    if isinstance(exc, OSError) and exc.errno in _UNREACHABLE_ERRNOS:
        return True
    kinds = _kinds(exc)
    if "BadRequest" in kinds:
        return False  # PTB's BadRequest is a NetworkError: the API answered
    # PTB's NetworkError and TimedOut, httpx's and aiohttp's connection errors.
    return bool(kinds & {"NetworkError", "ConnectError", "ConnectTimeout", "ClientConnectorError"})


def _translated(exc: BaseException) -> LoreError | None:
    """The adapter's own translation (a `StartupError`), if it made one."""
    return next((cause for cause in _chain(exc) if isinstance(cause, LoreError)), None)


def edge_start_error(settings: Settings, platform: str, exc: BaseException) -> EdgeStartError:
    """The one line that tells an operator why `platform`'s edge did not start."""
    edge = _edge_settings(settings, platform)
    causes = list(_chain(exc))
    translated = _translated(exc)
    if translated is not None and _SETTING.search(str(translated)):
        # The adapter already said which setting to change (e.g. SLACK_APP_TOKEN).
        message = SecretRedactor(settings.secret_values()).redact(str(translated))
    elif edge.auth and any(_token_refused(cause) for cause in causes):
        message = f"{edge.label} refused {edge.auth}: set it to {edge.auth_hint}."
    elif edge.port and any(_port_taken(cause) for cause in causes):
        message = (
            f"{edge.label} cannot listen on {edge.port_value}: the port is in use. "
            f"Set {edge.port} to a free port, or stop the program that holds it."
        )
    elif edge.url and any(_unreachable(cause) for cause in causes):
        message = (
            f"{edge.label}: cannot reach {edge.url_value}. "
            f"Check {edge.url} (unset = the public API) and the network."
        )
    else:
        message = _other(edge, exc, SecretRedactor(settings.secret_values()))
    return EdgeStartError(" ".join(message.split()))


def _other(edge: _EdgeSettings, exc: BaseException, secrets: SecretRedactor) -> str:
    names = [name for name in (edge.auth, edge.url, edge.port) if name]
    translated = _translated(exc)
    text = secrets.redact(
        str(translated) if translated is not None else f"{type(exc).__name__}: {exc}"
    )
    message = f"{edge.label} did not start: {text}"
    return message + (f" (check {', '.join(names)})" if names else "")
