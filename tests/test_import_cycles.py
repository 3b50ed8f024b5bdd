"""No import cycles among Lore's modules (issue 27, the house): a module's imports, those made
only for type checking or inside a function included, never lead back to it. import-linter
keeps the layers apart; this keeps the modules inside a layer from knotting together."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("adapters", "bot", "graphs", "scheduler", "storage")


def module_files() -> dict[str, Path]:
    """Every module of the packages, by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(tree: ast.AST, known: set[str]) -> Iterator[str]:
    """The known modules a module's code imports (`from package import submodule` names the
    submodule, not the package)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule in known:
                    yield submodule
                elif node.module in known:
                    yield node.module


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while (top := stack.pop()) != module:
                component.append(top)
            if component:
                found.append(sorted([module, *component]))

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_the_house_no_module_imports_itself_through_others() -> None:
    files = module_files()
    # Compiled modules count as modules (they import nothing of ours): their stubs name them.
    stubs = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.pyi")
    }
    known = set(files) | stubs
    graph = {
        name: set(imported(ast.parse(path.read_text("utf-8")), known)) - {name} - stubs
        for name, path in files.items()
    }
    assert cycles(graph) == []
