"""Scheduled jobs (digests, memory, repair) that call the Bot service."""
