"""Which embedding model made the stored vectors: `DATA_DIR/vector-index.json`.

Vectors from two models do not compare, so the identity of the model that made them
(its registry key, the SHA-256 of its weights, its dimension) is stored beside the
collections, with the chunk settings the chunks were cut with and the scheme the lexical
vectors were made with (`storage.lexical`; a file written before there was a choice says
none, which means `english`, and Lore keeps making such vectors until `lore reindex --all`).
At every start Lore compares it with the model it loaded and refuses to run on vectors
from another model (`ModelChangedError`, one line naming both and the command that fixes
it, `lore reindex --all`). That command rebuilds every vector and writes the file last,
so a rebuild cut short is still refused at the next start. The file is replaced atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from storage.lexical import LEGACY_LEXICAL_SCHEME, LEXICAL_SCHEMES, LexicalScheme

__all__ = [
    "IDENTITY_FILE",
    "IndexIdentity",
    "IndexIdentityError",
    "ModelChangedError",
    "check_identity",
    "read_identity",
    "write_identity",
]

IDENTITY_FILE = "vector-index.json"
_FORMAT = 1


class IndexIdentityError(Exception):
    """The identity file exists but cannot be read."""


class ModelChangedError(Exception):
    """The stored vectors were made by another embedding model than the one loaded."""


@dataclass(frozen=True, slots=True)
class IndexIdentity:
    """The embedding model and chunk settings behind the stored vectors."""

    model: str
    model_sha256: str
    dimension: int
    chunk_tokens: int
    chunk_overlap_tokens: int
    lexical: LexicalScheme = LEGACY_LEXICAL_SCHEME

    def same_model(self, other: IndexIdentity) -> bool:
        """Whether vectors made with `other` compare with vectors made with this."""
        return (self.model, self.model_sha256, self.dimension) == (
            other.model,
            other.model_sha256,
            other.dimension,
        )

    def same_chunks(self, other: IndexIdentity) -> bool:
        """Whether chunks cut with `other`'s settings would be cut the same way."""
        return (self.chunk_tokens, self.chunk_overlap_tokens) == (
            other.chunk_tokens,
            other.chunk_overlap_tokens,
        )


def read_identity(data_dir: Path) -> IndexIdentity | None:
    """The stored identity, or None when no vectors were ever recorded."""
    path = data_dir / IDENTITY_FILE
    try:
        raw = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexIdentityError(f"{path} cannot be read: {exc}") from exc
    try:
        if raw["format"] != _FORMAT:
            raise IndexIdentityError(f"{path} has format {raw['format']!r}, not {_FORMAT}")
        return IndexIdentity(
            model=str(raw["model"]),
            model_sha256=str(raw["model_sha256"]),
            dimension=int(raw["dimension"]),
            chunk_tokens=int(raw["chunk_tokens"]),
            chunk_overlap_tokens=int(raw["chunk_overlap_tokens"]),
            lexical=_lexical(raw.get("lexical", LEGACY_LEXICAL_SCHEME)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise IndexIdentityError(f"{path} is not a vector index identity: {exc}") from exc


def _lexical(value: object) -> LexicalScheme:
    for scheme in LEXICAL_SCHEMES:
        if value == scheme:
            return scheme
    raise ValueError(f"unknown lexical scheme {value!r}")


def write_identity(data_dir: Path, identity: IndexIdentity) -> None:
    """Replace the stored identity atomically (a crash leaves the old file or the new one)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"format": _FORMAT, **asdict(identity)}, indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{IDENTITY_FILE}.", dir=data_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(data_dir / IDENTITY_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_identity(stored: IndexIdentity, current: IndexIdentity) -> None:
    """Raise `ModelChangedError` unless the stored vectors come from the current model."""
    if stored.same_model(current):
        return
    if stored.model == current.model:
        made_by = f"another build of {stored.model} (SHA-256 {stored.model_sha256[:12]}…)"
    else:
        made_by = stored.model
    raise ModelChangedError(
        f"The stored vectors were made by the embedding model {made_by}, but Lore now loads"
        f" {current.model}; run `lore reindex --all` to rebuild them with it"
        f" (or set EMBEDDING_MODEL back to {stored.model})."
    )
