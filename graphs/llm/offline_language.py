"""The offline answerer's words in the member's language: refusals, the words around quotes,
tool outcomes and apologies, in the languages the guards and evals read (English and the
eight of `graphs.guards.languages`).

The language of a reply is the question's, when it is clear enough to tell
(`answer_language`, lingua through `storage.text_language`, vouched for by its stopwords),
else the bot's default (`LANGUAGE`). Quotes stay in their document's language: only the
words around them change. Every refusal, in any of these languages, is recognised by
`is_refusal`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphs.guards.languages import RULES_BY_LANGUAGE
from graphs.llm.offline_stems import vouched_language
from storage.text_language import detect_language

__all__ = [
    "ANSWER_LANGUAGES",
    "DEFAULT_LANGUAGE",
    "Phrases",
    "answer_language",
    "is_refusal",
    "phrases",
]

DEFAULT_LANGUAGE = "en"
#: The languages the offline answerer replies in: English and those the guards read.
ANSWER_LANGUAGES: tuple[str, ...] = (DEFAULT_LANGUAGE, *RULES_BY_LANGUAGE)
#: A question's language decides the reply from this confidence on (lingua's 0-1 value):
#: "ok" or "VPN?" say nothing, and the bot's default answers them.
_QUESTION_CONFIDENCE = 0.5


@dataclass(frozen=True, slots=True)
class Phrases:
    """One language's words. `{title}`, `{message}` and `{reason}` are filled in."""

    refusal: str
    refusal_with_notes: str
    #: Every refusal starts with this and holds `refusal_marker` (see `is_refusal`).
    refusal_prefix: str
    refusal_marker: str
    group_note: str
    from_document: str
    from_note: str
    also_document: str
    also_note: str
    again_document: str
    again_note: str
    #: Put around a quote: after the lead ("From “T”: “") and at its end ("”").
    quote_open: str
    quote_close: str
    section: str
    sorry: str
    tool_failed: str
    delivered: str
    delivered_message: str
    message_rejected: str
    shared: str
    share_rejected: str
    reason: str


_EN = Phrases(
    refusal="I couldn't find anything about that in the knowledge base, so I won't guess.",
    refusal_with_notes=(
        "I couldn't find anything about that in the knowledge base or your notes, so I won't guess."
    ),
    refusal_prefix="I couldn't find anything about that",
    refusal_marker="so I won't guess.",
    group_note=(
        "(In group chats I don't search private notes; ask me in a private chat to search yours.)"
    ),
    from_document="From “{title}”",
    from_note="From your note “{title}”",
    also_document="Also from “{title}”",
    also_note="Also from your note “{title}”",
    again_document="“{title}” also says",
    again_note="Your note “{title}” also says",
    quote_open=": “",
    quote_close="”",
    section=" ({section})",
    sorry="Sorry, I couldn't complete that: ",
    tool_failed="a tool failed.",
    delivered="Your message was delivered to the owner.",
    delivered_message="Your message was delivered to the owner: “{message}”",
    message_rejected="The owner rejected your message, so it was not sent.",
    shared="Done: “{title}” is now in the shared knowledge base.",
    share_rejected="The owner rejected sharing that note, so it stays private.",
    reason=" Reason: {reason}",
)

_DE = Phrases(
    refusal="Dazu habe ich in der Wissensdatenbank nichts gefunden, deshalb rate ich nicht.",
    refusal_with_notes=(
        "Dazu habe ich in der Wissensdatenbank und in deinen Notizen nichts gefunden,"
        " deshalb rate ich nicht."
    ),
    refusal_prefix="Dazu habe ich in der Wissensdatenbank",
    refusal_marker="deshalb rate ich nicht.",
    group_note=(
        "(In Gruppenchats durchsuche ich keine privaten Notizen; frag mich in einem privaten"
        " Chat, dann durchsuche ich deine.)"
    ),
    from_document="Aus „{title}“",
    from_note="Aus deiner Notiz „{title}“",
    also_document="Außerdem aus „{title}“",
    also_note="Außerdem aus deiner Notiz „{title}“",
    again_document="„{title}“ sagt außerdem",
    again_note="Deine Notiz „{title}“ sagt außerdem",
    quote_open=": „",
    quote_close="“",
    section=" ({section})",
    sorry="Das konnte ich leider nicht erledigen: ",
    tool_failed="ein Werkzeug ist fehlgeschlagen.",
    delivered="Deine Nachricht wurde an den Betreiber zugestellt.",
    delivered_message="Deine Nachricht wurde an den Betreiber zugestellt: „{message}“",
    message_rejected="Der Betreiber hat deine Nachricht abgelehnt, sie wurde nicht gesendet.",
    shared="Erledigt: „{title}“ ist jetzt in der gemeinsamen Wissensdatenbank.",
    share_rejected="Der Betreiber hat das Teilen der Notiz abgelehnt, sie bleibt privat.",
    reason=" Grund: {reason}",
)

