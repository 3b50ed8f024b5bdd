"""NFKC and accent folding read character by character give exactly what `unicodedata`
gives for the whole text: on seeded random strings built from the characters that make
normalisation reach across characters (combining marks, Hangul jamo, Indic vowel signs
that compose, kana voicing marks, characters whose NFKC is several characters), and on
long texts in the languages the guards read."""

from __future__ import annotations

import random
import re
import unicodedata

from graphs.guards.normal_forms import _seconds, fold_accents, nfkc

_ACCENT = re.compile("[\u0300-\u036f]")
_TRICKY = (
    "ae\u00e9\u0301\u0306\u0439\u0438\u304c\u3099\u304b\uff1f\u2026\u1100\u1161\uac00"
    "\u0b47\u0b3e\u00bd\ufb01\u6f22\u0344\u0f73 \ud800\U0001d400\u212b\u0385"
)


def _folded(text: str) -> str:
    return unicodedata.normalize("NFC", _ACCENT.sub("", unicodedata.normalize("NFD", text)))


def test_random_texts_normalise_as_unicodedata_normalises_them() -> None:
    rng = random.Random(15)
    for _ in range(30_000):
        text = "".join(rng.choice(_TRICKY) for _ in range(rng.randrange(14)))
        assert nfkc(text) == unicodedata.normalize("NFKC", text), repr(text)
        assert fold_accents(text) == _folded(text), repr(text)


def test_long_texts_in_many_languages_normalise_as_unicodedata_normalises_them() -> None:
    sentences = [
        "Wo finde ich die Richtlinie zur Datensicherung? Größe: 3 GB.",
        "Où se trouve le guide pour réinitialiser le mot de passe ?",
        "Где найти инструкцию по резервному копированию? Ещё вопрос.",
        "备份政策在哪里？请告诉我：谁负责！",
        "バックアップの手順はどこですか？ガイドを見せてください。ﾊﾟｽﾜｰﾄﾞ…",
        "한국어 문서는 어디에 있나요?",
        "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ and ﬁne ligatures ½",
    ]
    rng = random.Random(16)
    for _ in range(40):
        text = " ".join(rng.choice(sentences) for _ in range(60))
        assert nfkc(text) == unicodedata.normalize("NFKC", text)
        assert fold_accents(text.casefold()) == _folded(text.casefold())


def test_the_composition_seconds_include_the_marks_and_letters_that_compose() -> None:
    seconds = _seconds()
    for char in ("\u0301", "\u0308", "\u3099", "\u1161", "\u11a8", "\u0b3e"):
        assert ord(char) in seconds, hex(ord(char))
    for char in ("a", " ", "\u6f22", "\u0430", "?"):
        assert ord(char) not in seconds, hex(ord(char))
