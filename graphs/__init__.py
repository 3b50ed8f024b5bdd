"""Graphs: the ingest graph, retrieval, and (soon) the agent graph. Imports storage only."""