_FR = Phrases(
    refusal=(
        "Je n’ai rien trouvé à ce sujet dans la base de connaissances,"
        " je préfère donc ne pas deviner."
    ),
    refusal_with_notes=(
        "Je n’ai rien trouvé à ce sujet dans la base de connaissances ni dans"
        " vos notes, je préfère donc ne pas deviner."
    ),
    refusal_prefix="Je n’ai rien trouvé à ce sujet",
    refusal_marker="je préfère donc ne pas deviner.",
    group_note=(
        "(Dans les discussions de groupe, je ne cherche pas dans les notes privées ;"
        " posez-moi la question en privé pour chercher dans les vôtres.)"
    ),
    from_document="D’après «\u00a0{title}\u00a0»",
    from_note="D’après votre note «\u00a0{title}\u00a0»",
    also_document="Aussi d’après «\u00a0{title}\u00a0»",
    also_note="Aussi d’après votre note «\u00a0{title}\u00a0»",
    again_document="«\u00a0{title}\u00a0» dit aussi",
    again_note="Votre note «\u00a0{title}\u00a0» dit aussi",
    quote_open="\u00a0: «\u00a0",
    quote_close="\u00a0»",
    section=" ({section})",
    sorry="Désolé, je n’ai pas pu le faire\u00a0: ",
    tool_failed="un outil a échoué.",
    delivered="Votre message a été transmis au propriétaire.",
    delivered_message=(
        "Votre message a été transmis au propriétaire\u00a0: «\u00a0{message}\u00a0»"
    ),
    message_rejected="Le propriétaire a refusé votre message, il n’a pas été envoyé.",
    shared=(
        "C’est fait\u00a0: «\u00a0{title}\u00a0» est maintenant dans la base de"
        " connaissances partagée."
    ),
    share_rejected="Le propriétaire a refusé le partage de cette note, elle reste privée.",
    reason=" Motif\u00a0: {reason}",
)

_ES = Phrases(
    refusal=(
        "No he encontrado nada sobre eso en la base de conocimiento, así que no voy a adivinar."
    ),
    refusal_with_notes=(
        "No he encontrado nada sobre eso en la base de conocimiento ni en tus notas,"
        " así que no voy a adivinar."
    ),
    refusal_prefix="No he encontrado nada sobre eso",
    refusal_marker="así que no voy a adivinar.",
    group_note=(
        "(En los chats de grupo no busco en las notas privadas; pregúntame en un chat"
        " privado para buscar en las tuyas.)"
    ),
    from_document="Según «{title}»",
    from_note="Según tu nota «{title}»",
    also_document="También según «{title}»",
    also_note="También según tu nota «{title}»",
    again_document="«{title}» también dice",
    again_note="Tu nota «{title}» también dice",
    quote_open=": «",
    quote_close="»",
    section=" ({section})",
    sorry="Lo siento, no he podido hacerlo: ",
    tool_failed="ha fallado una herramienta.",
    delivered="Tu mensaje se ha entregado al propietario.",
    delivered_message="Tu mensaje se ha entregado al propietario: «{message}»",
    message_rejected="El propietario ha rechazado tu mensaje, así que no se ha enviado.",
    shared="Hecho: «{title}» ya está en la base de conocimiento compartida.",
    share_rejected="El propietario ha rechazado compartir esa nota, así que sigue siendo privada.",
    reason=" Motivo: {reason}",
)

