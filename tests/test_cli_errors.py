"""Every failure a person can cause at the `lore` command is one line on stderr naming what to
change, never a traceback and never a secret, with a non-zero exit; `--debug` shows the
traceback. `lore` runs as a subprocess against fakes, closed ports and unusable folders."""

from __future__ import annotations

import asyncio
import errno
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from discord import LoginFailure
from telegram.error import InvalidToken, NetworkError

from bot.app.edge_failures import edge_start_error
from bot.cli_errors import reported_errors
from bot.errors import StartupError
from bot.settings import Settings, load_settings
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram

LORE = Path(sys.executable).parent / "lore"
# Each test starts `lore`, which loads the embedding model: slow on a busy machine.
pytestmark = pytest.mark.timeout(300)

TELEGRAM_SECRET = "987654:WRONG-telegram-token-never-shown"  # noqa: S105 - a test value
SLACK_SECRET = "xoxb-2222-slack-token-never-shown"  # noqa: S105
DISCORD_SECRET = "discord-token-never-shown.abcdef"  # noqa: S105
SIGNING_SECRET = "signing-secret-never-shown"  # noqa: S105


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        return self.stderr.strip().splitlines()


@pytest.fixture
def workdir(tmp_path: Path, assembled_models_dir: Path) -> Path:
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={assembled_models_dir}\nSAMPLE_DOCS_DIR=\n"
        "LOG_LEVEL=WARNING\n"
    )
    return tmp_path


def configure(workdir: Path, **settings: object) -> None:
    with (workdir / ".env").open("a") as env:
        env.writelines(f"{name}={value}\n" for name, value in settings.items())


async def lore(workdir: Path, *args: str) -> Outcome:
    """Run `lore ARGS` with no terminal and empty input, as in a container."""
    process = await asyncio.create_subprocess_exec(
        str(LORE),
        *args,
        cwd=workdir,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=240)
    assert process.returncode is not None
    return Outcome(process.returncode, out.decode(), err.decode())


def assert_one_line(result: Outcome, *, names: str, code: int = 1, secret: str = "") -> str:
    assert result.code == code, result.stderr
    assert len(result.lines) == 1, result.stderr
    [line] = result.lines
    assert names in line
    assert "Traceback" not in result.stderr
    if secret:
        assert secret not in result.stderr + result.stdout
    return line


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


async def test_a_data_dir_that_is_not_a_directory_is_one_line(workdir: Path) -> None:
    configure(workdir, DATA_DIR="/dev/null/data")
    line = assert_one_line(await lore(workdir, "stats"), names="DATA_DIR=/dev/null/data")
    assert "Set DATA_DIR to a folder Lore can create and write." in line


async def test_a_data_dir_that_is_a_file_is_one_line(workdir: Path) -> None:
    (workdir / "notes.txt").write_text("not a folder\n")
    configure(workdir, DATA_DIR=workdir / "notes.txt")
    assert_one_line(await lore(workdir, "search", "printer"), names="DATA_DIR=")


@pytest.mark.parametrize(
    ("name", "value"),
    [("CHUNK_TOKENS", "lots"), ("MCP_HTTP_PORT", "99999"), ("LLM_API_KEY", "x")],
)
async def test_a_bad_setting_value_is_one_line_naming_it(
    workdir: Path, name: str, value: str
) -> None:
    configure(workdir, **{name: value})
    assert_one_line(await lore(workdir, "run"), names=name, code=2)


async def test_a_wrong_telegram_token_is_one_line_without_the_token(workdir: Path) -> None:
    async with FakeTelegram() as fake:  # answers 401 to any token but its own
        configure(workdir, TELEGRAM_BOT_TOKEN=TELEGRAM_SECRET, TELEGRAM_API_ROOT=fake.api_root)
        result = await lore(workdir, "run")
    line = assert_one_line(result, names="TELEGRAM_BOT_TOKEN", secret=TELEGRAM_SECRET)
    assert line.startswith("Telegram refused TELEGRAM_BOT_TOKEN")


async def test_debug_shows_the_traceback_still_without_the_token(workdir: Path) -> None:
    async with FakeTelegram() as fake:
        configure(workdir, TELEGRAM_BOT_TOKEN=TELEGRAM_SECRET, TELEGRAM_API_ROOT=fake.api_root)
        result = await lore(workdir, "--debug", "run")
    assert result.code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "InvalidToken" in result.stderr
    assert TELEGRAM_SECRET not in result.stderr + result.stdout
    assert result.lines[-1].startswith("Telegram refused TELEGRAM_BOT_TOKEN")


async def test_an_unreachable_bot_api_is_one_line_naming_its_setting(
    workdir: Path, closed_port: int
) -> None:
    root = f"http://127.0.0.1:{closed_port}"
    configure(workdir, TELEGRAM_BOT_TOKEN=TELEGRAM_SECRET, TELEGRAM_API_ROOT=root)
    result = await lore(workdir, "run")
    line = assert_one_line(result, names="TELEGRAM_API_ROOT", secret=TELEGRAM_SECRET)
    assert f"cannot reach {root}" in line


