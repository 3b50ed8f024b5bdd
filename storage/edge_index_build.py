"""Build the HNSW index of a closed copy of a shard, in a process of its own.

qdrant-edge's `optimize()` holds the GIL for the whole index build (tens of seconds at
20k points), so run in Lore's process it would stop the event loop. `EdgeVectorStore`
copies the flushed shard directory, runs this module on the copy as a child process,
keeps serving searches (exact, on the live shard) and writes meanwhile, then brings the
copy up to date and swaps it in. The collection's spec comes as JSON on the command line:

    python -m storage.edge_index_build SHARD_DIR SPEC_JSON

Exit status 0 means the copy is optimised, flushed and closed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import qdrant_edge as qe

from storage.edge_requests import edge_config, spec_from_json

__all__ = ["build_index", "main"]


def build_index(shard_dir: Path, spec_json: str) -> int:
    """Open the copy, build its indexes, flush and close it; the number of indexed vectors."""
    engine = qe.EdgeShard.load(str(shard_dir), edge_config(spec_from_json(spec_json)))
    try:
        engine.optimize()
        indexed: int = engine.info().indexed_vectors_count
        engine.flush()
    finally:
        engine.close()
    return indexed


def main(argv: list[str]) -> int:
    shard_dir, spec_json = argv
    indexed = build_index(Path(shard_dir), spec_json)
    sys.stdout.write(json.dumps({"indexed_vectors": indexed}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
