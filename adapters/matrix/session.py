"""Logging the bot account in, and keeping its device.

With `MATRIX_ACCESS_TOKEN` the homeserver's `whoami` names the account and the device the
token belongs to. With `MATRIX_PASSWORD` Lore logs in once and remembers the device id it
got (in the store file, `DATA_DIR/matrix.sqlite3`); every later start logs in again *with
that device id*, so the device keeps its end-to-end keys and its sync token, and the
homeserver retires the previous access token (no token is ever written to disk).

A refused secret, a token of another account or an unreachable homeserver is a
`StartupError` whose one line names the setting to change.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

import aiohttp
import nio

from adapters.matrix.config import MatrixConfig
from bot.errors import StartupError

__all__ = ["log_in", "prepare_store"]

logger = logging.getLogger(__name__)

DEVICE_TABLE = (
    "CREATE TABLE IF NOT EXISTS lore_device (user_id TEXT PRIMARY KEY, device_id TEXT NOT NULL)"
)
REFUSED = {"M_UNKNOWN_TOKEN", "M_MISSING_TOKEN", "M_FORBIDDEN", "M_USER_DEACTIVATED"}


def prepare_store(path: Path) -> None:
    """Create the store file readable by Lore's user only (it holds the device's keys)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)


def _remembered_device(path: Path, user_id: str) -> str | None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(DEVICE_TABLE)
        row = db.execute("SELECT device_id FROM lore_device WHERE user_id = ?", (user_id,))
        found = row.fetchone()
    return str(found[0]) if found else None


def _remember_device(path: Path, user_id: str, device_id: str) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute(DEVICE_TABLE)
        db.execute(
            "INSERT INTO lore_device (user_id, device_id) VALUES (?, ?)"
            " ON CONFLICT (user_id) DO UPDATE SET device_id = excluded.device_id",
            (user_id, device_id),
        )


async def _reachable(client: nio.AsyncClient, config: MatrixConfig) -> None:
    """The homeserver answers its versions endpoint (nio itself would retry forever)."""
    problem = ""
    try:
        async with asyncio.timeout(config.connect_timeout):
            response = await client.send("GET", "/_matrix/client/versions")
            async with response:
                if response.status != 200:
                    problem = f"it answered HTTP {response.status}"
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        problem = type(exc).__name__
    if problem:
        raise StartupError(
            f"Matrix: cannot reach the homeserver at {config.homeserver} ({problem}). "
            "Check MATRIX_HOMESERVER (the client-server API's URL) and the network."
        )


def _refused(config: MatrixConfig, response: object) -> StartupError:
    code = getattr(response, "status_code", None)
    if code in REFUSED:
        return StartupError(
            f"The Matrix homeserver refused {config.auth_setting} for {config.user_id}: set it "
            "to the bot account's "
            + ("access token" if config.access_token else "password")
            + " (see docs/matrix.md)."
        )
    message = getattr(response, "message", "") or type(response).__name__
    return StartupError(
        f"Matrix login failed ({code}: {message}); check {config.auth_setting} and MATRIX_USER_ID."
    )


async def _with_token(client: nio.AsyncClient, config: MatrixConfig, token: str) -> None:
    client.access_token = token
    response = await client.whoami()
    if not isinstance(response, nio.WhoamiResponse):
        client.access_token = ""
        raise _refused(config, response)
    if response.user_id != config.user_id:
        raise StartupError(
            f"MATRIX_ACCESS_TOKEN belongs to {response.user_id}, not to MATRIX_USER_ID "
            f"{config.user_id}: set one to match the other."
        )
    if not response.device_id:
        raise StartupError(
            "MATRIX_ACCESS_TOKEN has no device (an appservice or admin token?): log the bot in "
            "as a client to get one, or set MATRIX_PASSWORD instead (see docs/matrix.md)."
        )
    client.restore_login(response.user_id, response.device_id, token)


async def _with_password(client: nio.AsyncClient, config: MatrixConfig, password: str) -> None:
    path = config.store_path
    client.device_id = await asyncio.to_thread(_remembered_device, path, config.user_id)
    response = await client.login(password, device_name=config.device_name)
    if not isinstance(response, nio.LoginResponse):
        raise _refused(config, response)
    await asyncio.to_thread(_remember_device, path, response.user_id, response.device_id)


async def log_in(client: nio.AsyncClient, config: MatrixConfig) -> None:
    """Log `client` in as the bot account and open its store (keys and sync token)."""
    await asyncio.to_thread(prepare_store, config.store_path)
    await _reachable(client, config)
    if config.access_token:
        await _with_token(client, config, config.access_token)
    elif config.password:
        await _with_password(client, config, config.password)
    else:
        raise StartupError("Set MATRIX_ACCESS_TOKEN or MATRIX_PASSWORD for the Matrix account.")
    if client.store is None or client.olm is None:
        raise StartupError(f"The Matrix device store at {config.store_path} could not be opened.")
    logger.info("Matrix: logged in as %s (device %s)", client.user_id, client.device_id)
