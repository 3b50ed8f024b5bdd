"""The shortcuts that make a long check cheap give exactly what the plain computation gives:
matches tried only where a rule's prefixes occur (phrase rules, off-topic requests, card
digit runs), leetspeak read off its few characters, spaced words looked for near a hint,
the encoded-run, markup and IBAN pre-tests and the scorer's batched windows.
Each is compared with the straightforward form on this file's own texts and on seeded
random strings built from the characters that matter."""

from __future__ import annotations

import codecs
import random
import re
import sys

import numpy as np
import pytest

from graphs.guards import normalize
from graphs.guards.classifier import WINDOW, load_model
from graphs.guards.encoded_runs import _BIT_MARKS, _HEX_MARKS, _base64_runs, _has_stretch
from graphs.guards.exfiltration_rules import FLOODING_RULE, NUMBER_FLOODING_RULE
from graphs.guards.ibans import _IBAN_START, _iban_starts, byte_classes, find_ibans
from graphs.guards.invisible import BLANK, INVISIBLE, holds_hidden
from graphs.guards.lookalikes import _WORD, _fold_word, _may_fold, fold_lookalikes
from graphs.guards.markup import _HAS_MARKUP, _MARKDOWN_MARKS, _MARKUP_CHARS
from graphs.guards.match_starts import finditer_at, match_starts, start_positions
from graphs.guards.ngrams import code_points, ngram_buckets, row_sums
from graphs.guards.normalize import _join_spaced, _rot13, _strip_tags, leet_fold
from graphs.guards.payment import (
    _CARD_DIGITS,
    _DIGIT_RUN,
    _SEPARATOR_BYTES,
    _may_hold_card,
    find_payment_cards,
)
from graphs.guards.rule_gate import view_tokens
from graphs.guards.topic import OFF_TOPIC_KINDS, _search
from graphs.guards.unicode_table import WORD, category_points, space_points
from graphs.guards.view_shapes import may_flood
from tests.test_guard_families import BENIGN, CAUGHT, OBFUSCATED
from tests.test_guard_long_messages import ALL_RULES, SENTENCES

_TEXTS = [
    *(text for _, _, text in CAUGHT),
    *BENIGN,
    *OBFUSCATED,
    *SENTENCES,
]


def _views() -> list[str]:
    views: list[str] = []
    for text in _TEXTS:
        normalized = normalize(text)
        views += [text, normalized.folded, normalized.leet, *normalized.cipher_texts()]
    rng = random.Random(12)
    views.append(" ".join(rng.choice(views) for _ in range(40)))
    return views


VIEWS = _views()
PATTERNS = [rule.pattern for rule in ALL_RULES] + [pattern for _, pattern in OFF_TOPIC_KINDS]


def test_most_rules_have_prefixes() -> None:
    known = [match_starts(pattern) for pattern in PATTERNS]
    assert sum(starts is not None for starts in known) >= 0.9 * len(PATTERNS)


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:40])
def test_matches_tried_at_prefixes_are_the_matches_of_finditer(pattern: re.Pattern[str]) -> None:
    starts = match_starts(pattern)
    if starts is None:
        pytest.skip("no prefixes: searched as re does")
    rng = random.Random(pattern.pattern)
    for view in VIEWS:
        cuts = [(0, len(view))]
        for _ in range(2):
            first, second = sorted(rng.sample(range(len(view) + 1), 2))
            cuts.append((first, second))
        for pos, endpos in cuts:
            positions = start_positions(starts, view, pos, endpos)
            found = [m.span() for m in finditer_at(pattern, view, positions, pos, endpos)]
            assert found == [m.span() for m in pattern.finditer(view, pos, endpos)]


def test_prefixes_cover_a_start_of_text_branch_and_unknown_characters() -> None:
    starts = match_starts(re.compile(r"(?:^|\s)(?:assistant|ai)\s*:"))
    assert starts is not None
    assert starts.at_text_start
    assert (1, "assi") in starts.prefixes
    assert (1, "ai") in starts.prefixes
    assert match_starts(re.compile(r"\w*secret")) is None
    assert match_starts(re.compile(r"ignore", re.IGNORECASE)) is None


