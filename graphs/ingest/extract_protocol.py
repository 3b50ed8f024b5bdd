"""What the extraction pool and its worker processes both know of their pipe protocol.

A module of its own so that the pool (in the bot's process) never imports the worker,
whose extractor loads the parsers (see `graphs.ingest.extract_worker` for the protocol).
"""

from __future__ import annotations

from typing import Final

__all__ = ["READY"]

READY: Final = b"READY"
"""What a worker writes once, when it is ready for its first job."""
