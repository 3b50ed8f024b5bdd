"""Secret codes as stored: their SHA-256, never the code itself (invite codes, link codes, MCP
tokens). A database or a backup alone then yields no code anybody can use; the code is shown
once, to the person it was made for. Stored hashes are compared in constant time."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["code_hash", "same_hash"]


def code_hash(code: str) -> str:
    """The SHA-256 (hex) a code is stored as."""
    return hashlib.sha256(code.encode()).hexdigest()


def same_hash(code: str, stored: str) -> bool:
    """Whether `code` is the code stored as `stored`, compared in constant time."""
    return hmac.compare_digest(code_hash(code), stored)
