"""Recognise requests that are clearly not for a knowledge-base assistant.

Lore answers questions from saved documents and notes, so a question on any subject is
on topic ("what is the capital of France?" may well be answered by a stored page). Only
requests for something the assistant does not do are refused: creative writing (poems,
stories, jokes), doing someone's homework or essays, generating images, questions about
the assistant's own tastes ("what's your favourite movie?"), and role-play or games.

The patterns are deliberately narrow, because a false refusal costs more than a miss:
each needs an imperative or a direct request at the start of a sentence ("write me a
poem", "can you draw a picture"), so mentions ("who wrote the poem ...", "which movie
won ...") pass. Anything unmatched is on topic; the answer step still refuses when no
stored source supports an answer.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Final

from graphs.guards.match_starts import finditer_from, match_starts
from graphs.guards.normalize import NormalizedText, normalize
from graphs.guards.prescreen import Prescreen
from graphs.guards.rule import MAX_REACH, match_width
from graphs.guards.rule_gate import gate_passes, gate_words, search_near, view_tokens, word_gate

__all__ = ["AT_SENTENCE_START", "OFF_TOPIC_KINDS", "off_topic_kind", "prepare_topics"]

_REQUEST = (
    r"(?:^|[.!?]\s+)(?:(?:hey|hi|hello|ok|okay|so|now|and|also|please|pls|lore)[,!]?\s+)*"
    r"(?:(?:can|could|would|will) you(?: please)?\s+|please\s+|i (?:want|need|would like) you to\s+"
    r"|i'?d like you to\s+|help me\s+|go ahead and\s+)?"
)
_CREATIVE_NOUN = (
    r"(?:poem|haiku|limerick|sonnet|ballad|ode|song|rap|lyrics|verse|story|short story|tale"
    r"|fairy ?tale|bedtime story|fable|novel|screenplay|script for a (?:movie|play|film)|play"
    r"|joke|pun|riddle|pick-?up line|love letter)"
)

OFF_TOPIC_KINDS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "creative_writing",
        re.compile(
            _REQUEST + r"(?:write|compose|make up|create|generate|come up with|sing)\s+(?:me\s+"
            r"|us\s+)?(?:a|an|another|some|one|\d+)\s+(?:(?:short|long|funny|sad|silly|cute|little"
            r"|rhyming|romantic|epic|original|new|good|dad)\s+)*" + _CREATIVE_NOUN + r"s?\b"
            r"|" + _REQUEST + r"(?:tell|give)\s+(?:me|us)\s+(?:a|an|another|some|one)\s+(?:(?:short"
            r"|funny|silly|good|dad|bad)\s+)*(?:jokes?|puns?|riddles?|pick-?up lines?"
            r"|bedtime stor(?:y|ies)|limericks?|poems?)\b"
            # A request framed as verse: "In the form of a poem, give me a recipe".
            r"|" + _REQUEST + r"(?:in the form of|in the style of|as|in) an? (?:poem|haiku|limerick"
            r"|sonnet|ballad|song|rap)\s*[,:]"
            r"|" + _REQUEST + r"(?:write|give|provide|explain|tell|describe|answer|summari[sz]e"
            r"|list|present)\b[^.!?]{0,80}\b(?:in the form of|as) an? (?:poem|haiku|limerick"
            r"|sonnet|ballad|rap)\b"
        ),
    ),
    (
        "homework",
        re.compile(
            _REQUEST + r"(?:write|do|finish|complete|solve|answer)\s+(?:me\s+)?(?:my|our)\s+"
            r"(?:\w+\s+){0,2}?(?:homework|essay|assignment|term paper|thesis|dissertation"
            r"|coursework|exam|worksheet|problem set)\b"
            r"|" + _REQUEST + r"write\s+(?:me\s+)?(?:an?\s+)?(?:\d+[- ](?:word|page|paragraph)\s+)?"
            r"(?:essay|term paper|book report|school report)\b"
        ),
    ),
    (
        "image_generation",
        re.compile(
            _REQUEST + r"(?:generate|create|draw|make|paint|render|sketch|design|produce)\s+"
            r"(?:me\s+|us\s+)?(?:a|an|some|the)?\s*(?:(?:\w+\s+){0,2}?)(?:picture|image|photo"
            r"|photograph|drawing|painting|illustration|portrait|avatar|wallpaper|artwork|meme"
            r"|cartoon|anime art)s?(?:\s+(?:of|for|showing|with|depicting|that)\b|\s*[.!?]*$)"
        ),
    ),
    (
        "assistant_preferences",
        re.compile(
            r"\bwhat(?:'s| is| are)\s+your\s+(?:all[- ]time\s+|personal\s+)?(?:favou?rite|fave"
            r"|preferred)\s+(?:\w+\s+)?(?:movies?|films?|books?|songs?|colou?rs?|foods?|bands?"
            r"|games?|shows?|animals?|sports?|teams?|music|artists?|singers?|actors?|actress(?:es)?"
            r"|dish(?:es)?|drinks?|places?|cit(?:y|ies)|season|number|pokemon|snacks?)\b"
            r"|\bdo you have (?:a )?(?:favou?rite|crush|girlfriend|boyfriend|feelings)\b"
            r"|\bare you (?:single|in love|married)\b"
        ),
    ),
    (
        "role_play",
        re.compile(
            r"\b(?:let'?s|can we|could we|wanna|want to|shall we)\s+(?:do\s+|play\s+|have\s+)?"
            r"(?:a\s+|some\s+)?(?:role-?play|rp|pretend game|make-believe)\b"
            r"|\brole-?play (?:as|with me)\b"
            r"|" + _REQUEST + r"(?:pretend|act like|act as if)\s+(?:to be|you(?:'re| are))\s+my\s+"
            r"(?:girlfriend|boyfriend|wife|husband|partner|friend|mom|mother|dad|father|lover|crush"
            r"|therapist|date)\b"
            r"|\bbe my (?:girlfriend|boyfriend|wife|husband|lover|date)\b"
            r"|\blet'?s play (?:a game|truth or dare|20 questions|twenty questions"
            r"|tic[- ]tac[- ]toe|chess|hangman|would you rather)\b"
        ),
    ),
)


_GATES: Final = tuple(word_gate(pattern) for _, pattern in OFF_TOPIC_KINDS)
_WORDS: Final = tuple(gate_words(gate) for gate in _GATES)
_REACH: Final = tuple(min(MAX_REACH, match_width(pattern)) + 24 for _, pattern in OFF_TOPIC_KINDS)
_SHORT: Final = 600
_STARTS: Final = {
    pattern: starts
    for _, pattern in OFF_TOPIC_KINDS
    if (starts := match_starts(pattern)) is not None
}
# Every top-level branch of these kinds' patterns begins with `_REQUEST`, whose first item
# is the start of the text or a ".", "!" or "?": each match starts at one of those places,
# so a long text is only tried there (about one place per sentence).
AT_SENTENCE_START: Final = frozenset({"creative_writing", "homework", "image_generation"})
_SENTENCE_MARK: Final = re.compile(r"[.!?]")


# One Hyperscan pass names the kinds whose pattern could match (see `prescreen`).
_PRESCREEN: Final = Prescreen([pattern for _, pattern in OFF_TOPIC_KINDS], name="off-topic")


def prepare_topics(cache_dir: Path | None = None) -> None:
    """Build the kinds' prescreen now, or read it from `cache_dir` (see `prescreen`)."""
    _PRESCREEN.build(cache_dir)


