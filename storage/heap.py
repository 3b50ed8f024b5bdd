"""The C library's heap: give freed pages back to the system, and bound its thread arenas.

glibc keeps memory that Python, ONNX Runtime or the vector engine freed, and gives each
thread that meets contention an arena of its own (up to eight per core), each keeping
its own freed memory. `trim_heap` returns free pages of every arena to the system;
`limit_arenas` caps how many arenas later threads may create. Both do nothing where the C
library is not glibc (musl, macOS).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import cache
from typing import Any

__all__ = ["limit_arenas", "trim_heap"]

_M_ARENA_MAX = -8  # mallopt parameter, from glibc's malloc.h


@cache
def _glibc_call(name: str) -> Callable[..., Any] | None:
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        function: Callable[..., Any] = getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):  # not glibc
        return None
    return function


def trim_heap() -> None:
    """Hand freed heap pages back to the system (glibc keeps them otherwise)."""
    trim = _glibc_call("malloc_trim")
    if trim is not None:
        trim(0)


def limit_arenas(arenas: int) -> bool:
    """Let threads share at most `arenas` malloc arenas from now on (0: glibc's own rule);
    whether the C library took the setting."""
    if arenas == 0:
        return False
    mallopt = _glibc_call("mallopt")
    return mallopt is not None and bool(mallopt(_M_ARENA_MAX, arenas))
