"""The words prompt injections are written with, read back when disguised: a scrambled
keyword restored (the typoglycemia trick: "ignroe all prevoius instructions" -> "ignore all
previous instructions", same first and last letter, same inner letters, at most one letter
dropped or doubled), and the words a ROT13 or reversed reading of a text spells when it
hides one of them."""

from __future__ import annotations

import codecs
import re
from functools import lru_cache
from typing import Final

from graphs.guards.rule_gate import view_tokens

__all__ = ["PLAIN_TOKENS", "REVERSED_WORDS", "ROT13_WORDS", "typo_fold"]

_LONG_WORD = re.compile(r"[a-z]{5,}")

_KEYWORDS: Final = (
    "ignore", "disregard", "forget", "previous", "instructions", "instruction", "reveal",
    "system", "prompt", "bypass", "override", "safety", "security", "measures", "settings",
    "immediately", "delete", "restrictions", "guidelines", "directives", "password",
    "developer", "jailbreak", "everything", "above", "filters", "confidential", "secrets",
)  # fmt: skip


def _signatures(word: str) -> set[tuple[str, str, frozenset[str]]]:
    inner = word[1:-1]
    variants = {frozenset(inner)} | {frozenset(inner.replace(c, "", 1)) for c in set(inner)}
    return {(word[0], word[-1], variant) for variant in variants}


_KEYWORD_SET: Final = frozenset(_KEYWORDS)
_CIPHER_WORDS: Final = frozenset(
    (*_KEYWORDS, "dan", "pwned", "jailbroken", "unrestricted", "unfiltered", "uncensored", "mode",
     "rules", "guidelines", "directives", "admin", "tools", "secret", "secrets", "api", "key")
)  # fmt: skip

# The cipher words as they appear in the leet view when a ROT13 or reversed reading of it
# spells them.
ROT13_WORDS: Final = frozenset(codecs.encode(word, "rot13") for word in _CIPHER_WORDS)
REVERSED_WORDS: Final = frozenset(word[::-1] for word in _CIPHER_WORDS)

_TYPO_INDEX: Final[dict[tuple[str, str, frozenset[str]], str]] = {
    signature: keyword for keyword in _KEYWORDS for signature in _signatures(keyword)
}


def typo_fold(text: str, tokens: frozenset[str] | None = None) -> str:
    # Most texts hold no scrambled keyword: look each distinct word up once, and rewrite
    # the text only when one of them is. Every run of `_LONG_WORD` lies inside one `\w+`
    # token, so the view's (cached) distinct tokens give the same words as a findall.
    # Tokens already seen to hold none are remembered, so ordinary words cost one set
    # difference. `tokens` may be a superset of the text's: a rewrite then changes only
    # what is really scrambled, and gives the text back when nothing is.
    unseen = (view_tokens(text)[1] if tokens is None else tokens) - PLAIN_TOKENS
    if any(map(_scrambled, unseen)):
        return _LONG_WORD.sub(_restore_keyword, text)
    short = [token for token in unseen if len(token) <= _MAX_REMEMBERED]
    if len(PLAIN_TOKENS) + len(short) > _MAX_PLAIN_TOKENS:
        PLAIN_TOKENS.clear()
    PLAIN_TOKENS.update(short)
    return text


# Tokens known to hold no scrambled keyword (see `typo_fold`); cleared when full. Only
# word-sized ones are kept, so the set stays a few megabytes whatever is sent.
PLAIN_TOKENS: Final[set[str]] = set()
_MAX_PLAIN_TOKENS: Final = 1 << 16
_MAX_REMEMBERED: Final = 40


def _scrambled(token: str) -> bool:
    """Whether a `_LONG_WORD` run inside `token` is a scrambled keyword."""
    if len(token) < 5:
        return False
    if token.isascii() and token.isalpha() and token.islower():
        words = {token}
    else:
        words = set(_LONG_WORD.findall(token))
    return any(
        _restored(word) != word for word in words - _KEYWORD_SET if len(word) <= _LONGEST_TYPO
    )


# A scrambled keyword is at most one letter longer than the keyword (see `_restored`), so
# longer words are never looked up (nor remembered).
_LONGEST_TYPO: Final = max(map(len, _KEYWORDS)) + 1


@lru_cache(maxsize=1 << 16)
def _restored(word: str) -> str:
    keyword = _TYPO_INDEX.get((word[0], word[-1], frozenset(word[1:-1])))
    if keyword is None or abs(len(keyword) - len(word)) > 1:
        return word
    return keyword


def _restore_keyword(match: re.Match[str]) -> str:
    word = match.group()
    return _restored(word) if len(word) <= _LONGEST_TYPO else word
