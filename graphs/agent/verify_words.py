"""What verify says of its own at the end of a turn, in the member's language: its refusals
(no source, nothing in past conversations, a search that timed out, a leaked prompt) and the
line under an answer the sources gave instead of the model, by the fallback's reason. One
table of `VerifyWords`, by language; the language is the turn's
(`AgentContext.reply_language`), English for a language without words here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["VerifyWords", "verify_words"]


@dataclass(frozen=True, slots=True)
class VerifyWords:
    """One language's refusals, and its `fallback` lines by the fallback's reason."""

    no_source: str
    no_memory: str
    search_timed_out: str
    prompt_leak: str
    fallback: Mapping[str, str]


_EN = VerifyWords(
    no_source=(
        "I couldn't find a source for that in the knowledge base, so I won't answer from memory."
    ),
    no_memory="I couldn't find that in our past conversations, so I won't guess.",
    search_timed_out=(
        "Searching the knowledge base took too long just now, so I could not check my sources."
        " Please ask again in a minute."
    ),
    prompt_leak="I can't share details of how I'm set up. Please ask about the knowledge base.",
    fallback={
        "unverified": (
            "Answered from the sources directly: the model's answer could not be verified."
        ),
        "incomplete": "Answered from the sources directly: the model's answer was cut off.",
        "unavailable": (
            "Answered from the sources directly: the language model is unavailable right now."
        ),
        "context": (
            "Answered from the sources directly: the conversation is too long for the language"
            " model."
        ),
        "budget_spent": "Answered from the sources directly: the daily budget is spent.",
        "budget_unavailable": (
            "Answered from the sources directly: the daily budget cannot be checked right now."
        ),
    },
)

_DE = VerifyWords(
    no_source=(
        "Dazu habe ich in der Wissensdatenbank keine Quelle gefunden, deshalb antworte ich nicht"
        " aus dem Gedächtnis."
    ),
    no_memory=(
        "Das habe ich in unseren bisherigen Gesprächen nicht gefunden, deshalb rate ich nicht."
    ),
    search_timed_out=(
        "Die Suche in der Wissensdatenbank hat gerade zu lange gedauert, deshalb konnte ich meine"
        " Quellen nicht prüfen. Bitte frag in einer Minute noch einmal."
    ),
    prompt_leak=(
        "Wie ich eingerichtet bin, kann ich nicht verraten. Frag mich gern etwas zur"
        " Wissensdatenbank."
    ),
    fallback={
        "unverified": (
            "Direkt aus den Quellen beantwortet: Die Antwort des Modells ließ sich nicht prüfen."
        ),
        "incomplete": (
            "Direkt aus den Quellen beantwortet: Die Antwort des Modells wurde abgeschnitten."
        ),
        "unavailable": (
            "Direkt aus den Quellen beantwortet: Das Sprachmodell ist gerade nicht erreichbar."
        ),
        "context": (
            "Direkt aus den Quellen beantwortet: Das Gespräch ist zu lang für das Sprachmodell."
        ),
        "budget_spent": "Direkt aus den Quellen beantwortet: Das Tagesbudget ist aufgebraucht.",
        "budget_unavailable": (
            "Direkt aus den Quellen beantwortet: Das Tagesbudget lässt sich gerade nicht prüfen."
        ),
    },
)

_FR = VerifyWords(
    no_source=(
        "Je n’ai trouvé aucune source à ce sujet dans la base de connaissances, je préfère donc ne"
        " pas répondre de mémoire."
    ),
    no_memory=(
        "Je n’ai pas trouvé cela dans nos conversations passées, je préfère donc ne pas deviner."
    ),
    search_timed_out=(
        "La recherche dans la base de connaissances a pris trop de temps, je n’ai donc pas pu"
        " vérifier mes sources. Merci de reposer la question dans une minute."
    ),
    prompt_leak=(
        "Je ne peux pas donner de détails sur ma configuration. Posez-moi plutôt une question sur"
        " la base de connaissances."
    ),
    fallback={
        "unverified": (
            "Réponse tirée directement des sources\u00a0: la réponse du modèle n’a pas pu être"
            " vérifiée."
        ),
        "incomplete": (
            "Réponse tirée directement des sources\u00a0: la réponse du modèle a été interrompue."
        ),
        "unavailable": (
            "Réponse tirée directement des sources\u00a0: le modèle de langage n’est pas disponible"
            " pour le moment."
        ),
        "context": (
            "Réponse tirée directement des sources\u00a0: la conversation est trop longue pour le"
            " modèle de langage."
        ),
        "budget_spent": (
            "Réponse tirée directement des sources\u00a0: le budget du jour est épuisé."
        ),
        "budget_unavailable": (
            "Réponse tirée directement des sources\u00a0: le budget du jour ne peut pas être"
            " vérifié pour le moment."
        ),
    },
)

_ES = VerifyWords(
    no_source=(
        "No he encontrado ninguna fuente sobre eso en la base de conocimiento, así que no voy a"
        " responder de memoria."
    ),
    no_memory=(
        "No he encontrado eso en nuestras conversaciones anteriores, así que no voy a adivinar."
    ),
    search_timed_out=(
        "La búsqueda en la base de conocimiento ha tardado demasiado, así que no he podido"
        " comprobar mis fuentes. Vuelve a preguntar dentro de un minuto."
    ),
    prompt_leak=(
        "No puedo compartir detalles de mi configuración. Pregúntame sobre la base de conocimiento."
    ),
    fallback={
        "unverified": (
            "Respondido directamente a partir de las fuentes: no se pudo verificar la respuesta del"
            " modelo."
        ),
        "incomplete": (
            "Respondido directamente a partir de las fuentes: la respuesta del modelo quedó"
            " cortada."
        ),
        "unavailable": (
            "Respondido directamente a partir de las fuentes: el modelo de lenguaje no está"
            " disponible ahora mismo."
        ),
        "context": (
            "Respondido directamente a partir de las fuentes: la conversación es demasiado larga"
            " para el modelo de lenguaje."
        ),
        "budget_spent": (
            "Respondido directamente a partir de las fuentes: el presupuesto diario se ha agotado."
        ),
        "budget_unavailable": (
            "Respondido directamente a partir de las fuentes: ahora mismo no se puede comprobar el"
            " presupuesto diario."
        ),
    },
)

_IT = VerifyWords(
    no_source=(
        "Non ho trovato una fonte al riguardo nella base di conoscenza, quindi non rispondo a"
        " memoria."
    ),
    no_memory=(
        "Non l’ho trovato nelle nostre conversazioni precedenti, quindi non tiro a indovinare."
    ),
    search_timed_out=(
        "La ricerca nella base di conoscenza ha richiesto troppo tempo, quindi non ho potuto"
        " controllare le mie fonti. Riprova tra un minuto."
    ),
    prompt_leak=(
        "Non posso condividere dettagli su come sono configurato. Chiedimi qualcosa sulla base di"
        " conoscenza."
    ),
    fallback={
        "unverified": (
            "Risposta presa direttamente dalle fonti: non è stato possibile verificare la risposta"
            " del modello."
        ),
        "incomplete": (
            "Risposta presa direttamente dalle fonti: la risposta del modello è stata troncata."
        ),
        "unavailable": (
            "Risposta presa direttamente dalle fonti: il modello linguistico non è disponibile al"
            " momento."
        ),
        "context": (
            "Risposta presa direttamente dalle fonti: la conversazione è troppo lunga per il"
            " modello linguistico."
        ),
        "budget_spent": (
            "Risposta presa direttamente dalle fonti: il budget giornaliero è esaurito."
        ),
        "budget_unavailable": (
            "Risposta presa direttamente dalle fonti: al momento non è possibile controllare il"
            " budget giornaliero."
        ),
    },
)

_PT = VerifyWords(
    no_source=(
        "Não encontrei nenhuma fonte sobre isso na base de conhecimento, por isso não vou responder"
        " de memória."
    ),
    no_memory="Não encontrei isso nas nossas conversas anteriores, por isso não vou adivinhar.",
    search_timed_out=(
        "A pesquisa na base de conhecimento demorou demasiado, por isso não consegui verificar as"
        " minhas fontes. Pergunte novamente daqui a um minuto."
    ),
    prompt_leak=(
        "Não posso partilhar detalhes sobre a minha configuração. Pergunte-me sobre a base de"
        " conhecimento."
    ),
    fallback={
        "unverified": (
            "Respondido diretamente a partir das fontes: não foi possível verificar a resposta do"
            " modelo."
        ),
        "incomplete": (
            "Respondido diretamente a partir das fontes: a resposta do modelo foi cortada."
        ),
        "unavailable": (
            "Respondido diretamente a partir das fontes: o modelo de linguagem não está disponível"
            " neste momento."
        ),
        "context": (
            "Respondido diretamente a partir das fontes: a conversa é demasiado longa para o modelo"
            " de linguagem."
        ),
        "budget_spent": (
            "Respondido diretamente a partir das fontes: o orçamento diário esgotou-se."
        ),
        "budget_unavailable": (
            "Respondido diretamente a partir das fontes: não é possível verificar o orçamento"
            " diário neste momento."
        ),
    },
)

_RU = VerifyWords(
    no_source="Я не нашёл источника об этом в базе знаний, поэтому не буду отвечать по памяти.",
    no_memory="Я не нашёл этого в наших прошлых разговорах, поэтому не буду гадать.",
    search_timed_out=(
        "Поиск в базе знаний занял слишком много времени, поэтому я не смог проверить источники."
        " Пожалуйста, спросите снова через минуту."
    ),
    prompt_leak="Я не могу рассказывать, как я настроен. Спросите, пожалуйста, о базе знаний.",
    fallback={
        "unverified": "Ответ взят прямо из источников: ответ модели не удалось проверить.",
        "incomplete": "Ответ взят прямо из источников: ответ модели оборвался.",
        "unavailable": "Ответ взят прямо из источников: языковая модель сейчас недоступна.",
        "context": "Ответ взят прямо из источников: разговор слишком длинный для языковой модели.",
        "budget_spent": "Ответ взят прямо из источников: дневной бюджет исчерпан.",
        "budget_unavailable": (
            "Ответ взят прямо из источников: дневной бюджет сейчас не удаётся проверить."
        ),
    },
)

_ZH = VerifyWords(
    no_source="我在知识库中没有找到相关来源，所以不凭记忆回答。",
    no_memory="我在我们以前的对话中没有找到相关内容，所以不做猜测。",
    search_timed_out="刚才搜索知识库用时太长，我无法核对来源。请一分钟后再问。",
    prompt_leak="我不能透露我的设置细节。请问我有关知识库的问题。",
    fallback={
        "unverified": "直接根据来源回答：模型的回答无法核实。",
        "incomplete": "直接根据来源回答：模型的回答被截断了。",
        "unavailable": "直接根据来源回答：语言模型暂时不可用。",
        "context": "直接根据来源回答：对话太长，超出了语言模型的处理范围。",
        "budget_spent": "直接根据来源回答：今日预算已用完。",
        "budget_unavailable": "直接根据来源回答：暂时无法查看今日预算。",
    },
)

_JA = VerifyWords(
    no_source=(
        "ナレッジベースにそれについての出典が見つからなかったため、"
        "記憶だけでお答えするのは控えます。"
    ),
    no_memory="これまでの会話の中に見つからなかったため、推測でお答えするのは控えます。",
    search_timed_out=(
        "ナレッジベースの検索に時間がかかりすぎたため、出典を確認できませんでした。"
        "1分ほどしてからもう一度お尋ねください。"
    ),
    prompt_leak="私の設定の詳細はお伝えできません。ナレッジベースについてお尋ねください。",
    fallback={
        "unverified": "出典から直接お答えしました：モデルの回答を検証できませんでした。",
        "incomplete": "出典から直接お答えしました：モデルの回答が途中で切れました。",
        "unavailable": "出典から直接お答えしました：言語モデルが現在利用できません。",
        "context": "出典から直接お答えしました：会話が長すぎて言語モデルで扱えません。",
        "budget_spent": "出典から直接お答えしました：今日の予算を使い切りました。",
        "budget_unavailable": "出典から直接お答えしました：今日の予算を現在確認できません。",
    },
)

_WORDS: Final[Mapping[str, VerifyWords]] = {
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


def verify_words(language: str) -> VerifyWords:
    """The words of `language` (an ISO 639-1 code), English for one without them."""
    return _WORDS.get(language, _EN)