def off_topic_kind(text: str | NormalizedText) -> str | None:
    """The kind of clearly off-topic request `text` makes, or None when it is on topic."""
    folded = (normalize(text) if isinstance(text, str) else text).folded
    tokens = view_tokens(folded)[1]
    possible = _PRESCREEN.possible(folded)
    for index, ((kind, pattern), gate, words, reach) in enumerate(
        zip(OFF_TOPIC_KINDS, _GATES, _WORDS, _REACH, strict=True)
    ):
        if possible is not None and index not in possible:
            continue
        # The word gate (words every match must contain) spares most texts the regex.
        if gate_passes(gate, tokens) and _found(
            kind, pattern, folded, tokens=tokens, words=words, reach=reach
        ):
            return kind
    return None


def _found(
    kind: str,
    pattern: re.Pattern[str],
    folded: str,
    *,
    tokens: frozenset[str],
    words: frozenset[str],
    reach: int,
) -> bool:
    """Whether `pattern` matches `folded`; a long text is only read at sentence starts (see
    `AT_SENTENCE_START`) or near the gate's words."""
    if len(folded) <= _SHORT or (not words and kind not in AT_SENTENCE_START):
        return _search(pattern, folded) is not None
    if kind in AT_SENTENCE_START:
        return any(pattern.match(folded, start) for start in _sentence_starts(folded))
    return search_near(pattern, folded, words & tokens, reach) is not None


def _search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """`pattern.search(text)`, tried only where a match can start (see `match_starts`)."""
    return next(finditer_from(pattern, _STARTS.get(pattern), text, 0, len(text)), None)


@lru_cache(maxsize=8)
def _sentence_starts(text: str) -> tuple[int, ...]:
    """Where a match of a `_REQUEST` pattern can start: 0 and every ".", "!" or "?"."""
    return (0, *(mark.start() for mark in _SENTENCE_MARK.finditer(text)))
