"""BM25 sparse vectors for the lexical side of hybrid search, each text in its own language.

Two schemes, recorded with the vectors (`storage.index_identity`), because a query must be
cut into terms the way the stored passages were:

* `english` (every release before this one): qdrant-edge's BM25 with English stemming
  and stopwords for every text.
* `multilingual-1`: each text's language is detected (`storage.text_language`) and its
  words stemmed by that language's Snowball stemmer with its stopwords, and by the English
  one as well (the larger weight of a term counts). English text gives exactly the terms
  of `english`; text in another language also gives the terms `english` would, so that a
  short English note the detector reads as another language ("A quokka is a small
  wallaby." reads as Finnish) is still found by its English words, and names and borrowed
  words ("Toner", "VPN") in a German question still meet an English passage, where
  German stemming alone would cut them differently ("Toner" -> "ton"). Chinese, Japanese
  and Korean have no spaces between words (Korean has them between phrases): each run of
  their characters becomes its overlapping character bigrams ("打印机" -> "打印 印机"),
  the usual dictionary-free cut for these scripts (qdrant's own multilingual tokenizer
  segments with dictionaries that cost ~65 MB, and drops every number). A short query is
  stemmed in English alone unless its language is clear (`_QUERY_CONFIDENCE`).

Terms are hashed by qdrant-edge into one index space, so a passage and a question in the
same language meet on their stems whatever else the index holds. A text takes tens of
microseconds to a millisecond (the language detection); callers run many off the event
loop.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any, Literal

from storage.text_language import SNOWBALL_LANGUAGES, detect_language
from storage.vectors import SparseVector

if TYPE_CHECKING:
    from qdrant_edge import Bm25

__all__ = [
    "DEFAULT_LEXICAL_SCHEME",
    "LEGACY_LEXICAL_SCHEME",
    "LEXICAL_SCHEMES",
    "LexicalEncoder",
    "LexicalScheme",
    "cjk_bigrams",
]

LexicalScheme = Literal["english", "multilingual-1"]
LEGACY_LEXICAL_SCHEME: LexicalScheme = "english"
DEFAULT_LEXICAL_SCHEME: LexicalScheme = "multilingual-1"
LEXICAL_SCHEMES: tuple[LexicalScheme, ...] = ("english", "multilingual-1")

#: Hiragana, Katakana (and its phonetic extensions, half-width forms), CJK ideographs
#: (extension A, the unified block, compatibility ideographs) and Hangul syllables.
_CJK_RUN = re.compile(
    "[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+"
)
_ENGLISH = "en"
#: A query's language counts from this confidence on (English otherwise). Short queries are
#: guesses: at 0.5, 8.6% of SciFact's and 24% of NFCorpus's English queries still read as
#: another language (9% and 46% at 0), and 103 of the 104 questions of
#: benchmarks/multilingual_set.json are read right either way.
_QUERY_CONFIDENCE = 0.5


def cjk_bigrams(text: str) -> str:
    """`text` with every run of CJK characters replaced by its overlapping bigrams,
    separated by spaces (a run of one character stays as it is)."""

    def bigrams(found: re.Match[str]) -> str:
        run = found.group()
        if len(run) < 2:
            return f" {run} "
        return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "

    return _CJK_RUN.sub(bigrams, text)


class LexicalEncoder:
    """BM25 sparse vectors of passages and queries under one scheme (see the module doc)."""

    def __init__(self, *, scheme: LexicalScheme = DEFAULT_LEXICAL_SCHEME) -> None:
        if scheme not in LEXICAL_SCHEMES:
            raise ValueError(f"unknown lexical scheme {scheme!r}")
        self.scheme: LexicalScheme = scheme
        self._models: dict[str, Bm25] = {}
        self._lock = threading.Lock()

    def encode_document(self, text: str) -> SparseVector:
        """Term-frequency weights (BM25 k, b, average length) of a text to index."""
        if self.scheme == LEGACY_LEXICAL_SCHEME:
            return _sparse(self._model(_ENGLISH).embed_document(text))
        language, prepared = self._prepare(text, min_confidence=0.0)
        found = _sparse(self._model(language).embed_document(prepared))
        if language == _ENGLISH:
            return found
        return _merged(found, _sparse(self._model(_ENGLISH).embed_document(prepared)))

    def encode_query(self, text: str) -> SparseVector:
        """Weight 1.0 for each distinct term of a query."""
        if self.scheme == LEGACY_LEXICAL_SCHEME:
            return _sparse(self._model(_ENGLISH).embed_query(text))
        language, prepared = self._prepare(text, min_confidence=_QUERY_CONFIDENCE)
        found = _sparse(self._model(language).embed_query(prepared))
        if language == _ENGLISH:
            return found
        return _merged(found, _sparse(self._model(_ENGLISH).embed_query(prepared)))

    def _prepare(self, text: str, *, min_confidence: float) -> tuple[str, str]:
        """The stemmer's language for `text` (English when none fits or none is sure
        enough) and the text to cut, with CJK runs as bigrams."""
        found = detect_language(text, min_confidence=min_confidence)
        language = found if found is not None and found in SNOWBALL_LANGUAGES else _ENGLISH
        if _CJK_RUN.search(text):
            return language, cjk_bigrams(text)
        return language, text

    def _model(self, language: str) -> Bm25:
        model = self._models.get(language)
        if model is None:
            from qdrant_edge import Bm25, Bm25Config  # noqa: PLC0415 - imported when used

            with self._lock:
                model = self._models.setdefault(
                    language, Bm25(Bm25Config(language=SNOWBALL_LANGUAGES[language]))
                )
        return model


def _merged(first: SparseVector, second: SparseVector) -> SparseVector:
    """Every term of either vector, with the larger weight where both hold it."""
    weights = dict(zip(first.indices, first.values, strict=True))
    for index, value in zip(second.indices, second.values, strict=True):
        weights[index] = max(value, weights.get(index, 0.0))
    return SparseVector(indices=tuple(weights), values=tuple(weights.values()))


def _sparse(vector: Any) -> SparseVector:
    """Translate qdrant-edge's SparseVector (untyped here) into ours."""
    indices = tuple(int(index) for index in vector.indices)
    values = tuple(float(value) for value in vector.values)
    return SparseVector(indices=indices, values=values)