_LEET_TOKEN = re.compile(
    r"(?<![a-z0-9@$|!])(?=[0-9@$|!]*[a-z])(?=[a-z]*[0-9@$|!])[a-z0-9@$|!]*[a-z0-9@$]"
)
_LEET_TABLE = str.maketrans("0134578@$|!", "oieastbasii")


def test_leetspeak_is_read_as_the_token_pattern_reads_it() -> None:
    rng = random.Random(1)
    for _ in range(20_000):
        text = "".join(rng.choice("ab z0157@$|!  .-_x\u00e9\n") for _ in range(rng.randrange(30)))
        expected = _LEET_TOKEN.sub(lambda m: m.group().translate(_LEET_TABLE), text)
        assert leet_fold(text) == expected, text


_SPACED_WORD = re.compile(r"(?<!\S)(?:[^\W_] ){2,}[^\W_](?!\S)")


def test_letter_spaced_words_are_joined_as_the_whole_text_pattern_joins_them() -> None:
    rng = random.Random(2)
    for _ in range(20_000):
        text = "".join(rng.choice("ab 1_ .\u00e9\n\t") for _ in range(rng.randrange(30)))
        expected = _SPACED_WORD.sub(lambda m: m.group().replace(" ", ""), text)
        assert _join_spaced(text) == expected, text


def test_the_iban_pre_test_never_hides_an_iban_or_a_card_near_one() -> None:
    ibans = ["GB82 WEST 1234 5698 7654 32", "de89370400440532013000", "FR1420041010050500013M02606"]
    for iban in ibans:
        for text in (iban, f"IBAN:{iban}", f"pay to {iban}.", f"({iban})", f"7 {iban}"):
            assert find_ibans(text), text
    # A card inside an IBAN-shaped string is not a card: the pre-test must let the shape be seen.
    assert not find_payment_cards("DE89 4111 1111 1111 1111 00")


def _reference_row_sums(rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The scorer's batched windows as first written: where() over the sorted buckets."""
    from graphs.guards.ngrams import _rolling  # noqa: PLC0415 - the reference needs the hash

    buckets = np.sort(np.concatenate(_rolling(rows), axis=1).astype(np.uint32), axis=1)
    distinct = np.empty(buckets.shape, dtype=bool)
    distinct[:, :1] = True
    np.not_equal(buckets[:, 1:], buckets[:, :-1], out=distinct[:, 1:])
    sums = np.where(distinct, weights[buckets], 0.0).sum(axis=1, dtype=np.float64)
    return np.asarray(sums / np.sqrt(np.maximum(1, distinct.sum(axis=1))), dtype=np.float64)


def test_batched_windows_sum_bit_for_bit_as_the_reference() -> None:
    weights = load_model().weights
    text = normalize(" ".join(_TEXTS)).leet
    assert len(text) > 10 * WINDOW
    spread = np.linspace(0, len(text) - WINDOW, 10).round().astype(np.intp)
    rows = np.full((10, WINDOW + 2), ord(" "), dtype=np.uint64)
    rows[:, 1:-1] = code_points(text)[spread[:, None] + np.arange(WINDOW)]
    assert row_sums(rows, weights).tobytes() == _reference_row_sums(rows, weights).tobytes()
    assert ngram_buckets("ab").dtype == np.intp


def _random_texts(alphabet: str, seed: int, count: int = 5_000, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(longest))) for _ in range(count)
    ]


def test_encoded_run_pre_tests_find_what_the_patterns_find() -> None:
    hex_stretch, bits = re.compile(r"[0-9A-Fa-f :]{16}"), re.compile(r"[01]{8}")
    base64_run = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
    for text in _random_texts("0a1F: é\u00a0\n=+/Z", seed=3):
        raw = text.encode("utf-8")
        assert _has_stretch(raw, _HEX_MARKS, 16) == (hex_stretch.search(text) is not None)
        assert _has_stretch(raw, _BIT_MARKS, 8) == (bits.search(text) is not None)
        assert list(_base64_runs(text, raw)) == [m.group() for m in base64_run.finditer(text)]


def test_the_markup_pre_test_matches_where_the_class_form_does() -> None:
    class_form = re.compile(r"<[!/a-zA-Z]|-->|[*_~`]|&#?\w|%[0-9a-fA-F]{2}")
    for text in _random_texts("<!-a>*_~`&#%1f x", seed=4):
        assert (_HAS_MARKUP.search(text) is None) == (class_form.search(text) is None)