_IT = Phrases(
    refusal=(
        "Non ho trovato nulla al riguardo nella base di conoscenza, quindi non tiro a indovinare."
    ),
    refusal_with_notes=(
        "Non ho trovato nulla al riguardo nella base di conoscenza né nelle tue note,"
        " quindi non tiro a indovinare."
    ),
    refusal_prefix="Non ho trovato nulla al riguardo",
    refusal_marker="quindi non tiro a indovinare.",
    group_note=(
        "(Nelle chat di gruppo non cerco nelle note private; chiedimelo in una chat privata"
        " per cercare nelle tue.)"
    ),
    from_document="Da «{title}»",
    from_note="Dalla tua nota «{title}»",
    also_document="Anche da «{title}»",
    also_note="Anche dalla tua nota «{title}»",
    again_document="«{title}» dice anche",
    again_note="La tua nota «{title}» dice anche",
    quote_open=": «",
    quote_close="»",
    section=" ({section})",
    sorry="Mi dispiace, non sono riuscito a farlo: ",
    tool_failed="uno strumento non ha funzionato.",
    delivered="Il tuo messaggio è stato consegnato al proprietario.",
    delivered_message="Il tuo messaggio è stato consegnato al proprietario: «{message}»",
    message_rejected="Il proprietario ha rifiutato il tuo messaggio, quindi non è stato inviato.",
    shared="Fatto: «{title}» ora è nella base di conoscenza condivisa.",
    share_rejected="Il proprietario ha rifiutato di condividere la nota, quindi resta privata.",
    reason=" Motivo: {reason}",
)

_PT = Phrases(
    refusal="Não encontrei nada sobre isso na base de conhecimento, por isso não vou adivinhar.",
    refusal_with_notes=(
        "Não encontrei nada sobre isso na base de conhecimento nem nas suas notas,"
        " por isso não vou adivinhar."
    ),
    refusal_prefix="Não encontrei nada sobre isso",
    refusal_marker="por isso não vou adivinhar.",
    group_note=(
        "(Nos chats de grupo não procuro nas notas privadas; pergunte-me num chat privado"
        " para procurar nas suas.)"
    ),
    from_document="De acordo com “{title}”",
    from_note="De acordo com a sua nota “{title}”",
    also_document="Também de acordo com “{title}”",
    also_note="Também de acordo com a sua nota “{title}”",
    again_document="“{title}” também diz",
    again_note="A sua nota “{title}” também diz",
    quote_open=": “",
    quote_close="”",
    section=" ({section})",
    sorry="Desculpe, não consegui fazer isso: ",
    tool_failed="uma ferramenta falhou.",
    delivered="A sua mensagem foi entregue ao proprietário.",
    delivered_message="A sua mensagem foi entregue ao proprietário: “{message}”",
    message_rejected="O proprietário recusou a sua mensagem, por isso não foi enviada.",
    shared="Feito: “{title}” está agora na base de conhecimento partilhada.",
    share_rejected="O proprietário recusou partilhar essa nota, por isso continua privada.",
    reason=" Motivo: {reason}",
)

_RU = Phrases(
    refusal="Я ничего не нашёл об этом в базе знаний, поэтому не буду гадать.",
    refusal_with_notes=(
        "Я ничего не нашёл об этом в базе знаний и в ваших заметках, поэтому не буду гадать."
    ),
    refusal_prefix="Я ничего не нашёл об этом",
    refusal_marker="поэтому не буду гадать.",
    group_note=(
        "(В групповых чатах я не ищу в личных заметках; спросите меня в личном чате,"
        " чтобы я поискал в ваших.)"
    ),
    from_document="Из «{title}»",
    from_note="Из вашей заметки «{title}»",
    also_document="Также из «{title}»",
    also_note="Также из вашей заметки «{title}»",
    again_document="В «{title}» также сказано",
    again_note="В вашей заметке «{title}» также сказано",
    quote_open=": «",
    quote_close="»",
    section=" ({section})",
    sorry="Извините, не получилось: ",
    tool_failed="инструмент не сработал.",
    delivered="Ваше сообщение доставлено владельцу.",
    delivered_message="Ваше сообщение доставлено владельцу: «{message}»",
    message_rejected="Владелец отклонил ваше сообщение, поэтому оно не отправлено.",
    shared="Готово: «{title}» теперь в общей базе знаний.",
    share_rejected="Владелец отказался делиться этой заметкой, поэтому она остаётся личной.",
    reason=" Причина: {reason}",
)

