"""Cheap tests of a view's shape, read off its tokens: a word spaced letter by letter or a long
run of letters with the spaces squeezed out (then the compact rules read it), and a token
repeated 20 times in a row (then the flooding rules may)."""

from __future__ import annotations

import itertools
import operator
import re
from functools import lru_cache
from typing import Final

from graphs.guards.rule_gate import view_tokens

__all__ = ["letter_spaced", "may_flood"]

_FLOOD_REPEATS: Final = 19
# Twenty token lengths in a row alike (bytes, one per token: see `_token_lengths`).
_SAME_LENGTH_RUN: Final = re.compile(rb"(.)\1{%d}" % _FLOOD_REPEATS, re.DOTALL)

# Letter-by-letter spacing ("i.g.n.o.r.e") or a run of letters with the spaces removed;
# `_TWO_SPACED` is a cheap necessary condition of the first (its 2nd to 4th letters).
_SPACED_LETTERS = re.compile(r"(?:(?<![^\W\d_])[^\W\d_](?![^\W\d_])\W{1,3}){4,}")
_TWO_SPACED = re.compile(r"(?:\W|^)[^\W\d_]\W{1,3}[^\W\d_]\W")
_LETTER_RUN = re.compile(r"[a-z]{24,}")


@lru_cache(maxsize=16)
def letter_spaced(view: str) -> bool:
    """Whether `view` spaces a word letter by letter, or runs 24 letters together.

    Cheap necessary conditions first, read off the lengths of the view's (cached) `\\w+`
    tokens: four spaced letters hold three neighbouring one-letter tokens, and a run of 24
    letters lies inside one token of 24 characters or more."""
    lengths = _token_lengths(view)
    if (
        b"\x01\x01\x01" in lengths
        and _three_single_letters(view_tokens(view)[0])
        and _TWO_SPACED.search(view) is not None
        and _SPACED_LETTERS.search(view) is not None
    ):
        return True
    return max(lengths, default=0) >= 24 and _LETTER_RUN.search(view) is not None


@lru_cache(maxsize=16)
def _token_lengths(view: str) -> bytes:
    """The length of each of the view's `\\w+` tokens as one byte (255 for 255 or more),
    counted in C."""
    tokens = view_tokens(view)[0]
    try:
        return bytes(map(len, tokens))
    except ValueError:  # a token of 256 characters or more
        return bytes(min(255, len(token)) for token in tokens)


def _three_single_letters(tokens: list[str]) -> bool:
    """Whether three tokens in a row are each one letter (`[^\\W\\d_]`)."""
    run = 0
    for word in tokens:
        if len(word) == 1 and word != "_" and not word.isdecimal():
            run += 1
            if run == 3:
                return True
        else:
            run = 0
    return False


def may_flood(view: str) -> bool:
    """Whether the same token could run 20 times in a row (the flooding rules' shape):
    20 tokens of one length in a row, and at least `_FLOOD_REPEATS` neighbouring tokens
    equal."""
    if _SAME_LENGTH_RUN.search(_token_lengths(view)) is None:
        return False
    tokens = view_tokens(view)[0]
    repeats: int = sum(map(operator.eq, tokens, itertools.islice(tokens, 1, None)))
    return repeats >= _FLOOD_REPEATS