def test_lookalikes_folded_piece_by_piece_as_the_whole_text_pattern_folds_them() -> None:
    first_form = re.compile(r"[^\W\d_]*[^\W\d_\x00-\x7f][^\W\d_]*")
    alphabet = "ao p\u0430\u043e\u0440\u03bf\u1d00\u13a0\u6f22\u00e9 \n1_.\u2028"
    for text in _random_texts(alphabet, seed=10, longest=60):
        expected = first_form.sub(_fold_word, text)
        assert _WORD.sub(_fold_word, text) == expected, text
        assert fold_lookalikes(text) == expected, text
        assert fold_lookalikes(text) == expected, text  # again, from the piece cache


def test_markdown_marks_found_from_the_mark_are_those_the_look_behind_form_finds() -> None:
    first_form = re.compile(r"(?<=\w)(?:\*{1,3}|_{1,3}|~~|`+)|(?:\*{1,3}|_{1,3}|~~|`+)(?=\w)")
    for text in _random_texts("*_~`a \u00e9.1", seed=11, count=20_000, longest=16):
        expected = [m.span() for m in first_form.finditer(text)]
        assert [m.span() for m in _MARKDOWN_MARKS.finditer(text)] == expected, text


def test_every_text_the_flooding_rules_match_may_flood() -> None:
    rng = random.Random(18)
    words = ["ok", "spam", "123", "4567", "ab", "no", "x"]
    matched = 0
    for _ in range(3_000):
        parts = [rng.choice(words) for _ in range(rng.randrange(10, 60))]
        if rng.random() < 0.5:  # a run of one word, long or nearly long enough
            at = rng.randrange(len(parts))
            parts[at:at] = [rng.choice(words)] * rng.randrange(18, 24)
        text = "".join(part + rng.choice([" ", ", ", "! ", "-"]) for part in parts)
        view_tokens.cache_clear()
        if any(rule.pattern.search(text) for rule in (FLOODING_RULE, NUMBER_FLOODING_RULE)):
            matched += 1
            assert may_flood(text), text
    assert matched > 300


def test_rot13_read_as_bytes_is_the_rot13_codec() -> None:
    for text in _random_texts("aZmn \u00e9\u6f22\U0001f600\ud800.", seed=14, count=5_000):
        assert _rot13(text) == codecs.encode(text, "rot13"), repr(text)


def test_plain_native_text_skips_look_alike_folding_and_mixed_words_do_not() -> None:
    assert not _may_fold(
        "\u0433\u0434\u0435 \u043f\u043e\u043b\u0438\u0442\u0438\u043a\u0430 backup?"
    )
    assert not _may_fold("\u5907\u4efd\u653f\u7b56\u5728\u54ea\u91cc\uff1f")
    assert _may_fold("\u0440assword")  # Cyrillic "r" inside a Latin word
    assert _may_fold("\u1d05\u1d00\u0274")  # small capitals, no native letter
    assert fold_lookalikes("\u0440assword") == "password"


def test_the_markup_characters_are_in_every_text_the_markup_pre_test_finds() -> None:
    for text in _random_texts("<!-a>*_~`&#%1f x", seed=7):
        if _HAS_MARKUP.search(text) is not None:
            assert any(mark in text for mark in _MARKUP_CHARS), text


def test_the_iban_byte_test_finds_two_letters_before_two_digits() -> None:
    letters_then_digits = re.compile("[A-Za-z]{2}[0-9]{2}")
    for text in _random_texts("AZaz09 \u00e9\u0663-1", seed=8):
        may_hold = b"AA99" in byte_classes(text)
        assert may_hold == (letters_then_digits.search(text) is not None), text
        if _IBAN_START.search(text) is not None:
            assert may_hold, text


def test_iban_starts_read_off_the_byte_classes_are_where_the_start_pattern_matches() -> None:
    for text in _random_texts("AZaz09 -.\u00e9", seed=17, count=20_000):
        assert list(_iban_starts(text)) == [m.start() for m in _IBAN_START.finditer(text)]


