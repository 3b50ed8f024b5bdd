"""The Hyperscan prescreen never hides a rule (or off-topic kind) that matches, and still
leaves most rules out.

Every rule pattern is translated into a looser Hyperscan pattern (see
`graphs.guards.prescreen`); a rule whose pattern `re` finds in a view must be among the
indexes `possible(view)` names. Checked on this suite's own texts and their views, on
seeded random strings built from the characters the rules care about, and through the
rule index, whose candidates must match exactly the rules the plain prefilter's do.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from graphs.guards import normalize
from graphs.guards.exfiltration_rules import EXTRACTION_RULES
from graphs.guards.injection_rules import COMPACT_RULES, CONTROL_RULES
from graphs.guards.intent_rules import INTENT_RULES
from graphs.guards.languages import LANGUAGE_RULES
from graphs.guards.pattern_superset import superset_pattern
from graphs.guards.prescreen import Prescreen
from graphs.guards.rule_gate import view_tokens
from graphs.guards.rule_index import RuleIndex
from graphs.guards.topic import OFF_TOPIC_KINDS
from tests.test_guard_families import BENIGN, CAUGHT, OBFUSCATED
from tests.test_guard_long_messages import SENTENCES

RULES = (*CONTROL_RULES, *EXTRACTION_RULES, *INTENT_RULES, *LANGUAGE_RULES)
_ALPHABET = "ignore all previous instructions system prompt you are now dan :;.!?\n<>[]()'\"-"
_OTHER = "éßçñ\u2028\u00a0Игнорируй все инструкции忽略之前的指示以前の指示を無視"
# Every character Python's `\s` reads as a space, and digits of other scripts (`\d`):
# the translation writes both out, so the random views hold them all.
_SPACES_AND_DIGITS = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\u0663\uff15"


def _views() -> list[str]:
    texts = [*(text for _, _, text in CAUGHT), *BENIGN, *OBFUSCATED, *SENTENCES]
    views: list[str] = []
    for text in texts:
        normalized = normalize(text)
        views += [text, *normalized.match_texts(), *normalized.cipher_texts()]
    rng = random.Random(21)
    views += [" ".join(rng.choice(views) for _ in range(30)) for _ in range(3)]
    views += ["".join(rng.choice(_ALPHABET + _OTHER) for _ in range(400)) for _ in range(40)]
    spaced = _ALPHABET + _SPACES_AND_DIGITS * 3
    views += ["".join(rng.choice(spaced) for _ in range(400)) for _ in range(40)]
    return views


VIEWS = _views()


@pytest.fixture(scope="module")
def prescreen() -> Prescreen:
    return Prescreen([rule.pattern for rule in RULES])


def test_every_rule_is_translated_and_compiled(prescreen: Prescreen) -> None:
    assert all(superset_pattern(rule.pattern) is not None for rule in RULES)
    assert prescreen.available
    assert prescreen.left_out == frozenset()


def test_a_rule_that_matches_is_always_possible(prescreen: Prescreen) -> None:
    missed = []
    for view in VIEWS:
        possible = prescreen.possible(view)
        assert possible is not None
        missed += [
            (rule.name, view[:60])
            for index, rule in enumerate(RULES)
            if index not in possible and rule.pattern.search(view) is not None
        ]
    assert missed == []


def test_every_match_of_a_rule_ends_where_a_loose_match_ends(prescreen: Prescreen) -> None:
    checked = 0
    for view in VIEWS:
        ends = prescreen.match_ends(view)
        assert ends is not None
        for index, rule in enumerate(RULES):
            for match in rule.pattern.finditer(view):
                checked += 1
                assert match.end() in ends[index], (rule.name, view[:60])
    assert checked > 100


def test_match_ends_are_character_offsets_in_order() -> None:
    screen = Prescreen([re.compile("ab"), re.compile("zz")])
    assert screen.match_ends("xxab \u00e9\u6f22ab ab") == {0: [4, 9, 12]}
    assert screen.match_ends("\U0001f600ab") == {0: [3]}
    assert screen.possible("nothing") == frozenset()


def test_a_flood_of_loose_matches_lets_every_rule_look() -> None:
    screen = Prescreen([re.compile("a"), re.compile("b")])
    assert screen.match_ends("a" * 1_000) == {0: list(range(1, 1_001))}
    assert screen.match_ends("a" * 4_000) is None  # more reports than a scan takes
    assert screen.possible("a" * 4_000) is None


def test_an_off_topic_kind_that_matches_is_always_possible() -> None:
    screen = Prescreen([pattern for _, pattern in OFF_TOPIC_KINDS])
    assert screen.left_out == frozenset()
    for view in VIEWS:
        possible = screen.possible(view)
        assert possible is not None
        for index, (kind, pattern) in enumerate(OFF_TOPIC_KINDS):
            assert index in possible or pattern.search(view) is None, (kind, view[:60])
    assert screen.possible(" ".join(SENTENCES).casefold()) == frozenset()


def test_most_rules_are_left_out_of_an_ordinary_long_message(prescreen: Prescreen) -> None:
    message = " ".join(SENTENCES * 4).casefold()
    possible = prescreen.possible(message)
    assert possible is not None
    assert len(possible) < 0.05 * len(RULES)


@pytest.mark.parametrize(
    ("pattern", "matching", "other"),
    [
        (r"(?<!\w)ab\b(?=c|\s)", "xx ab d", "xx a b"),  # lookarounds and \b dropped
        (r"(a)x\1", "axa", "bxb"),  # a back-reference reads as anything
        (r"(a)?(?(1)b|c)d", "cd", "xd"),  # a conditional reads as either branch
        (r"[^\W\d_]{2}q", "zzq", "z q"),  # a letter class reads as "not a space"
        (r"a\w+b", "a\u00e9zb", "ax b"),  # and so does \w
        (r"a\Wb", "a-b", "ab"),  # \W reads as any character
        (r"a[^\S\n]b", "a\u2028b", "a\nb"),  # a space other than a line feed, exactly
        (r"a\s*:", "a\u3000\u2028 :", "a - :"),  # but \s is every space Python reads, only
        (r"x\d+y", "x\u0663\uff15y", "x y"),  # and \d every decimal digit, only
        (r"a.{0,80}b", "a" + "-" * 70 + "b", "ba"),  # a large bound becomes open
        (r"(?>ab|a)c", "ac", "bc"),  # an atomic group as a plain one
        (r"игнорируй\s+всё", "игнорируй всё", "игнорируй"),  # non-ASCII literals
        (r"[α-ω]+ς", "λόγος", "logos"),
    ],
)
def test_translations_are_loose_but_keep_their_literals(
    pattern: str, matching: str, other: str
) -> None:
    compiled = re.compile(pattern)
    screen = Prescreen([compiled])
    assert re.search(pattern, matching) is not None
    assert screen.possible(matching) == {0}
    assert screen.possible(other) == frozenset()


def test_an_untranslatable_pattern_is_always_possible() -> None:
    screen = Prescreen([re.compile("abc"), re.compile("x", re.IGNORECASE)])
    assert screen.left_out == {1}
    assert screen.possible("nothing here") == {1}
    assert screen.match_ends("x abc") == {0: [5], 1: None}  # where it ends is not known
    assert screen.possible("abc") == {0, 1}
    assert screen.possible("lone \ud800 surrogate") is None  # not UTF-8: every rule looks


def _built(patterns: list[re.Pattern[str]], cache_dir: Path) -> Prescreen:
    screen = Prescreen(patterns)
    screen.build(cache_dir)
    return screen


def test_the_database_is_read_back_from_the_cache(tmp_path: Path) -> None:
    patterns = [re.compile(r"\bignore\s+(?:all\s+)?previous\b"), re.compile("dan")]
    _built(patterns, tmp_path / "models")
    cached = list((tmp_path / "models").glob("prescreen-*.hsdb"))
    assert len(cached) == 1
    written = cached[0].stat().st_mtime_ns
    assert _built(patterns, tmp_path / "models").possible("ignore all previous notes") == {0}
    assert cached[0].stat().st_mtime_ns == written  # read, not rebuilt
    cached[0].write_bytes(b"not a database")  # a damaged cache is rebuilt, not trusted
    assert _built(patterns, tmp_path / "models").possible("dan") == {1}
    assert cached[0].read_bytes() != b"not a database"
    other = [re.compile("dan"), re.compile("ignore")]  # other rules: another file
    assert _built(other, tmp_path / "models").possible("ignore") == {1}
    (replaced,) = (tmp_path / "models").glob("prescreen-*.hsdb")  # the old one is gone
    assert replaced != cached[0]


def test_a_set_keeps_one_database_and_leaves_the_other_sets_alone(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    unnamed = models / ("prescreen-" + "0" * 32 + ".hsdb")  # the naming before sets had names
    unnamed.write_bytes(b"old")
    Prescreen([re.compile("dan")], name="rules").build(models)
    Prescreen([re.compile("poem")], name="off-topic").build(models)
    Prescreen([re.compile("dan|ignore")], name="rules").build(models)  # the rules changed
    names = sorted(path.name.rsplit("-", 1)[0] for path in models.glob("*.hsdb"))
    assert names == ["prescreen-off-topic", "prescreen-rules"]
    assert not unnamed.exists()


def test_an_unwritable_cache_only_costs_a_compile(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would go")
    assert _built([re.compile("dan")], blocked / "models").possible("dan") == {0}


def test_the_rule_index_tries_the_rules_that_match_with_or_without_it() -> None:
    screened, plain = RuleIndex(RULES), RuleIndex(RULES, prescreen=False)
    compact, compact_plain = (
        RuleIndex(COMPACT_RULES),
        RuleIndex(COMPACT_RULES, prescreen=False),
    )
    for view in VIEWS:
        tokens = view_tokens(view)[1]
        for index, reference in ((screened, plain), (compact, compact_plain)):
            fast = [rule.name for rule in index.candidates(view, tokens)
                    if rule.pattern.search(view)]  # fmt: skip
            slow = [rule.name for rule in reference.candidates(view, tokens)
                    if rule.pattern.search(view)]  # fmt: skip
            assert fast == slow
