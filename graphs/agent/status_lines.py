"""The status line a tool shows while it runs ("Searching the knowledge base..."), in the
member's language: one table, by language and tool.

The language is the turn's, chosen as the offline answerer chooses it
(`graphs.llm.offline_language.answer_language`): the question's when it is clear, else the
bot's `LANGUAGE`. A language without lines here gets the English ones; a tool without a
line, the language's "Working...".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["STATUS_LINES", "WORKING", "status_line"]

#: The line of a tool the table does not know.
WORKING: Final = ""

STATUS_LINES: Final[Mapping[str, Mapping[str, str]]] = {
    "en": {
        "search_knowledge": "Searching the knowledge base...",
        "search_private": "Searching your notes...",
        "search_memory": "Looking through our past conversations...",
        "get_entry": "Opening the document...",
        "draft_contact_message": "Asking the owner...",
        "share_to_knowledge": "Asking the owner...",
        WORKING: "Working...",
    },
    "de": {
        "search_knowledge": "Ich durchsuche die Wissensdatenbank...",
        "search_private": "Ich durchsuche deine Notizen...",
        "search_memory": "Ich sehe unsere bisherigen Gespräche durch...",
        "get_entry": "Ich öffne das Dokument...",
        "draft_contact_message": "Ich frage den Betreiber...",
        "share_to_knowledge": "Ich frage den Betreiber...",
        WORKING: "Einen Moment...",
    },
    "fr": {
        "search_knowledge": "Recherche dans la base de connaissances...",
        "search_private": "Recherche dans vos notes...",
        "search_memory": "Je parcours nos conversations passées...",
        "get_entry": "Ouverture du document...",
        "draft_contact_message": "Je demande au propriétaire...",
        "share_to_knowledge": "Je demande au propriétaire...",
        WORKING: "Un instant...",
    },
    "es": {
        "search_knowledge": "Buscando en la base de conocimiento...",
        "search_private": "Buscando en tus notas...",
        "search_memory": "Revisando nuestras conversaciones anteriores...",
        "get_entry": "Abriendo el documento...",
        "draft_contact_message": "Consultando al propietario...",
        "share_to_knowledge": "Consultando al propietario...",
        WORKING: "Un momento...",
    },
    "it": {
        "search_knowledge": "Cerco nella base di conoscenza...",
        "search_private": "Cerco nelle tue note...",
        "search_memory": "Ripercorro le nostre conversazioni precedenti...",
        "get_entry": "Apro il documento...",
        "draft_contact_message": "Chiedo al proprietario...",
        "share_to_knowledge": "Chiedo al proprietario...",
        WORKING: "Un momento...",
    },
    "pt": {
        "search_knowledge": "A pesquisar na base de conhecimento...",
        "search_private": "A pesquisar nas suas notas...",
        "search_memory": "A rever as nossas conversas anteriores...",
        "get_entry": "A abrir o documento...",
        "draft_contact_message": "A perguntar ao proprietário...",
        "share_to_knowledge": "A perguntar ao proprietário...",
        WORKING: "Um momento...",
    },
    "ru": {
        "search_knowledge": "Ищу в базе знаний...",
        "search_private": "Ищу в ваших заметках...",
        "search_memory": "Просматриваю наши прошлые разговоры...",
        "get_entry": "Открываю документ...",
        "draft_contact_message": "Спрашиваю владельца...",
        "share_to_knowledge": "Спрашиваю владельца...",
        WORKING: "Минутку...",
    },
    "zh": {
        "search_knowledge": "正在搜索知识库...",
        "search_private": "正在搜索你的笔记...",
        "search_memory": "正在查看我们以前的对话...",
        "get_entry": "正在打开文档...",
        "draft_contact_message": "正在询问管理员...",
        "share_to_knowledge": "正在询问管理员...",
        WORKING: "请稍候...",
    },
    "ja": {
        "search_knowledge": "ナレッジベースを検索しています...",
        "search_private": "あなたのメモを検索しています...",
        "search_memory": "これまでの会話を確認しています...",
        "get_entry": "文書を開いています...",
        "draft_contact_message": "管理者に確認しています...",
        "share_to_knowledge": "管理者に確認しています...",
        WORKING: "少々お待ちください...",
    },
}


def status_line(tool: str, language: str) -> str:
    """What to show while `tool` runs, in `language`."""
    lines = STATUS_LINES.get(language, STATUS_LINES["en"])
    return lines.get(tool) or lines[WORKING]
