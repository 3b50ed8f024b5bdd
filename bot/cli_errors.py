"""How a `lore` command fails: one line on stderr naming what to change, and a non-zero exit.

Every failure a person can cause (a wrong setting, a data directory Lore cannot use, a
refused token, an unreachable API, a port in use, a busy store) ends the command with one
line, never a traceback and never a secret. `lore --debug COMMAND` shows the full
traceback instead (secrets still redacted). `reported_errors()` wraps a command's work;
`main()` wraps the whole program, so nothing escapes as a traceback.

Exit codes: 2 for a wrong setting, 130 for Ctrl-C, 1 for everything else.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from bot.errors import LoreError
from bot.log_redaction import SecretRedactor
from bot.settings import SettingsError

__all__ = ["SETTING_EXIT", "one_line", "reported_errors", "run_program", "set_debug"]

SETTING_EXIT = 2
INTERRUPTED_EXIT = 130
DEBUG_HINT = "run `lore --debug ...` to see the traceback"


class _Reporting:
    debug = False


def set_debug(debug: bool) -> None:
    """Show full tracebacks (`lore --debug`) instead of one line."""
    _Reporting.debug = debug


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents or path in folder.parents


def _data_dir_problem(exc: OSError, data_dir: Path | None) -> str | None:
    if data_dir is None or exc.filename is None:
        return None
    data_dir = data_dir.expanduser().absolute()
    if not _within(Path(str(exc.filename)).absolute(), data_dir):
        return None
    why = exc.strerror or type(exc).__name__
    if exc.errno == errno.EEXIST:
        why = "a file is in the way"
    return (
        f"Lore cannot use DATA_DIR={data_dir} ({why}: {exc.filename}). "
        "Set DATA_DIR to a folder Lore can create and write."
    )


def one_line(exc: BaseException, *, data_dir: Path | None = None) -> str:
    """What went wrong as one line for the person at the terminal (not yet redacted)."""
    if isinstance(exc, LoreError | SettingsError):
        text = str(exc)
    elif isinstance(exc, OSError) and (problem := _data_dir_problem(exc, data_dir)):
        text = problem
    elif isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        text = f"The disk is full ({exc.filename or 'writing'}); free some space and try again."
    else:
        detail = str(exc) or "no details"
        text = f"Lore stopped: {type(exc).__name__}: {detail} ({DEBUG_HINT})"
    return " ".join(text.split())


def _exit_code(exc: BaseException) -> int:
    return SETTING_EXIT if isinstance(exc, SettingsError) else 1


@contextmanager
def reported_errors(*, secrets: Iterable[str] = (), data_dir: Path | None = None) -> Iterator[None]:
    """Turn any failure in the block into one redacted line on stderr and a non-zero exit
    (`click.exceptions.Exit`); with --debug, into the redacted traceback."""
    try:
        yield
    except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
        raise
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from None
    except Exception as exc:
        redactor = SecretRedactor(secrets)
        if _Reporting.debug:
            text = "".join(traceback.format_exception(exc))
            sys.stderr.write(redactor.redact(text))
        click.echo(redactor.redact(one_line(exc, data_dir=data_dir)), err=True)
        raise click.exceptions.Exit(_exit_code(exc)) from None


def run_program(program: Callable[[], object]) -> None:
    """Run the whole command line; whatever a command did not handle is still one line.

    Then leave at once: everything Lore opened was closed by its exit stack, and the
    interpreter's own teardown of the native libraries (ONNX Runtime, the vector engine)
    takes seconds on a small machine with nothing left to save, so Ctrl-D or Ctrl-C in the
    terminal chat would seem to hang. Output and logs are flushed first."""
    code: int = 0
    try:
        with reported_errors():
            program()
    except click.exceptions.Exit as done:
        code = done.exit_code
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if isinstance(done.code, str):
            sys.stderr.write(done.code + "\n")
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
