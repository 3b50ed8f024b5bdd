"""Fast start: `lore --help` and argument errors answer before the engines, the agent graph
or any chat SDK is imported. Each check runs in a fresh interpreter, since this test process
has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sample_files import pdf_bytes

LORE = Path(sys.executable).parent / "lore"

# What `lore --help` must not import: the embedding and vector engines, the agent graph,
# the chat SDKs and the extractors. Each costs from 0.1 s to 2 s to import.
HEAVY = (
    "onnxruntime",
    "fastembed",
    "tokenizers",
    "numpy",
    "discord",
    "telegram",
    "slack_bolt",
    "slack_sdk",
    "mcp",
    "qdrant_client",
    "qdrant_edge",
    "langgraph",
    "langchain_core",
    "trafilatura",
    "pypdf",
    "docx",
    "apscheduler",
    "httpx",
)

# Runs the console script's entry point with the given arguments, then prints which heavy
# packages were imported and how the command exited.
# `main` leaves with os._exit (see bot.cli_errors.run_program); here it raises SystemExit
# instead, so that the probe can report after it.
PROBE = """
import json, os, sys
def leave(code):
    raise SystemExit(code)
os._exit = leave
sys.argv = ["lore", *sys.argv[1:]]
from bot.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


def probe(
    *args: str, heavy: tuple[str, ...] = HEAVY, cwd: Path | None = None, stdin: str = ""
) -> tuple[int, list[str], str]:
    """Exit code, `heavy` packages imported, and what was printed, for `lore ARGS...`."""
    script = f"HEAVY = {heavy!r}\n{PROBE}"
    done = subprocess.run(  # noqa: S603 - this interpreter with our own code
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], report["heavy"], done.stdout + done.stderr


def test_importing_the_cli_loads_no_engine_and_no_chat_sdk() -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter with our own code
        [
            sys.executable,
            "-c",
            f"import sys, bot.cli; print(sorted({{m.split('.')[0] for m in sys.modules}} & "
            f"set({HEAVY!r})))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_help_lists_the_commands_without_loading_the_core() -> None:
    code, heavy, output = probe("--help")
    assert code == 0
    assert heavy == []
    for command in ("ingest", "search", "stats", "run", "chat"):
        assert command in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nosuchcommand",), "No such command"),
        (("search",), "Missing argument"),
        (("search", "x", "--limit", "0"), "Invalid value"),
    ],
)
def test_argument_errors_exit_2_without_loading_the_core(
    args: tuple[str, ...], message: str
) -> None:
    code, heavy, output = probe(*args)
    assert code == 2
    assert heavy == []
    assert message in output


def test_a_command_help_loads_nothing_heavy() -> None:
    code, heavy, output = probe("ingest", "--help")
    assert code == 0
    assert heavy == []
    assert "--shared" in output


# The file parsers and what they pull in: only the extraction worker processes load them.
PARSERS = ("pypdf", "trafilatura", "docx", "lxml", "courlan", "htmldate", "justext")


def test_lore_run_reads_a_pdf_without_loading_a_parser_itself(
    tmp_path: Path, models_dir: Path
) -> None:
    """The parsers cost the bot ~50 MB of memory: its workers read files, the bot never does."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "parking.pdf").write_bytes(pdf_bytes(["Visitors park in bay 12 behind the bakery."]))
    (notes / "page.html").write_text(
        "<html><head><title>Bikes</title></head><body><p>Bicycles go in the locked cage"
        " under the east stairs.</p></body></html>"
    )
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=notes\n"
    )
    code, parsers, output = probe(
        "run", heavy=PARSERS, cwd=tmp_path, stdin="where do visitors park?\n"
    )
    assert code == 0, output
    assert "Knowledge base: 2 shared documents" in output
    assert "bay 12" in output
    assert parsers == []


def test_the_console_script_answers_help() -> None:
    done = subprocess.run(  # noqa: S603 - our own console script
        [str(LORE), "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Usage: lore" in done.stdout
