"""The offline answerer in the member's language: refusals and the words around quotes follow
the question (LANGUAGE when it cannot be told), quotes stay in the document's language, and
sentences of scripts without spaces are cut at their own full stops."""

from __future__ import annotations

import pytest

from graphs.llm.offline import OfflineModel, is_refusal
from graphs.llm.offline_language import ANSWER_LANGUAGES, answer_language, phrases
from graphs.llm.offline_quotes import split_sentences
from graphs.llm.types import Completion
from tests.test_offline_model import PRIVATE_TOOLS, passage, run, turn

#: A question per language that the knowledge base cannot answer.
UNANSWERED = {
    "en": "Who repairs the coffee machine on the third floor?",
    "de": "Wer repariert die Kaffeemaschine im dritten Stock?",
    "fr": "Qui répare la machine à café du troisième étage ?",
    "es": "¿Quién arregla la cafetera del tercer piso?",
    "it": "Chi ripara la macchina del caffè al terzo piano?",
    "pt": "Quem conserta a máquina de café do terceiro andar?",
    "ru": "Кто чинит кофемашину на третьем этаже?",
    "zh": "三楼的咖啡机坏了谁来修？",
    "ja": "三階のコーヒーメーカーは誰が修理しますか？",
}
HEATING = (
    "Den Schlüssel für den Heizraum hat Herr Becker im Erdgeschoss. Die Wartung des"
    " Heizkessels übernimmt jedes Jahr im Oktober die Firma Müller Haustechnik."
)
PARCELS = "公司的快递统一放在一楼前台。前台每天下午五点关门，请在此之前取件。"


def test_the_guards_languages_are_the_answerers() -> None:
    assert set(ANSWER_LANGUAGES) == set(UNANSWERED)


@pytest.mark.parametrize("language", sorted(UNANSWERED))
async def test_a_refusal_is_in_the_members_language(language: str) -> None:
    messages = turn(
        UNANSWERED[language],
        ("search_private", {"passages": []}),
        ("search_knowledge", {"passages": []}),
    )
    _, completion = await run(messages)
    assert completion.finish_reason == "refusal"
    assert completion.text == phrases(language).refusal_with_notes
    assert is_refusal(completion.text)


async def test_a_question_too_short_to_tell_gets_the_bots_language() -> None:
    messages = turn("ok?", ("search_knowledge", {"passages": []}))
    _, german = await run(messages, model=OfflineModel(language="de"))
    _, default = await run(messages)
    assert german.text == phrases("de").refusal
    assert default.text == phrases("en").refusal


@pytest.mark.parametrize(
    "question",
    [
        "What is my locker code?",  # lingua: German
        "Who won the chess tournament?",  # lingua: French
        "What's the wifi password?",  # lingua: Italian
        "the gate code is 4711.",  # lingua: German
    ],
)
def test_a_short_english_question_is_read_as_english_by_its_stopwords(question: str) -> None:
    assert answer_language(question, "de") == "en"


def test_a_few_words_without_stopwords_say_nothing_the_setting_answers() -> None:
    assert answer_language("Travel rules", "en") == "en"  # lingua: French
    assert answer_language("Travel rules", "de") == "de"
    assert answer_language("Der Plan vom Keller", "en") == "de"
    assert answer_language("三楼的打印机", "en") == "zh"


async def test_a_german_question_quotes_the_german_sentence_that_answers_it() -> None:
    note = passage(1, HEATING, 0.6, title="Heizraum und Heizung")
    messages = turn(
        "Wer übernimmt die Wartung des Heizkessels?", ("search_knowledge", {"passages": [note]})
    )
    _, completion = await run(messages)
    assert completion.text == (
        "Aus „Heizraum und Heizung“: „Die Wartung des Heizkessels übernimmt jedes Jahr im"
        " Oktober die Firma Müller Haustechnik.“ [1]"
    )


async def test_an_english_question_about_a_german_note_quotes_it_from_its_start() -> None:
    note = passage(1, HEATING, 0.6, title="Heizraum und Heizung")
    messages = turn("Who services the heating system?", ("search_knowledge", {"passages": [note]}))
    _, completion = await run(messages)
    assert completion.finish_reason == "stop"
    assert completion.text.startswith("From “Heizraum und Heizung”: “Den Schlüssel")
    assert "Müller Haustechnik." in completion.text
    assert completion.text.endswith("” [1]")


async def test_a_chinese_question_quotes_one_chinese_sentence() -> None:
    note = passage(2, PARCELS, 0.6, title="快递")
    messages = turn("前台几点关门？", ("search_knowledge", {"passages": [note]}))
    _, completion = await run(messages)
    assert completion.text == "摘自“快递”：“前台每天下午五点关门，请在此之前取件。” [2]"


def test_sentences_end_at_cjk_full_stops_and_before_capitals_of_any_script() -> None:
    assert [s.text for s in split_sentences(PARCELS)] == [
        "公司的快递统一放在一楼前台。",
        "前台每天下午五点关门，请在此之前取件。",
    ]
    assert [s.text for s in split_sentences("Es ist kalt draußen. Über Nacht friert es.")] == [
        "Es ist kalt draußen.",
        "Über Nacht friert es.",
    ]


async def test_tool_outcomes_are_confirmed_in_the_members_language() -> None:
    messages = turn(
        "Teile meine Notiz über den Umzug mit allen",
        ("search_private", {"passages": []}),
        (
            "share_to_knowledge",
            {"status": "shared", "document_id": "d1", "title": "Umzug"},
        ),
    )
    completion: Completion = (await run(messages, PRIVATE_TOOLS))[1]
    assert completion.text == "Erledigt: „Umzug“ ist jetzt in der gemeinsamen Wissensdatenbank."
