"""One real Synapse homeserver on 127.0.0.1 for a whole test session.

`make test` installs a pinned matrix-synapse into its own virtualenv, `.venv-synapse/`
(never into Lore's). This module writes a configuration for it (SQLite, no federation,
registration by shared secret only, rate limits raised, bcrypt rounds 4, authenticated
media, no URL previews) in a temporary folder, starts it on a free port and waits until its
client API answers (about 5 s here, most of it Python imports). Accounts are registered over
HTTP with the shared-secret HMAC (about 0.05 s each), so every test makes its own people.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from urllib.parse import quote

__all__ = ["SYNAPSE_PYTHON", "Account", "Homeserver", "running_homeserver"]

ROOT = Path(__file__).resolve().parents[2]
SYNAPSE_PYTHON = ROOT / ".venv-synapse" / "bin" / "python"
SERVER_NAME = "lore.test"
START_SECONDS = 90.0
_numbers = count(1)

RAISED = {"per_second": 10_000, "burst_count": 10_000}
LIMITS = {
    "rc_message": RAISED,
    "rc_registration": RAISED,
    "rc_login": {"address": RAISED, "account": RAISED, "failed_attempts": RAISED},
    "rc_joins": {"local": RAISED, "remote": RAISED},
    "rc_joins_per_room": RAISED,
    "rc_invites": {"per_room": RAISED, "per_user": RAISED, "per_issuer": RAISED},
    "rc_key_requests": RAISED,
    "rc_admin_redaction": RAISED,
    "rc_media_create": RAISED,
    "rc_room_creation": RAISED,
}


@dataclass(frozen=True, slots=True)
class Account:
    """A registered user: its ID, password and a fresh access token (with its device)."""

    user_id: str
    password: str
    access_token: str
    device_id: str

    @property
    def localpart(self) -> str:
        return self.user_id[1:].split(":")[0]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _config(folder: Path, port: int, shared_secret: str) -> dict[str, object]:
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(folder / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(folder / "homeserver.db")}},
        "log_config": str(folder / "log.yaml"),
        "media_store_path": str(folder / "media"),
        "signing_key_path": str(folder / "signing.key"),
        "registration_shared_secret": shared_secret,
        "enable_registration": False,
        "report_stats": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "enable_authenticated_media": True,
        "url_preview_enabled": False,
        "presence": {"enabled": False},
        "bcrypt_rounds": 4,
        "max_upload_size": "2M",
        **LIMITS,
    }


def _write_files(folder: Path, port: int, shared_secret: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    seed = base64.b64encode(os.urandom(32)).decode().rstrip("=")
    (folder / "signing.key").write_text(f"ed25519 a_lore {seed}\n")
    log = {
        "version": 1,
        "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
        "handlers": {
            "file": {
                "class": "logging.FileHandler",
                "formatter": "plain",
                "filename": str(folder / "homeserver.log"),
            }
        },
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }
    (folder / "log.yaml").write_text(json.dumps(log))  # JSON is YAML
    path = folder / "homeserver.yaml"
    path.write_text(json.dumps(_config(folder, port, shared_secret), indent=2))
    return path


@dataclass
class Homeserver:
    """A running Synapse: its URL and how to register people on it."""

    url: str
    folder: Path
    shared_secret: str
    process: subprocess.Popen[bytes]
    _admin: Account | None = None

    @property
    def server_name(self) -> str:
        return SERVER_NAME

    def _post(
        self, path: str, body: dict[str, object], *, token: str | None = None
    ) -> dict[str, object]:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(  # noqa: S310 - the homeserver on loopback
            self.url + path, data=json.dumps(body).encode(), headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return dict(json.load(response))

    def register(self, name: str, *, admin: bool = False) -> Account:
        """A new account `@name-N:lore.test` (unique in this session), logged in once."""
        localpart = f"{name}-{next(_numbers)}"
        password = secrets.token_urlsafe(12)
        with urllib.request.urlopen(  # noqa: S310 - loopback
            self.url + "/_synapse/admin/v1/register", timeout=30
        ) as response:
            nonce = json.load(response)["nonce"]
        mac = hmac.new(self.shared_secret.encode(), digestmod=hashlib.sha1)
        mac.update(f"{nonce}\0{localpart}\0{password}\0{'admin' if admin else 'notadmin'}".encode())
        answer = self._post(
            "/_synapse/admin/v1/register",
            {
                "nonce": nonce,
                "username": localpart,
                "password": password,
                "admin": admin,
                "mac": mac.hexdigest(),
            },
        )
        return Account(
            str(answer["user_id"]), password, str(answer["access_token"]), str(answer["device_id"])
        )

    def limit_messages(self, user_id: str, per_second: int, burst_count: int) -> None:
        """Rate-limit one account's events far below the session's raised limits, with
        Synapse's per-user override (admin API); its requests then meet 429s."""
        if self._admin is None:
            self._admin = self.register("admin", admin=True)
        self._post(
            f"/_synapse/admin/v1/users/{quote(user_id)}/override_ratelimit",
            {"messages_per_second": per_second, "burst_count": burst_count},
            token=self._admin.access_token,
        )

    def log(self) -> str:
        """The homeserver's warnings and errors so far (for a failing test's report)."""
        path = self.folder / "homeserver.log"
        return path.read_text() if path.exists() else ""


def _wait_until_up(url: str, process: subprocess.Popen[bytes], folder: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = (folder / "stdout.log").read_text()[-2000:]
            raise RuntimeError(f"Synapse exited with {process.returncode}: {output}")
        try:
            with urllib.request.urlopen(url + "/_matrix/client/versions", timeout=2):  # noqa: S310
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    raise RuntimeError(f"Synapse did not answer within {START_SECONDS:.0f} s")


@contextmanager
def running_homeserver(folder: Path) -> Iterator[Homeserver]:
    """Start Synapse with a fresh configuration in `folder`; stop it at the end."""
    port = _free_port()
    shared_secret = secrets.token_urlsafe(24)
    config = _write_files(folder, port, shared_secret)
    url = f"http://127.0.0.1:{port}"
    with (folder / "stdout.log").open("wb") as output:
        process = subprocess.Popen(  # noqa: S603 - our own virtualenv's Python
            [str(SYNAPSE_PYTHON), "-m", "synapse.app.homeserver", "-c", str(config)],
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=folder,
        )
    try:
        _wait_until_up(url, process, folder)
        yield Homeserver(url, folder, shared_secret, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
