"""A Unix socket's address for any path: Linux caps addresses at 107 bytes, and a data
directory can sit deeper than that, so a long path is reached through its directory's file
descriptor (`/proc/self/fd/N/name`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["reachable"]

_MAX_ADDRESS = 100  # sun_path holds 108 bytes with the terminating NUL; keep a margin


@contextmanager
def reachable(path: Path) -> Iterator[str]:
    """An address for `path` to bind or connect to while the block runs."""
    if len(os.fsencode(path)) <= _MAX_ADDRESS:
        yield str(path)
        return
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{directory}/{path.name}"
    finally:
        os.close(directory)
