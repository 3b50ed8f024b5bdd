"""The CLI beside the running bot: store commands go over `DATA_DIR/control.sock` while a bot
holds the data directory, with the same output and exit code as without one."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import stat
import subprocess
from logging import ERROR
from pathlib import Path

import pytest

from bot.app import Lore, open_lore
from bot.control.client import ask_health, connect
from bot.control.protocol import MAX_FRAME_BYTES, decode, encode, socket_path
from bot.control.server import ControlServer
from bot.control.socket_paths import reachable
from bot.errors import NotInvitedError
from bot.people import LOCAL_OWNER
from bot.sources import Source
from tests.conftest import SettingsFactory
from tests.control_cli import Recorded, lore, make_workdir, messages

COMMANDS = [
    ("ingest", "notes", "--shared"),
    ("ingest", "notes/wifi.md", "--shared"),
    ("ingest", "notes/missing.md"),
    ("search", "where can visitors park?"),
    ("search", "wifi", "--user", "typo-nobody"),
    ("stats",),
    ("reindex",),
]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_commands_beside_the_running_bot_print_what_they_print_without_it(
    tmp_path: Path, models_dir: Path, running_bot: tuple[Path, subprocess.Popen[str]]
) -> None:
    alone = make_workdir(tmp_path / "alone", models_dir)
    beside, bot = running_bot
    got_bar = ""
    for args in COMMANDS:
        expected = lore(alone, *args)
        got = lore(beside, *args)
        got_bar += got.stderr
        same_paths = got.stdout.replace(str(beside), str(alone))
        assert (got.returncode, same_paths) == (expected.returncode, expected.stdout), args
        assert messages(got.stderr.replace(str(beside), str(alone))) == messages(expected.stderr), (
            args
        )
        assert "in use by process" not in got.stderr
    assert "Ingesting: 100%" in got_bar
    assert bot.poll() is None  # the bot ran all along


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_health_answers_with_the_bot_and_says_so_without_it(
    running_bot: tuple[Path, subprocess.Popen[str]],
) -> None:
    workdir, bot = running_bot
    mode = (workdir / "data" / "control.sock").stat().st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600
    healthy = lore(workdir, "health")
    assert healthy.returncode == 0, healthy.stderr
    assert healthy.stdout.startswith(f"Lore is running: process {bot.pid}")
    assert len(healthy.stdout.splitlines()) == 1

    bot.send_signal(signal.SIGTERM)
    bot.communicate(timeout=60)
    assert not (workdir / "data" / "control.sock").exists()
    gone = lore(workdir, "health")
    assert gone.returncode == 1
    assert gone.stderr.startswith("Lore is not running: no bot answers at ")
    assert gone.stdout == ""


async def test_a_garbage_request_gets_an_error_and_the_bot_keeps_serving(lore: Lore) -> None:
    data_dir = lore.settings.data_dir
    async with ControlServer(lore.bot, data_dir):
        for garbage in (b"\x00\xffnot json\n", b"[1, 2]\n", b"x" * (MAX_FRAME_BYTES + 10)):
            with reachable(socket_path(data_dir)) as address:
                reader, writer = await asyncio.open_unix_connection(address)
            writer.write(garbage)
            writer.write_eof()
            frames = [decode(line) for line in (await reader.read()).splitlines()]
            writer.close()
            assert frames[0]["kind"] == "err"
            assert frames[-1] == {"kind": "exit", "code": 2}
        answered = Recorded()
        assert await ask_health(data_dir, answered) == 0
        assert answered.lines[0][1].startswith("Lore is running")


async def test_the_bot_replaces_a_stale_socket_and_removes_its_own(lore: Lore) -> None:
    data_dir = lore.settings.data_dir
    path = socket_path(data_dir)
    with reachable(path) as address, socket.socket(socket.AF_UNIX) as crashed:
        crashed.bind(address)  # a crashed bot's socket: the file, nobody listening
    assert await connect(data_dir) is None
    said = Recorded()
    assert await ask_health(data_dir, said) == 1
    async with ControlServer(lore.bot, data_dir):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert await ask_health(data_dir, Recorded()) == 0
    assert not path.exists()
    assert list(data_dir.glob(".control-*")) == []


async def test_a_command_runs_as_the_local_owner_even_when_owners_name_others(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Boiler\n\nThe boiler reset button is behind the blue panel.\n")
    settings = make_settings(owners="telegram:1")
    async with open_lore(settings) as core, ControlServer(core.bot, settings.data_dir):
        # Outside a control request, the local owner is nobody here.
        with pytest.raises(NotInvitedError):
            await core.bot.ingest(LOCAL_OWNER, Source(path=note), shared=True)
        connection = await connect(settings.data_dir)
        assert connection is not None
        shown = Recorded()
        async with connection:
            request = {"source": "note.md", "shared": True, "cwd": str(tmp_path)}
            code = await connection.run("ingest", request, shown)
    assert code == 0, shown.lines
    assert shown.lines == [("out", "✅ Saved: Boiler (1 chunk) in the shared knowledge.")]


async def test_a_command_stops_in_the_bot_when_the_cli_goes_away(
    lore: Lore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for number in range(30):
        (folder / f"note{number:02d}.md").write_text(f"# Note {number}\n\nRoom {number} is free.\n")
    data_dir = lore.settings.data_dir
    async with ControlServer(lore.bot, data_dir):
        with reachable(socket_path(data_dir)) as address:
            reader, writer = await asyncio.open_unix_connection(address)
        request = {"op": "ingest", "args": {"source": str(folder), "shared": True, "cwd": "/"}}
        writer.write(json.dumps(request).encode() + b"\n")
        while decode(await reader.readuntil(b"\n"))["kind"] != "out":
            pass  # the bar begins; then the first file is saved
        writer.close()  # Ctrl-C in the CLI
        # Commands run one at a time: this one starts when the ingest has stopped.
        connection = await connect(data_dir)
        assert connection is not None
        counts = Recorded()
        async with connection:
            assert await connection.run("stats", {}, counts) == 0
    shared = next(text for _, text in counts.lines if text.startswith("shared documents"))
    assert 1 <= int(shared.split(": ")[1]) < 30
    assert [record.getMessage() for record in caplog.records if record.levelno >= ERROR] == []


async def test_without_a_socket_the_bot_runs_on_and_commands_find_no_bot(lore: Lore) -> None:
    data_dir = lore.settings.data_dir
    socket_path(data_dir).mkdir()  # something that is not a socket, where it would go
    async with ControlServer(lore.bot, data_dir):
        assert await connect(data_dir) is None
        assert (await lore.bot.maintenance.stats()).users >= 0
    assert socket_path(data_dir).is_dir()
    assert list(data_dir.glob(".control-*")) == []


def test_a_line_too_long_for_a_frame_is_cut_to_fit() -> None:
    line = encode({"kind": "out", "text": "é" * MAX_FRAME_BYTES})
    assert len(line) <= MAX_FRAME_BYTES
    assert decode(line)["text"].endswith("...")
