"""Tell which language a text is written in, offline: lingua's n-gram models, low-accuracy mode.

Lore needs the language of a passage to stem its words the right way (the lexical index,
the offline answerer's quotes) and the language of a question to answer in it. The
detector knows the languages Lore can stem (every Snowball stemmer that qdrant-edge's
BM25 and py-rust-stemmers share) and Chinese, Japanese and Korean, whose words are cut
differently (`storage.lexical`). lingua's low-accuracy mode reads trigrams only: about
45 MB for these 20 languages (the high-accuracy models take 250 MB) and well under a
millisecond for a question. Measured on benchmarks/multilingual_set.json (104 questions
and 64 notes in nine languages): one error, a Portuguese question read as Spanish.

Short texts ("ok", "danke") are guesses; `detect_language` returns None unless the best
language is clearly ahead (`min_confidence`), and callers fall back to a default. The
detector is built once per process, when first used; lingua is thread-safe.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lingua import LanguageDetector

__all__ = [
    "LANGUAGES",
    "SNOWBALL_LANGUAGES",
    "detect_language",
    "language_name",
]

#: ISO 639-1 code -> the Snowball stemmer's name (qdrant-edge BM25 and py-rust-stemmers).
SNOWBALL_LANGUAGES: Mapping[str, str] = {
    "en": "english",
    "de": "german",
    "fr": "french",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "ru": "russian",
    "nl": "dutch",
    "sv": "swedish",
    "da": "danish",
    "nb": "norwegian",
    "fi": "finnish",
    "hu": "hungarian",
    "ro": "romanian",
    "tr": "turkish",
    "el": "greek",
    "ar": "arabic",
}
#: Every language the detector may answer (ISO 639-1): the stemmed ones, and three written
#: without spaces between words.
LANGUAGES: frozenset[str] = frozenset({*SNOWBALL_LANGUAGES, "zh", "ja", "ko"})
_NAMES = {
    **{code: name.capitalize() for code, name in SNOWBALL_LANGUAGES.items()},
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
}
#: Characters read of a long text: a chunk's language shows in its first lines.
_SAMPLE_CHARS = 1200
_LETTER = re.compile(r"[^\W\d_]")


def language_name(code: str) -> str:
    """The English name of a language code ("de" -> "German"); the code if unknown."""
    return _NAMES.get(code, code)


def detect_language(text: str, *, min_confidence: float = 0.0) -> str | None:
    """The ISO 639-1 code of the language `text` is written in, or None when it has no
    letters or no language reaches `min_confidence` (lingua's 0-1 confidence value)."""
    sample = text[:_SAMPLE_CHARS]
    if not _LETTER.search(sample):
        return None
    detector = _detector()
    if min_confidence <= 0.0:
        found = detector.detect_language_of(sample)
        return None if found is None else found.iso_code_639_1.name.lower()
    values = detector.compute_language_confidence_values(sample)
    if not values or values[0].value < min_confidence:
        return None
    return values[0].language.iso_code_639_1.name.lower()


@functools.cache
def _detector() -> LanguageDetector:
    from lingua import IsoCode639_1, LanguageDetectorBuilder  # noqa: PLC0415 - loads models

    codes = [getattr(IsoCode639_1, code.upper()) for code in sorted(LANGUAGES)]
    return LanguageDetectorBuilder.from_iso_codes_639_1(*codes).with_low_accuracy_mode().build()