@pytest.mark.parametrize(
    "alphabet",
    [
        "4 1-.5_a/ 0 9\t\n,34567",
        "4 1\u2013\u00b75\u00ada\u2215 \u0664\uff19\u00a0\u200b\n,\u0663\u30fb7",
    ],
)
def test_every_digit_run_long_enough_for_a_card_passes_the_card_pre_test(alphabet: str) -> None:
    long_runs = 0
    for text in _random_texts(alphabet, seed=9, count=20_000, longest=80):
        runs = _DIGIT_RUN.finditer(text)
        if any(sum(c.isdecimal() for c in run.group()) >= 13 for run in runs):
            long_runs += 1
            assert _may_hold_card(text), text
            if text.isascii():
                assert _CARD_DIGITS in byte_classes(text, _SEPARATOR_BYTES), text
    assert long_runs > 100  # the alphabet makes such runs often enough to test


def test_digit_runs_tried_at_digits_are_the_runs_finditer_finds() -> None:
    for text in _random_texts("4 1-.5_a\u200b\u0663x/ 0 9", seed=5):
        digits = [m.start() for m in re.finditer(r"\d", text)]
        found = [m.span() for m in finditer_at(_DIGIT_RUN, text, digits, 0, len(text))]
        assert found == [m.span() for m in _DIGIT_RUN.finditer(text)]


@pytest.mark.parametrize("kind", [kind for kind, _ in OFF_TOPIC_KINDS])
def test_off_topic_patterns_searched_at_their_prefixes_find_the_first_match(kind: str) -> None:
    pattern = dict(OFF_TOPIC_KINDS)[kind]
    for view in VIEWS:
        found = _search(pattern, view)
        expected = pattern.search(view)
        assert (found and found.span()) == (expected and expected.span())


def test_the_word_table_is_what_re_reads_as_a_word_character() -> None:
    every = "".join(
        chr(point) for point in range(sys.maxunicode + 1) if not 0xD800 <= point <= 0xDFFF
    )
    expected = np.zeros(sys.maxunicode + 1, dtype=bool)
    expected[[ord(char) for char in re.findall(r"\w", every)]] = True
    assert np.array_equal(WORD, expected)


def test_the_space_and_digit_tables_are_what_str_reads_as_space_and_decimal() -> None:
    every = range(sys.maxunicode + 1)
    assert space_points().tolist() == [point for point in every if chr(point).isspace()]
    assert category_points("Nd").tolist() == [point for point in every if chr(point).isdecimal()]


def test_other_views_split_into_the_tokens_the_word_pattern_finds() -> None:
    word = re.compile(r"\w+")
    alphabet = "ab _1\u00e9\u0663\u2028\u00a0\u6f22\u0301-.\U0001f600\u0430\ud800\u3000"
    for text in _random_texts(alphabet, seed=12, count=10_000, longest=24):
        view_tokens.cache_clear()
        assert view_tokens(text)[0] == word.findall(text), repr(text)


def test_a_text_the_hidden_table_passes_is_left_alone_by_the_blank_and_invisible_classes() -> None:
    alphabet = "a \u00e9\u200b\u00ad\u00a0\u2028\u2800\ufe0f\U000e0041\U000e007f\U0001f3f4\u3000"
    passed = 0
    for text in _random_texts(alphabet, seed=13, count=20_000, longest=12):
        if "  " in text or holds_hidden(text):
            continue
        passed += 1
        assert INVISIBLE.sub("", BLANK.sub(" ", text)) == text, repr(text)
        assert _strip_tags(text) == (text, ""), repr(text)
    assert passed > 500


def test_ascii_views_split_into_the_tokens_the_word_pattern_finds() -> None:
    word = re.compile(r"\w+")
    rng = random.Random(6)
    texts = [
        "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(30))) for _ in range(5_000)
    ]
    for text in [*texts, *VIEWS]:
        view_tokens.cache_clear()
        assert view_tokens(text)[0] == word.findall(text), repr(text)


@pytest.mark.parametrize("length", [401, 600, 1399, 2000, 2199])
def test_windows_scored_together_score_as_each_window_alone(length: int) -> None:
    model = load_model()
    text = normalize(" ".join(_TEXTS * 3)).leet[:length]
    starts = range(0, len(text) - WINDOW // 2, WINDOW // 2)
    alone = max(model.probability(text[start : start + WINDOW]) for start in starts)
    assert model.probability(text) == alone
