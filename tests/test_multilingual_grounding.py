"""The claim check in the languages the guards read (`graphs.agent.claim_words`): a German
"Gerne, hier ist die Antwort:" or a Chinese "好的，以下是我找到的内容：" is chat, not an
unsupported claim; numbers written as words are checked in those languages too."""

from __future__ import annotations

import pytest

from graphs.agent.claims import read_claim
from graphs.agent.grounding import Evidence, ground

# Chat and refusals in the languages the guards read stay chat; claims in them are checked.
OTHER_CHAT = {
    "de": ["Gerne, hier ist die Antwort:", "Dazu habe ich leider nichts gefunden."],
    "fr": ["Voici ce que j’ai trouvé :", "Je n’ai rien trouvé à ce sujet."],
    "es": ["Aquí está la respuesta:", "No he encontrado nada sobre eso."],
    "it": ["Ecco la risposta:", "Non ho trovato nulla al riguardo."],
    "pt": ["Aqui está a resposta:", "Não encontrei nada sobre isso."],
    "ru": ["Вот ответ:", "Я ничего не нашёл об этом."],
    "zh": ["好的，以下是我找到的内容：", "抱歉，我没有找到相关信息。"],
    "ja": ["はい、こちらが回答です：", "申し訳ありませんが、情報が見つかりませんでした。"],
}


@pytest.mark.parametrize(
    ("language", "sentence"),
    [(language, sentence) for language, pair in OTHER_CHAT.items() for sentence in pair],
)
def test_chat_in_the_members_language_needs_no_source(language: str, sentence: str) -> None:
    checked = ground(sentence, [], language)
    assert checked.chat_only, checked.verdicts
    assert checked.text() == sentence


PRINTER_DE = Evidence(
    1,
    "Drucker",
    "Der Drucker im zweiten Stock braucht den Toner TN-2420. Herr Keller wartet ihn "
    "zweimal im Jahr.",
)


def test_a_german_answer_keeps_its_framing_and_loses_its_invention() -> None:
    answer = (
        "Gerne, hier ist die Antwort: Der Drucker braucht den Toner TN-2420 [1]. "
        "Herr Keller wartet ihn acht Mal im Jahr [1]. Können Sie mir sagen, welchen Stock "
        "Sie meinen?"
    )
    checked = ground(answer, [PRINTER_DE], "de")
    assert checked.answers
    assert checked.text() == (
        "Gerne, hier ist die Antwort: Der Drucker braucht den Toner TN-2420 [1]. "
        "Können Sie mir sagen, welchen Stock Sie meinen?"
    )
    [dropped] = checked.dropped
    assert dropped.reason == "a number not in the sources"


def test_a_chinese_answer_is_cut_at_its_full_stops_and_checked_sentence_by_sentence() -> None:
    source = Evidence(1, "打印机", "打印机在二楼，需要TN-2420墨粉。每周一由王先生维护。")
    answer = "好的，以下是我找到的内容。打印机在二楼[1]。打印机有三个墨盒[1]。"
    checked = ground(answer, [source], "zh")
    assert [verdict.segment.text for verdict in checked.verdicts] == [
        "好的，以下是我找到的内容。",
        "打印机在二楼[1]。",
        "打印机有三个墨盒[1]。",
    ]
    assert checked.text() == "好的，以下是我找到的内容。打印机在二楼[1]。"
    assert checked.dropped[0].reason == "a number not in the sources"
    assert read_claim("打印机在二楼。", "zh").number_words == {("二", "2")}
    assert read_claim("我想吃三明治。", "zh").number_words == frozenset()
