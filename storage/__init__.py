"""Storage: SQLite (source of truth), Qdrant collections, embeddings, originals on disk."""