_ZH = Phrases(
    refusal="我在知识库中没有找到相关内容，所以不做猜测。",
    refusal_with_notes="我在知识库和你的笔记中没有找到相关内容，所以不做猜测。",
    refusal_prefix="我在知识库",
    refusal_marker="所以不做猜测。",
    group_note="（在群聊中我不会搜索私人笔记；请在私聊中问我，我会搜索你的笔记。）",
    from_document="摘自“{title}”",
    from_note="摘自你的笔记“{title}”",
    also_document="另摘自“{title}”",
    also_note="另摘自你的笔记“{title}”",
    again_document="“{title}”还写道",
    again_note="你的笔记“{title}”还写道",
    quote_open="：“",
    quote_close="”",
    section="（{section}）",
    sorry="抱歉，无法完成：",
    tool_failed="一个工具出错了。",
    delivered="你的消息已转达给管理员。",
    delivered_message="你的消息已转达给管理员：“{message}”",
    message_rejected="管理员拒绝了你的消息，所以没有发送。",
    shared="完成：“{title}”已加入共享知识库。",
    share_rejected="管理员拒绝共享这条笔记，它仍然是私人的。",
    reason=" 原因：{reason}",
)

_JA = Phrases(
    refusal="ナレッジベースにはそれについての情報が見つからなかったため、推測でお答えするのは控えます。",
    refusal_with_notes=(
        "ナレッジベースにもあなたのメモにもそれについての情報が見つからなかったため、"
        "推測でお答えするのは控えます。"
    ),
    refusal_prefix="ナレッジベース",
    refusal_marker="推測でお答えするのは控えます。",
    group_note=(
        "（グループチャットでは個人のメモを検索しません。個人チャットで聞いていただければ、"
        "あなたのメモを検索します。）"
    ),
    from_document="「{title}」より",
    from_note="あなたのメモ「{title}」より",
    also_document="「{title}」からも",
    also_note="あなたのメモ「{title}」からも",
    again_document="「{title}」にはこうもあります",
    again_note="あなたのメモ「{title}」にはこうもあります",
    quote_open="：「",
    quote_close="」",
    section="（{section}）",
    sorry="申し訳ありません、完了できませんでした：",
    tool_failed="ツールでエラーが発生しました。",
    delivered="メッセージを管理者に届けました。",
    delivered_message="メッセージを管理者に届けました：「{message}」",
    message_rejected="管理者がメッセージを却下したため、送信されませんでした。",
    shared="完了：「{title}」が共有ナレッジベースに追加されました。",
    share_rejected="管理者がメモの共有を却下したため、メモは非公開のままです。",
    reason=" 理由：{reason}",
)

_PHRASES: Mapping[str, Phrases] = {
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


def phrases(language: str) -> Phrases:
    """The words of `language` (an ISO 639-1 code), English for one without them."""
    return _PHRASES.get(language, _EN)


def answer_language(question: str, default: str) -> str:
    """The language to answer `question` in: its own when clear and known, else `default`.
    The detector's guess must be vouched for by the question's stopwords, which overrule it
    when they clearly belong to another language (it reads "What is my locker code?" as
    German and "Who won the chess tournament?" as French) and leave a question of under
    four words without any to `default` ("Travel rules" as French). Read as another
    language than English: 66 of SciFact's 1,109 English claims and 386 of NFCorpus's 3,237
    English queries by the detector alone, 17 and 20 so vouched for; the 108 questions of
    benchmarks/multilingual_set.json are read as before."""
    found = detect_language(question, min_confidence=_QUESTION_CONFIDENCE)
    if found is not None:
        found = vouched_language(question, found)
    return found if found is not None and found in _PHRASES else default


def is_refusal(text: str) -> bool:
    """Whether `text` is the offline model's "nothing found, so no answer" reply, in any
    of its languages."""
    return any(
        text.startswith(words.refusal_prefix) and words.refusal_marker in text
        for words in _PHRASES.values()
    )