async def test_an_unreachable_slack_api_is_one_line_naming_its_setting(
    workdir: Path, closed_port: int
) -> None:
    configure(
        workdir,
        SLACK_BOT_TOKEN=SLACK_SECRET,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=f"http://127.0.0.1:{closed_port}/api/",
    )
    result = await lore(workdir, "run")
    assert_one_line(result, names="SLACK_API_URL", secret=SLACK_SECRET)
    assert SIGNING_SECRET not in result.stderr


async def test_an_unreachable_discord_api_is_one_line_naming_its_setting(
    workdir: Path, closed_port: int
) -> None:
    configure(
        workdir,
        DISCORD_BOT_TOKEN=DISCORD_SECRET,
        DISCORD_API_URL=f"http://127.0.0.1:{closed_port}/api/v10",
    )
    result = await lore(workdir, "run")
    assert_one_line(result, names="DISCORD_API_URL", secret=DISCORD_SECRET)


async def test_a_taken_mcp_port_is_one_line_naming_its_setting(
    workdir: Path, taken_port: int
) -> None:
    configure(workdir, MCP_HTTP_PORT=taken_port)
    line = assert_one_line(await lore(workdir, "run"), names="MCP_HTTP_PORT")
    assert f"127.0.0.1:{taken_port}: the port is in use" in line


@pytest.mark.parametrize("listen", ["0.0.0.0", "192.0.2.10", "lore.example.org"])  # noqa: S104
async def test_row_h_mcp_off_loopback_without_allowed_hosts_is_one_line_naming_it(
    workdir: Path, listen: str
) -> None:
    configure(workdir, MCP_HTTP_PORT=8787, MCP_HTTP_LISTEN=listen, MCP_ALLOWED_ORIGINS="")
    line = assert_one_line(await lore(workdir, "run"), names="MCP_ALLOWED_HOSTS", code=2)
    assert f"MCP_HTTP_LISTEN={listen}" in line


async def test_a_taken_slack_port_is_one_line_naming_its_setting(
    workdir: Path, taken_port: int
) -> None:
    async with FakeSlack() as fake:
        configure(
            workdir,
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_URL=fake.api_url,
            SLACK_HTTP_PORT=taken_port,
        )
        result = await lore(workdir, "run")
    assert_one_line(result, names="SLACK_HTTP_PORT", secret=SIGNING_SECRET)
    assert fake.bot_token not in result.stderr


# -- the translation itself, with the libraries' real exceptions ---------------------------


def edge_settings(**values: object) -> Settings:
    return load_settings(_env_file=None, **values)


def raised(exc: BaseException, cause: BaseException | None = None) -> BaseException:
    """`exc` chained to `cause`, as `raise exc from cause` leaves it."""
    exc.__cause__ = cause
    return exc


def test_an_adapters_own_words_are_kept_when_they_name_the_setting() -> None:
    settings = edge_settings(slack_bot_token=SLACK_SECRET, slack_app_token="xapp-1-abcdefgh")
    refusal = StartupError("Slack refused SLACK_APP_TOKEN (invalid_auth); see docs/slack.md.")
    error = edge_start_error(settings, "slack", raised(refusal, ConnectionError("x")))
    assert str(error) == "Slack refused SLACK_APP_TOKEN (invalid_auth); see docs/slack.md."


@pytest.mark.parametrize(
    ("platform", "exc", "expected"),
    [
        ("telegram", InvalidToken(), "Telegram refused TELEGRAM_BOT_TOKEN: set it to"),
        ("discord", LoginFailure(), "Discord refused DISCORD_BOT_TOKEN: set it to"),
        ("telegram", NetworkError("httpx.ConnectError"), "Check TELEGRAM_API_ROOT"),
        ("discord", ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "DISCORD_API_URL"),
        ("mcp", OSError(errno.EADDRINUSE, "in use"), "Set MCP_HTTP_PORT to a free port"),
        ("slack", OSError(errno.EADDRINUSE, "in use"), "Set SLACK_HTTP_PORT to a free port"),
    ],
)
def test_a_library_failure_becomes_the_setting_to_change(
    platform: str, exc: BaseException, expected: str
) -> None:
    settings = edge_settings(
        telegram_bot_token=TELEGRAM_SECRET,
        discord_bot_token=DISCORD_SECRET,
        slack_bot_token=SLACK_SECRET,
        slack_signing_secret=SIGNING_SECRET,
        mcp_http_port=8765,
    )
    wrapped = raised(StartupError("the edge could not start"), exc)
    message = str(edge_start_error(settings, platform, wrapped))
    assert expected in message
    assert "\n" not in message


def test_an_unforeseen_failure_is_one_redacted_line_with_a_hint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(click.exceptions.Exit) as ended, reported_errors(secrets=[SLACK_SECRET]):
        raise RuntimeError(f"boom\nwhile calling https://x.test/{SLACK_SECRET}/")
    assert ended.value.exit_code == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line == (
        "Lore stopped: RuntimeError: boom while calling https://x.test/[REDACTED]/ "
        "(run `lore --debug ...` to see the traceback)"
    )
