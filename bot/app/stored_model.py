"""Which embedding model a start loads: the configured one, or, when EMBEDDING_MODEL is not
set and the data directory's vectors were made by another known model (an earlier
release's default), that one, so that an upgrade never stops a working bot.

`lore reindex --all` always uses the configured (or default) model: it is how a
deployment moves its vectors to a new default. A model named in EMBEDDING_MODEL is never
replaced; if the stored vectors disagree with it, the start refuses (`storage.index_identity`).
`current_identity` is what the vectors this process makes are recorded as.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.settings import Settings
from storage.index_identity import IndexIdentity, IndexIdentityError, read_identity
from storage.model_files import MODEL_CHOICES

if TYPE_CHECKING:
    from storage.embeddings import Embedder
    from storage.lexical import LexicalScheme

__all__ = ["current_identity", "with_stored_model"]

logger = logging.getLogger(__name__)


def current_identity(
    settings: Settings, embedder: Embedder, lexical: LexicalScheme
) -> IndexIdentity:
    """The identity of the vectors this process makes."""
    return IndexIdentity(
        model=embedder.model_name,
        model_sha256=embedder.model_sha256,
        dimension=embedder.dimension,
        chunk_tokens=settings.chunk_tokens,
        chunk_overlap_tokens=settings.chunk_overlap_tokens,
        lexical=lexical,
    )


def with_stored_model(
    settings: Settings, *, rebuild_vectors: bool = False, announce: bool = False
) -> Settings:
    """`settings`, with `embedding_model` set to the stored vectors' model where an
    unconfigured default would otherwise refuse them; `announce` logs the choice."""
    if rebuild_vectors or "embedding_model" in settings.model_fields_set:
        return settings
    try:
        stored = read_identity(settings.data_dir)
    except IndexIdentityError:
        return settings  # the start itself reports the broken record
    default = settings.embedding_model
    if stored is None or stored.model == default or stored.model not in MODEL_CHOICES:
        return settings
    if announce:
        logger.info(
            "The stored vectors were made by the embedding model %s; Lore keeps using it."
            " `lore reindex --all` moves them to the default, %s",
            stored.model,
            default,
        )
    return settings.model_copy(update={"embedding_model": stored.model})
