"""The refusals `guard_input` gives before any model token, in the member's language: one
table of `GuardWords`, by language.

Too long, budget spent or unreadable, too many questions, a thread too long, and the content
guards' (card numbers, IBANs, injection, off-topic). The language is the turn's
(`AgentContext.reply_language`: the question's when it is clear, else the bot's `LANGUAGE`);
English for a language without words here. `{length}`, `{limit}` and `{minutes}` are filled
in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from graphs.guards.verdict import (
    GUARD_IBAN,
    GUARD_OFF_TOPIC,
    GUARD_PAYMENT_CARD,
    GUARD_PROMPT_INJECTION,
)

__all__ = ["GuardWords", "guard_words"]


@dataclass(frozen=True, slots=True)
class GuardWords:
    """One language's refusals; `guards` by the content guard's code."""

    too_long: str
    budget_spent: str
    budget_unavailable: str
    rate_limited: str
    thread_too_long: str
    guards: Mapping[str, str]


_EN = GuardWords(
    too_long=(
        "That message is too long for me ({length} characters; the limit is {limit}). Could you"
        " shorten it, or send it as a file?"
    ),
    budget_spent="Today's budget for answers is used up. Please try again tomorrow.",
    budget_unavailable="I can't check today's budget right now, so I won't answer. Sorry!",
    rate_limited=(
        "You've sent a lot of questions in the last {minutes} minutes. Please wait a little and ask"
        " again."
    ),
    thread_too_long="This conversation has become very long. Send /new to start a fresh one.",
    # The guards' own English messages (`graphs.guards.MESSAGES`) stand for English.
    guards={},
)

_DE = GuardWords(
    too_long=(
        "Diese Nachricht ist mir zu lang ({length} Zeichen; die Grenze liegt bei {limit}). Kannst"
        " du sie kürzen oder als Datei schicken?"
    ),
    budget_spent=(
        "Das heutige Budget für Antworten ist aufgebraucht. Bitte versuch es morgen wieder."
    ),
    budget_unavailable=(
        "Ich kann das heutige Budget gerade nicht prüfen, deshalb antworte ich nicht. Tut mir leid!"
    ),
    rate_limited=(
        "Du hast in den letzten {minutes} Minuten sehr viele Fragen gestellt. Bitte warte kurz und"
        " frag dann noch einmal."
    ),
    thread_too_long=(
        "Dieses Gespräch ist sehr lang geworden. Schick /new, um ein neues zu beginnen."
    ),
    guards={
        GUARD_PAYMENT_CARD: (
            "Kartennummern kann ich nicht annehmen \u2014 bitte entferne sie und frag noch einmal."
            " Es wurde nichts gespeichert."
        ),
        GUARD_IBAN: (
            "Kontonummern (IBANs) kann ich nicht annehmen \u2014 bitte entferne sie und frag noch"
            " einmal. Es wurde nichts gespeichert."
        ),
        GUARD_PROMPT_INJECTION: (
            "Diese Nachricht sieht aus, als wolle sie meine Anweisungen ändern, deshalb habe ich"
            " nicht danach gehandelt. Bitte stell deine Frage direkt."
        ),
        GUARD_OFF_TOPIC: (
            "Ich bin ein Assistent für die Wissensdatenbank: Ich beantworte Fragen aus den"
            " gespeicherten Dokumenten und Notizen, dabei kann ich also nicht helfen. Frag mich"
            " etwas zur Wissensdatenbank."
        ),
    },
)

_FR = GuardWords(
    too_long=(
        "Ce message est trop long pour moi ({length}\u00a0caractères\u00a0; la limite est de"
        " {limit}). Pouvez-vous le raccourcir ou l’envoyer sous forme de fichier\u00a0?"
    ),
    budget_spent="Le budget de réponses du jour est épuisé. Merci de réessayer demain.",
    budget_unavailable=(
        "Je ne peux pas vérifier le budget du jour pour l’instant, je ne réponds donc pas."
        " Désolé\u00a0!"
    ),
    rate_limited=(
        "Vous avez envoyé beaucoup de questions ces {minutes}\u00a0dernières minutes. Merci de"
        " patienter un peu avant de reposer votre question."
    ),
    thread_too_long=(
        "Cette conversation est devenue très longue. Envoyez /new pour en commencer une nouvelle."
    ),
    guards={
        GUARD_PAYMENT_CARD: (
            "Je ne peux pas accepter de numéro de carte \u2014 merci de le retirer et de reposer"
            " votre question. Rien n’a été enregistré."
        ),
        GUARD_IBAN: (
            "Je ne peux pas accepter de numéro de compte bancaire (IBAN) \u2014 merci de le retirer"
            " et de reposer votre question. Rien n’a été enregistré."
        ),
        GUARD_PROMPT_INJECTION: (
            "Ce message semble vouloir modifier mes instructions, je n’y ai donc pas donné suite."
            " Posez directement votre question."
        ),
        GUARD_OFF_TOPIC: (
            "Je suis un assistant de base de connaissances\u00a0: je réponds aux questions à partir"
            " des documents et des notes enregistrés, je ne peux donc pas vous aider pour cela."
            " Posez-moi une question sur la base de connaissances."
        ),
    },
)

_ES = GuardWords(
    too_long=(
        "Ese mensaje es demasiado largo para mí ({length} caracteres; el límite es {limit})."
        " ¿Puedes acortarlo o enviarlo como archivo?"
    ),
    budget_spent="El presupuesto de respuestas de hoy se ha agotado. Vuelve a intentarlo mañana.",
    budget_unavailable=(
        "Ahora mismo no puedo comprobar el presupuesto de hoy, así que no voy a responder. ¡Lo"
        " siento!"
    ),
    rate_limited=(
        "Has enviado muchas preguntas en los últimos {minutes} minutos. Espera un poco y vuelve a"
        " preguntar."
    ),
    thread_too_long="Esta conversación se ha vuelto muy larga. Envía /new para empezar una nueva.",
    guards={
        GUARD_PAYMENT_CARD: (
            "No puedo aceptar números de tarjeta \u2014 elimínalo y vuelve a preguntar. No se ha"
            " guardado nada."
        ),
        GUARD_IBAN: (
            "No puedo aceptar números de cuenta bancaria (IBAN) \u2014 elimínalo y vuelve a"
            " preguntar. No se ha guardado nada."
        ),
        GUARD_PROMPT_INJECTION: (
            "Ese mensaje parece intentar cambiar mis instrucciones, así que no he actuado en"
            " consecuencia. Haz tu pregunta directamente."
        ),
        GUARD_OFF_TOPIC: (
            "Soy un asistente de base de conocimiento: respondo preguntas a partir de los"
            " documentos y notas guardados, así que no puedo ayudarte con eso. Pregúntame algo de"
            " la base de conocimiento."
        ),
    },
)

_IT = GuardWords(
    too_long=(
        "Questo messaggio è troppo lungo per me ({length} caratteri; il limite è {limit}). Puoi"
        " accorciarlo o inviarlo come file?"
    ),
    budget_spent="Il budget di oggi per le risposte è esaurito. Riprova domani.",
    budget_unavailable=(
        "Al momento non riesco a controllare il budget di oggi, quindi non rispondo. Mi dispiace!"
    ),
    rate_limited=(
        "Hai inviato molte domande negli ultimi {minutes} minuti. Aspetta un po’ e poi chiedi di"
        " nuovo."
    ),
    thread_too_long=(
        "Questa conversazione è diventata molto lunga. Invia /new per iniziarne una nuova."
    ),
    guards={
        GUARD_PAYMENT_CARD: (
            "Non posso accettare numeri di carta \u2014 rimuovilo e chiedi di nuovo. Non è stato"
            " salvato nulla."
        ),
        GUARD_IBAN: (
            "Non posso accettare numeri di conto bancario (IBAN) \u2014 rimuovilo e chiedi di"
            " nuovo. Non è stato salvato nulla."
        ),
        GUARD_PROMPT_INJECTION: (
            "Questo messaggio sembra voler cambiare le mie istruzioni, quindi non gli ho dato"
            " seguito. Fai direttamente la tua domanda."
        ),
        GUARD_OFF_TOPIC: (
            "Sono un assistente per la base di conoscenza: rispondo alle domande a partire dai"
            " documenti e dalle note salvati, quindi non posso aiutarti con questo. Chiedimi"
            " qualcosa sulla base di conoscenza."
        ),
    },
)

_PT = GuardWords(
    too_long=(
        "Essa mensagem é demasiado longa para mim ({length} caracteres; o limite é {limit}). Pode"
        " encurtá-la ou enviá-la como ficheiro?"
    ),
    budget_spent="O orçamento de respostas de hoje esgotou-se. Tente novamente amanhã.",
    budget_unavailable=(
        "Não consigo verificar o orçamento de hoje neste momento, por isso não vou responder."
        " Desculpe!"
    ),
    rate_limited=(
        "Enviou muitas perguntas nos últimos {minutes} minutos. Aguarde um pouco e pergunte"
        " novamente."
    ),
    thread_too_long="Esta conversa ficou muito longa. Envie /new para começar uma nova.",
    guards={
        GUARD_PAYMENT_CARD: (
            "Não posso aceitar números de cartão \u2014 remova-o e pergunte novamente. Nada foi"
            " guardado."
        ),
        GUARD_IBAN: (
            "Não posso aceitar números de conta bancária (IBAN) \u2014 remova-o e pergunte"
            " novamente. Nada foi guardado."
        ),
        GUARD_PROMPT_INJECTION: (
            "Essa mensagem parece tentar alterar as minhas instruções, por isso não a segui. Faça a"
            " sua pergunta diretamente."
        ),
        GUARD_OFF_TOPIC: (
            "Sou um assistente da base de conhecimento: respondo a perguntas a partir dos"
            " documentos e notas guardados, por isso não posso ajudar com isso. Pergunte-me algo"
            " sobre a base de conhecimento."
        ),
    },
)

_RU = GuardWords(
    too_long=(
        "Это сообщение слишком длинное для меня ({length} символов; ограничение \u2014 {limit})."
        " Можете сократить его или отправить файлом?"
    ),
    budget_spent="Бюджет на ответы на сегодня исчерпан. Пожалуйста, попробуйте завтра.",
    budget_unavailable=(
        "Сейчас я не могу проверить сегодняшний бюджет, поэтому не буду отвечать. Извините!"
    ),
    rate_limited=(
        "Вы отправили много вопросов за последние {minutes} мин. Пожалуйста, подождите немного и"
        " спросите снова."
    ),
    thread_too_long="Этот разговор стал очень длинным. Отправьте /new, чтобы начать новый.",
    guards={
        GUARD_PAYMENT_CARD: (
            "Я не принимаю номера карт \u2014 пожалуйста, удалите его и спросите снова. Ничего не"
            " сохранено."
        ),
        GUARD_IBAN: (
            "Я не принимаю номера банковских счетов (IBAN) \u2014 пожалуйста, удалите его и"
            " спросите снова. Ничего не сохранено."
        ),
        GUARD_PROMPT_INJECTION: (
            "Похоже, это сообщение пытается изменить мои инструкции, поэтому я не стал его"
            " выполнять. Пожалуйста, задайте вопрос напрямую."
        ),
        GUARD_OFF_TOPIC: (
            "Я помощник по базе знаний: отвечаю на вопросы по сохранённым документам и заметкам,"
            " поэтому с этим помочь не могу. Спросите меня о чём-нибудь из базы знаний."
        ),
    },
)

_ZH = GuardWords(
    too_long=(
        "这条消息太长了（{length} 个字符；上限为 {limit}）。能否缩短一些，或者以文件形式发送？"
    ),
    budget_spent="今天的回答预算已用完。请明天再试。",
    budget_unavailable="现在无法查看今天的预算，所以我不作回答。抱歉！",
    rate_limited="你在过去 {minutes} 分钟内发送了很多问题。请稍等片刻再问。",
    thread_too_long="这段对话已经很长了。发送 /new 开始新的对话。",
    guards={
        GUARD_PAYMENT_CARD: "我不能接收银行卡号\u2014\u2014请删除后再问。没有保存任何内容。",
        GUARD_IBAN: "我不能接收银行账号（IBAN）\u2014\u2014请删除后再问。没有保存任何内容。",
        GUARD_PROMPT_INJECTION: (
            "这条消息似乎试图更改我的指令，所以我没有照做。请直接提出你的问题。"
        ),
        GUARD_OFF_TOPIC: (
            "我是知识库助手：我根据已保存的文档和笔记回答问题，所以这件事我帮不上忙。"
            "请问我知识库里的内容。"
        ),
    },
)

_JA = GuardWords(
    too_long=(
        "このメッセージは長すぎます（{length} 文字、上限は {limit} 文字）。短くするか、"
        "ファイルとして送ってください。"
    ),
    budget_spent="今日の回答の予算を使い切りました。明日もう一度お試しください。",
    budget_unavailable="今日の予算を今は確認できないため、お答えできません。申し訳ありません。",
    rate_limited=(
        "この {minutes} 分間にたくさんの質問をいただきました。"
        "少し待ってからもう一度お尋ねください。"
    ),
    thread_too_long="この会話はとても長くなりました。/new を送ると新しい会話を始められます。",
    guards={
        GUARD_PAYMENT_CARD: (
            "カード番号は受け付けられません。削除してからもう一度お尋ねください。"
            "何も保存していません。"
        ),
        GUARD_IBAN: (
            "銀行口座番号（IBAN）は受け付けられません。削除してからもう一度お尋ねください。"
            "何も保存していません。"
        ),
        GUARD_PROMPT_INJECTION: (
            "このメッセージは私への指示を変えようとしているように見えるため、対応しませんでした。"
            "ご質問を直接お書きください。"
        ),
        GUARD_OFF_TOPIC: (
            "私はナレッジベースのアシスタントです。"
            "保存された文書とメモをもとに質問にお答えするため、それについてはお手伝いできません。"
            "ナレッジベースの内容についてお尋ねください。"
        ),
    },
)

_WORDS: Final[Mapping[str, GuardWords]] = {
    "en": _EN,
    "de": _DE,
    "fr": _FR,
    "es": _ES,
    "it": _IT,
    "pt": _PT,
    "ru": _RU,
    "zh": _ZH,
    "ja": _JA,
}


def guard_words(language: str) -> GuardWords:
    """The refusals of `language` (an ISO 639-1 code), English for one without them."""
    return _WORDS.get(language, _EN)
