"""A weighted rule of the injection guard: its regex, weight, prefilter words and needles,
and how far a match can reach (so a long message is read only near the rule's words).

Every rule family (`injection_rules`, `exfiltration_rules`, `intent_rules`, `languages`)
is made of these; `make_rule` builds one and works its reach out from the regex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parser  # type: ignore[attr-defined]
from typing import Any, Final

__all__ = ["MAX_REACH", "Rule", "make_rule", "match_width"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One weighted pattern; `dampened` rules weigh less in a how/why question.

    The prefilter: `pattern` can only match if the text holds one of `words` (whole
    `\\w+` tokens) or one of `needles` (substrings); with neither, the pattern always runs.
    `reach` bounds how long a match can be (see `match_width`), so a long text is only
    searched that far either side of a prefilter hit.
    """

    name: str
    weight: float
    pattern: re.Pattern[str]
    words: frozenset[str]
    needles: tuple[str, ...]
    dampened: bool = True
    reach: int = 0


def make_rule(
    name: str,
    weight: float,
    pattern: str,
    words: str = "",
    needles: tuple[str, ...] = (),
    *,
    dampened: bool = True,
) -> Rule:
    """A `Rule` with its pattern compiled; `words` is a space-separated prefilter list."""
    compiled = re.compile(pattern)
    return Rule(
        name,
        weight,
        compiled,
        frozenset(words.split()),
        needles,
        dampened,
        min(MAX_REACH, match_width(compiled)),
    )


# An unbounded repeat (`\\w+`, `.*`) counts as this many (whitespace as one: views have it
# collapsed); words longer than this are not what the rules look for.
_UNBOUNDED: Final = 40
MAX_REACH: Final = 450
_ONE_CHAR: Final = frozenset(
    {sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.ANY, sre_constants.IN}
)
_REPEATS: Final = frozenset(
    {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}
)


def match_width(pattern: re.Pattern[str]) -> int:
    """The longest match `pattern` can make, counting an unbounded repeat as `_UNBOUNDED`."""
    return _width(sre_parser.parse(pattern.pattern, pattern.flags))


def _is_whitespace(items: Any) -> bool:
    members = list(items)
    if len(members) != 1:
        return False
    op, argument = members[0]
    if op is sre_constants.LITERAL:
        return chr(argument).isspace()
    return op is sre_constants.IN and list(argument) == [
        (sre_constants.CATEGORY, sre_constants.CATEGORY_SPACE)
    ]


def _width(items: Any) -> int:
    total = 0
    for op, argument in items:
        if op in _ONE_CHAR:
            total += 1
        elif op in _REPEATS:
            _low, high, inner = argument
            if high == sre_constants.MAXREPEAT:
                # Whitespace is collapsed to single spaces in every view the rules read.
                high = 1 if _is_whitespace(inner) else _UNBOUNDED
            total += high * _width(inner)
        elif op is sre_constants.SUBPATTERN:
            total += _width(argument[-1])
        elif op is sre_constants.ATOMIC_GROUP:
            total += _width(argument)
        elif op is sre_constants.BRANCH:
            total += max(_width(branch) for branch in argument[1])
        elif op is sre_constants.GROUPREF_EXISTS:
            total += max(_width(argument[1]), _width(argument[2]) if argument[2] else 0)
        elif op is sre_constants.GROUPREF:
            total += MAX_REACH
        # AT, ASSERT, ASSERT_NOT and the like consume nothing.
    return total
