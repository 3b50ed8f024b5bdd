"""The C library's heap controls: arenas are capped and freed pages returned on glibc."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from storage.heap import limit_arenas, trim_heap

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")


@glibc
def test_glibc_takes_the_arena_cap() -> None:
    assert limit_arenas(2) is True  # mallopt(M_ARENA_MAX, 2) answered 1


def test_zero_leaves_the_c_library_alone() -> None:
    assert limit_arenas(0) is False


@glibc
def test_trimming_returns_freed_pages() -> None:
    def resident_kb() -> int:
        return int(Path("/proc/self/statm").read_text(encoding="ascii").split()[1]) * 4

    # Small blocks come from the heap (not mmap), so freeing them leaves the pages with
    # the process until the heap is trimmed; the last block keeps the heap's top in use.
    blocks = [bytearray(4096) for _ in range(20_000)]
    keep = bytearray(4096)
    del blocks
    before = resident_kb()
    trim_heap()
    assert resident_kb() < before - 40_000
    assert keep is not None
