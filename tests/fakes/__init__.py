"""Fakes at the process boundary: real servers on 127.0.0.1."""
