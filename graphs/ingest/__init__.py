"""The ingest graph: route, fetch, clean, chunk, embed and store a source; the re-index job."""
