"""The words a claim check sets aside, per language: what only frames an answer, how a model
says it found nothing, and numbers written as words (`graphs.agent.claims`).

One table per kind, keyed by ISO 639-1 code: English (every language also reads the English
table, as models mix in English words) and the eight languages the guards read. Framing words
are stemmed in their language, as a sentence's words are; Chinese and Japanese have no spaces
between words, so their framing words are taken out of the text before it is cut into
character bigrams (`graphs.llm.offline_stems`). Numbers in Chinese and Japanese characters
count only before a counter ("二楼", "三つ"): "三明治" (sandwich) holds no three.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final

from graphs.llm.offline_stems import CJK, content_stems

__all__ = [
    "ENGLISH_NUMBER_WORDS",
    "claim_stems",
    "framing_stems",
    "is_framing_name",
    "number_words",
    "says_not_found",
    "spelled_in",
]

_FRAMING_TEXT: Final[Mapping[str, str]] = {
    "en": (
        "according accordingly answer answers anything apologies ask asked asking asks assist "
        "assistance available based sorry unfortunately "
        "certainly cite cited citing citation citations course detail details document "
        "documentation documents else entry excerpt faq feel find finding found further glad "
        "great happy hello "
        "help hey hi hope information know knowledge base let look looking mention mentioned "
        "mentions morning afternoon evening note notes okay passage passages provided "
        "question questions quote quoted result results say says search searched see shown "
        "source sources state stated states sure thank thanks today welcome wish"
    ),
    "de": (
        "abend angaben antwort antworten auszug basis dank danke dokument dokumente "
        "dokumentation eintrag einträge entschuldigung ergebnis ergebnisse erwähnt fand finden "
        "folgende folgendes frage fragen freue froh gefunden gemäß gern gerne gesucht guten "
        "hallo helfe helfen hier hilfe information informationen klar laut leider morgen "
        "natürlich notiz notizen okay passage quelle quellen sagt steht suche tag weitere "
        "weiteren wissen wissensdatenbank zitat zitiert zufolge"
    ),
    "fr": (
        "ai aide aider base bien bonjour certainement cherché citation cité connaissances "
        "désolé document documentation documents dit extrait heureux indique information "
        "informations malheureusement mentionné merci note notes passage question questions "
        "ravi recherche réponse réponses résultat résultats salut selon source sources suivant "
        "suivante sûr trouvé trouvée trouver voici voilà"
    ),
    "es": (
        "aquí ayuda ayudar base buscar búsqueda cita citado claro conocimiento conocimientos "
        "desafortunadamente dice documentación documento documentos encantado encontrado "
        "encontrar encontré extracto fuente fuentes gracias hola indica información "
        "lamentablemente mencionado nota notas pasaje pregunta preguntas respuesta respuestas "
        "resultado resultados según siento siguiente"
    ),
    "it": (
        "aiutare aiuto base buongiorno cercato certamente certo ciao citato conoscenza dice "
        "dispiace documentazione documenti documento domanda domande ecco estratto felice "
        "fonte fonti grazie indica informazione informazioni menzionato nota note passaggio "
        "purtroppo ricerca risposta risposte risultati risultato secondo seguente trovato "
        "trovare"
    ),
    "pt": (
        "aqui ajuda ajudar base citado claro conforme conhecimento desculpe diz documentação está "
        "documento documentos encontrado encontrar encontrei feliz fonte fontes indica "
        "infelizmente informação informações mencionado nota notas obrigada obrigado olá "
        "passagem pergunta perguntas pesquisa procurar resposta respostas resultado resultados "
        "segundo seguinte trecho"
    ),
    "ru": (
        "база вопрос вопросы вот говорится данным документ документация документы жаль "
        "заметка заметки здравствуйте знаний извините информация искал источник источники "
        "конечно найдено найти нашел нашёл ответ ответы отрывок поиск помочь помощь привет "
        "рад результат результаты сведения следующее согласно сожалению спасибо упоминается "
        "фрагмент цитата"
    ),
    # Taken out of the text (longest first) before it is cut into bigrams.
    "zh": (
        "以下是 以下 如下 这是 这些是 好的 当然 根据 按照 答案 回答 问题 来源 资料 文档 文件 笔记 "
        "知识库 我找到的 找到的 找到了 找到 搜索 查找 你好 您好 谢谢 感谢 抱歉 对不起 很遗憾 帮助 "
        "乐意 很高兴 信息 内容 结果 相关 引用 提到 我 您 你"
    ),
    "ja": (
        "はい こちらが こちらは こちら 以下が 以下は 以下の 以下 次のとおりです 次の "
        "回答 答え 質問 出典 ソース 資料 ドキュメント 文書 メモ ナレッジベース "
        "によると によれば 見つかった 見つけた 検索 結果 情報 内容 "
        "ありがとうございます ありがとう すみません 申し訳ありません "
        "残念ながら お手伝い 喜んで もちろん です ます"
    ),
}
#: "Could not find", "no information", "I don't know": a refusal is chat, not a claim.
_NOT_FOUND: Final[Mapping[str, str]] = {
    "en": (
        r"\b(?:could ?n[o']t|can ?n[o']t|did ?n[o']t|was ?n[o']t able to|am not able to"
        r"|unable to) (?:find|locate|see|answer)\b|\bno (?:information|source|mention|answer)\b"
        r"|\bi (?:don't|do not) know\b"
    ),
    "de": (
        r"\b(?:nichts|keine\w*(?: \w+)?) (?:dazu |darüber |hierzu )?(?:gefunden|finden)\b"
        r"|\bkonnte\b[^.!?]*\bnicht\b[^.!?]*\b(?:finden|beantworten)\b"
        r"|\bkeine (?:informationen|angaben|hinweise|quelle|quellen|antwort)\b"
        r"|\bweiß (?:ich )?(?:das |es )?nicht\b"
    ),
    "fr": (
        r"\b(?:n['’]ai|n['’]avons) (?:rien|pas) trouvé\b|\brien trouvé\b"
        r"|\b(?:je n['’]ai pas pu|je ne peux pas|je ne parviens pas à) (?:trouver|répondre)\b"
        r"|\baucune? (?:information|source|mention|réponse)\b|\bje ne sais pas\b"
    ),
    "es": (
        r"\bno (?:he|hemos) encontrado\b|\bno (?:encontré|encuentro)\b"
        r"|\bno (?:pude|puedo|he podido) (?:encontrar|responder)\b"
        r"|\bningun[ao]? (?:información|fuente|mención|respuesta)\b|\bno lo sé\b|\bno sé\b"
    ),
    "it": (
        r"\bnon (?:ho|abbiamo) trovato\b"
        r"|\bnon (?:sono riuscit[oa] a|riesco a|posso) (?:trovare|rispondere)\b"
        r"|\bnessun[ao]? (?:informazione|fonte|menzione|risposta)\b|\bnon lo so\b"
    ),
    "pt": (
        r"\bnão (?:encontrei|encontramos)\b"
        r"|\bnão (?:consegui|consigo|posso) (?:encontrar|responder)\b"
        r"|\bnenhuma? (?:informação|fonte|menção|resposta)\b|\bnão sei\b"
    ),
    "ru": (
        r"\bне (?:нашёл|нашел|нашла|нашли|смог(?:ла)? найти|удалось найти|могу (?:найти|ответить))"
        r"\b|\bничего не (?:нашёл|нашел|нашла|найдено)\b|\bне знаю\b"
        r"|\bнет (?:информации|сведений|данных|источника|ответа)\b"
    ),
    "zh": (
        r"没有找到|没找到|未找到|找不到|没有(?:相关)?(?:信息|资料|内容|记录|答案)"
        r"|无法(?:找到|回答)|不知道"
    ),
    "ja": (
        r"見つかりません|見つからな|見当たりません|わかりません|分かりません|情報がありません"
        r"|お答えできません|回答できません"
    ),
}
# Each: the words for 2..20, 30..90 (by tens), and a few more (word=value), like English.
# The word for one is left out everywhere (it is also "a"); Italian "sei" (also "you are") too.
_NUMBER_TEXT: Final[Mapping[str, tuple[str, str, str]]] = {
    "en": (
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty",
        "thirty forty fifty sixty seventy eighty ninety",
        "hundred=100 thousand=1000 million=1000000",
    ),
    "de": (
        "zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
        "sechzehn siebzehn achtzehn neunzehn zwanzig",
        "dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
        "hundert=100 tausend=1000 million=1000000 millionen=1000000",
    ),
    "fr": (
        "deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze "
        "seize dix-sept dix-huit dix-neuf vingt",
        "trente quarante cinquante soixante soixante-dix quatre-vingt quatre-vingt-dix",
        "cent=100 mille=1000 million=1000000",
    ),
    "es": (
        "dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince "
        "dieciséis diecisiete dieciocho diecinueve veinte",
        "treinta cuarenta cincuenta sesenta setenta ochenta noventa",
        "cien=100 ciento=100 mil=1000 millón=1000000",
    ),
    "it": (
        "due tre quattro cinque - sette otto nove dieci undici dodici tredici quattordici "
        "quindici sedici diciassette diciotto diciannove venti",
        "trenta quaranta cinquanta sessanta settanta ottanta novanta",
        "cento=100 mille=1000 milione=1000000",
    ),
    "pt": (
        "dois três quatro cinco seis sete oito nove dez onze doze treze catorze quinze "
        "dezesseis dezessete dezoito dezenove vinte",
        "trinta quarenta cinquenta sessenta setenta oitenta noventa",
        "duas=2 quatorze=14 dezasseis=16 dezassete=17 dezanove=19 cem=100 cento=100 mil=1000"
        " milhão=1000000",
    ),
    "ru": (
        "два три четыре пять шесть семь восемь девять десять одиннадцать двенадцать "
        "тринадцать четырнадцать пятнадцать шестнадцать семнадцать восемнадцать "
        "девятнадцать двадцать",
        "тридцать сорок пятьдесят шестьдесят семьдесят восемьдесят девяносто",
        "две=2 двух=2 трёх=3 трех=3 четырёх=4 четырех=4 пяти=5 шести=6 семи=7 восьми=8"
        " девяти=9 десяти=10 сто=100 тысяча=1000 тысячи=1000 тысяч=1000 миллион=1000000",
    ),
}


def _numbers(units: str, tens: str, more: str) -> Mapping[str, str]:
    words = {word: str(value) for value, word in enumerate(units.split(), start=2)}
    tens_values = range(30, 100, 10)
    words |= {word: str(value) for value, word in zip(tens_values, tens.split(), strict=True)}
    words |= dict(pair.split("=") for pair in more.split())
    words.pop("-", None)
    return words


_NUMBER_WORDS: Final[Mapping[str, Mapping[str, str]]] = {
    language: _numbers(*table) for language, table in _NUMBER_TEXT.items()
}
#: Numbers written as English words ("one" is left out: "one of your notes" is no number).
ENGLISH_NUMBER_WORDS: Final = _NUMBER_WORDS["en"]
_ASCII_WORD: Final = re.compile(r"[a-z]+")
_WORD: Final = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_HAN_DIGITS: Final = {
    "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
}  # fmt: skip
_HAN_NUMERAL: Final = "〇零一二两三四五六七八九十百千万"
#: A number in Chinese or Japanese characters (2..99, not one), before a counter.
_HAN_NUMBER: Final = re.compile(
    rf"(?<![{_HAN_NUMERAL}])(?P<tens>[二三四五六七八九]?十)?(?P<unit>[二两三四五六七八九])?"
    rf"(?<=[{_HAN_NUMERAL}])(?![{_HAN_NUMERAL}])"
    r"(?=[个位次天年月日号楼层点分岁人台件条本张元块米周つ個回時階枚円歳週])"
)


@functools.cache
def _cjk_framing(language: str) -> tuple[str, ...]:
    return tuple(sorted(_FRAMING_TEXT.get(language, "").split(), key=len, reverse=True))


@functools.cache
def framing_stems(language: str) -> frozenset[str]:
    """Stems that only frame an answer, in `language` (English's always among them); a
    sentence of nothing else claims nothing."""
    english = frozenset(content_stems(_FRAMING_TEXT["en"]))
    if language == "en" or language in ("zh", "ja") or language not in _FRAMING_TEXT:
        return english
    return english | frozenset(content_stems(_FRAMING_TEXT[language], language))


def claim_stems(text: str, language: str) -> frozenset[str]:
    """The content stems of one sentence in `language`, without those that only frame an
    answer (Chinese and Japanese: with their framing words taken out first)."""
    if language in ("zh", "ja") and CJK.search(text):
        for word in _cjk_framing(language):
            text = text.replace(word, " ")
    return frozenset(content_stems(text, language)) - framing_stems(language)


def is_framing_name(name: str, language: str) -> bool:
    """Whether a capitalised word is only a framing or function word of a language that
    capitalises nouns or its polite "you" ("Antwort", "Sie"), not a name. English names
    stay names."""
    if language == "en":
        return False
    return frozenset(content_stems(name, language)) <= framing_stems(language)


@functools.cache
def _not_found(language: str) -> re.Pattern[str]:
    patterns = {_NOT_FOUND["en"], _NOT_FOUND.get(language, _NOT_FOUND["en"])}
    return re.compile("|".join(sorted(patterns)), re.IGNORECASE)


def says_not_found(text: str, language: str) -> bool:
    """Whether a sentence says nothing was found ("I couldn't find", "nichts gefunden",
    "没有找到"), in English or `language`."""
    return _not_found(language).search(text) is not None


def number_words(text: str, language: str) -> frozenset[tuple[str, str]]:
    """Numbers `text` writes as words, each as (word, digits), in English or `language`."""
    lowered = text.lower()
    found = {
        (word, ENGLISH_NUMBER_WORDS[word])
        for word in _ASCII_WORD.findall(lowered)
        if word in ENGLISH_NUMBER_WORDS
    }
    table = _NUMBER_WORDS.get(language)
    if table is not None and table is not ENGLISH_NUMBER_WORDS:
        found |= {(word, table[word]) for word in _WORD.findall(lowered) if word in table}
    if language in ("zh", "ja"):
        found |= {(match.group(), _han_value(match)) for match in _HAN_NUMBER.finditer(text)}
    return frozenset(found)


def _han_value(match: re.Match[str]) -> str:
    tens, unit = match.group("tens"), match.group("unit")
    value = _HAN_DIGITS.get(unit or "", 0)
    if tens:
        value += 10 * _HAN_DIGITS.get(tens[:-1], 1)
    return str(value)


def spelled_in(word: str, text: str) -> bool:
    """Whether a number word occurs in `text` as a word (as characters, in Chinese and
    Japanese: they have no spaces to stand between)."""
    if CJK.match(word):
        return word in text
    return re.search(rf"\b{re.escape(word)}\b", text) is not None
