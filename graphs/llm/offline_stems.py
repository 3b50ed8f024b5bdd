"""The content words of a text as stems, in one language, for the offline answerer's scoring.

Words are lowercased and cut by the language's rules: English keeps its ASCII words (as
it always did), other languages every run of letters and digits; stopwords are dropped and
the rest stemmed by that language's Snowball stemmer (py-rust-stemmers), applied until the
stem no longer changes. Chinese and Japanese have no spaces between words: each run of
their characters gives its overlapping character bigrams instead (`storage.lexical` cuts
the index the same way). A question and the passages it is scored against are stemmed in
the question's language: a passage in another language then shares only its names and
numbers with the question.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from py_rust_stemmers import SnowballStemmer

from storage.lexical import cjk_bigrams
from storage.text_language import SNOWBALL_LANGUAGES

__all__ = ["CJK", "content_stems", "stopword_language", "vouched_language"]

_ENGLISH = (
    "a about above after again all also am an and any are as at be been before being below "
    "between both but by can could did do does doing done down during each either else "
    "ever few for from further get gets got had has have having he her here hers him his "
    "how i if in into is it its itself just let lore many may me might more most much must "
    "my myself need no nor not now of off on once only or other our ours out over own "
    "please same shall she should so some such than that the their theirs them then there "
    "these they this those through to too under until up upon us use very was we were what "
    "when where which while who whom why will with would yes yet you your yours "
)
_STOPWORD_TEXT: Mapping[str, str] = {
    "en": _ENGLISH,
    "de": (
        "aber alle allem allen aller alles als also am an auch auf aus bei beim bin bis bitte"
        " da damit dann das dass dein deine deinem deinen deiner dem den denn der des dich die"
        " dir doch dort du durch ein eine einem einen einer es euch euer für gibt hab habe"
        " haben hat hatte ich ihr ihre im in ist ja jede jeder jetzt kann kannst man mein"
        " meine meinem meinen mich mir mit muss musst nach nicht noch nur ob oder ohne schon"
        " sein sich sie sind so soll sollte über um und uns unser unter vom von vor war was"
        " weil welche welchen welcher wenn wer werden wie wieder wir wird wo woher wohin zu"
        " zum zur"
    ),
    "fr": (
        "à au aux avec ce ces cet cette chaque comment dans de des du elle en est et être"
        " faut il ils je la le les leur lui ma mais me mes moi mon ne nous on ou où par pas"
        " peut peux pour quand que quel quelle quelles quels qui sa se ses si son sont sur ta"
        " te tes toi ton tu un une vos votre vous y est-ce qu"
    ),
    "es": (
        "a al algo cómo con cual cuál cuándo cuánto cuántos de del donde dónde el él en es"
        " esa ese eso esta este está hay la las le les lo los me mi mis muy no nos o para"
        " pero por qué que quien quién se si sí su sus te tengo tu tus un una uno y ya yo"
    ),
    "it": (
        "a al alla alle allo ai agli che chi ci come con cosa da dal dalla dei del della"
        " delle di dove e è gli ha ho i il in io la le lo ma mi mio mia ne nel nella non o"
        " per perché più quale quando quanto se si sono su sua suo tu un una uno"
    ),
    "pt": (
        "a à ao aos as com como da das de do dos e é ela ele em essa esse esta este eu há"
        " isso me meu minha na nas no nos o onde os ou para pela pelo por qual quando que"
        " quem se sem seu sua são também tem um uma você"
    ),
    "ru": (
        "а в во вы где да для до его ее её если есть же за и из или им их к как когда кто"
        " ли меня мне мой мы на над не нет но о об от по при с со так то только ты у уже"
        " что чтобы это эта этот я"
    ),
}
_STOPWORDS = {language: frozenset(text.split()) for language, text in _STOPWORD_TEXT.items()}
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_WORD = re.compile(r"[^\W_]+")
#: A word of these scripts is cut into bigrams, not stemmed (see `storage.lexical`).
CJK = re.compile("[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@functools.cache
def _stemmer(language: str) -> SnowballStemmer | None:
    name = SNOWBALL_LANGUAGES.get(language)
    return SnowballStemmer(name) if name is not None else None


@functools.lru_cache(maxsize=65536)
def _stem(word: str, language: str) -> str:
    """The word's Snowball stem, applied until it no longer changes ("dimensional" ->
    "dimension" -> "dimens", as "dimensions"), alike to questions and passages."""
    stemmer = _stemmer(language)
    if stemmer is None:
        return word
    stem = str(stemmer.stem_word(word))
    while (again := str(stemmer.stem_word(stem))) != stem:
        stem = again
    return stem


def content_stems(text: str, language: str = "en") -> list[str]:
    """Stems of the content words of `text` in `language`, in order (stopwords and
    1-letter words dropped; runs of CJK characters as bigrams)."""
    lowered = text.lower()
    if language == "en" and not CJK.search(lowered):
        words = _ASCII_WORD.findall(lowered)
    else:
        words = _WORD.findall(cjk_bigrams(lowered))
    stopwords = _STOPWORDS.get(language, frozenset())
    stems = (
        word if CJK.match(word) else _stem(word, language)
        for word in words
        if word not in stopwords
    )
    return [stem for stem in stems if (len(stem) > 1 or CJK.match(stem)) and stem not in stopwords]


def stopword_language(text: str) -> str:
    """The language of our stopword lists whose stopwords `text` holds most (English on a
    tie): a steadier reading of a short question than a statistical detector, which takes
    "What is my locker code?" for German."""
    words = _WORD.findall(text.lower())
    counts = {
        language: sum(w in stopwords for w in words) for language, stopwords in _STOPWORDS.items()
    }
    best = max(counts.values(), default=0)
    return "en" if counts.get("en", 0) == best else max(counts, key=counts.__getitem__)


def vouched_language(text: str, language: str, *, min_words: int = 4) -> str | None:
    """What the stopwords of `text` say of a statistical detector's `language`: the one
    language of our lists whose stopwords it holds more of ("What is my locker code?" holds
    three English stopwords and no German one, whatever a detector made of it); else
    `language`, unless `text` is shorter than `min_words` words and holds none of its
    stopwords ("Travel rules" says nothing), then None. Text without stopword lists
    (Chinese, Japanese) keeps `language`."""
    if language not in _STOPWORDS:
        return language
    words = _WORD.findall(text.lower())
    counts = {name: sum(w in stopwords for w in words) for name, stopwords in _STOPWORDS.items()}
    best = max(counts.values(), default=0)
    leaders = [name for name, count in counts.items() if count == best]
    if best > counts[language] and len(leaders) == 1:
        return leaders[0]
    if counts[language] == 0 and len(words) < min_words:
        return None
    return language
