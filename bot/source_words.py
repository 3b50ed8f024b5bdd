"""The lines a member reads while a source is saved, in their language: "Received, working on
it…", then "Saved", "Updated" or "Already saved" with the chunk count, where it went and the
card numbers masked in it. One table of `SourceWords`, by language.

A source's language is that of the text it brings (a note, a caption, a forwarded message)
when it is clear, else the bot's `LANGUAGE`, chosen as the offline answerer chooses a
question's (`graphs.llm.offline_language.answer_language`); English for a language without
words here. `{n}`, `{chunks}` and `{place}` are filled in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from graphs.llm.offline_language import answer_language

__all__ = ["SourceWords", "count_text", "source_words", "text_language"]


@dataclass(frozen=True, slots=True)
class SourceWords:
    """One language's words. A count has one form per plural class: one form (no plural),
    two (one, other) or three (Russian: one, few, many)."""

    received: str
    saved: str
    updated: str
    duplicate: str
    #: After the bold title: the chunk count and where the source went.
    detail: str
    private_place: str
    shared_place: str
    chunks: tuple[str, ...]
    masked: tuple[str, ...]


_WORDS: Final[Mapping[str, SourceWords]] = {
    "en": SourceWords(
        received="📥 Received, working on it…",
        saved="✅ Saved: ",
        updated="✅ Updated: ",
        duplicate="♻️ Already saved: ",
        detail=" ({chunks}) {place}.",
        private_place="in your private notes",
        shared_place="in the shared knowledge",
        chunks=("{n} chunk", "{n} chunks"),
        masked=(
            " I masked {n} card number in it (only the last four digits are kept).",
            " I masked {n} card numbers in it (only the last four digits are kept).",
        ),
    ),
    "de": SourceWords(
        received="📥 Erhalten, ich kümmere mich darum…",
        saved="✅ Gespeichert: ",
        updated="✅ Aktualisiert: ",
        duplicate="♻️ Schon gespeichert: ",
        detail=" ({chunks}) {place}.",
        private_place="in deinen privaten Notizen",
        shared_place="in der gemeinsamen Wissensdatenbank",
        chunks=("{n} Abschnitt", "{n} Abschnitte"),
        masked=(
            " Ich habe darin {n} Kartennummer unkenntlich gemacht (nur die letzten vier Ziffern"
            " bleiben).",
            " Ich habe darin {n} Kartennummern unkenntlich gemacht (nur die letzten vier Ziffern"
            " bleiben).",
        ),
    ),
    "fr": SourceWords(
        received="📥 Bien reçu, je m’en occupe…",
        saved="✅ Enregistré\u00a0: ",
        updated="✅ Mis à jour\u00a0: ",
        duplicate="♻️ Déjà enregistré\u00a0: ",
        detail=" ({chunks}) {place}.",
        private_place="dans vos notes privées",
        shared_place="dans la base de connaissances partagée",
        chunks=("{n}\u00a0extrait", "{n}\u00a0extraits"),
        masked=(
            " J’y ai masqué {n}\u00a0numéro de carte (seuls les quatre derniers chiffres sont"
            " conservés).",
            " J’y ai masqué {n}\u00a0numéros de carte (seuls les quatre derniers chiffres sont"
            " conservés).",
        ),
    ),
    "es": SourceWords(
        received="📥 Recibido, me pongo con ello…",
        saved="✅ Guardado: ",
        updated="✅ Actualizado: ",
        duplicate="♻️ Ya estaba guardado: ",
        detail=" ({chunks}) {place}.",
        private_place="en tus notas privadas",
        shared_place="en la base de conocimiento compartida",
        chunks=("{n} fragmento", "{n} fragmentos"),
        masked=(
            " He ocultado {n} número de tarjeta (solo se conservan los cuatro últimos dígitos).",
            " He ocultado {n} números de tarjeta (solo se conservan los cuatro últimos dígitos).",
        ),
    ),
    "it": SourceWords(
        received="📥 Ricevuto, ci sto lavorando…",
        saved="✅ Salvato: ",
        updated="✅ Aggiornato: ",
        duplicate="♻️ Già salvato: ",
        detail=" ({chunks}) {place}.",
        private_place="nelle tue note private",
        shared_place="nella base di conoscenza condivisa",
        chunks=("{n} frammento", "{n} frammenti"),
        masked=(
            " Ho oscurato {n} numero di carta (restano solo le ultime quattro cifre).",
            " Ho oscurato {n} numeri di carta (restano solo le ultime quattro cifre).",
        ),
    ),
    "pt": SourceWords(
        received="📥 Recebido, estou a tratar disso…",
        saved="✅ Guardado: ",
        updated="✅ Atualizado: ",
        duplicate="♻️ Já estava guardado: ",
        detail=" ({chunks}) {place}.",
        private_place="nas suas notas privadas",
        shared_place="na base de conhecimento partilhada",
        chunks=("{n} fragmento", "{n} fragmentos"),
        masked=(
            " Ocultei {n} número de cartão (só ficam os últimos quatro dígitos).",
            " Ocultei {n} números de cartão (só ficam os últimos quatro dígitos).",
        ),
    ),
    "ru": SourceWords(
        received="📥 Получено, работаю над этим…",
        saved="✅ Сохранено: ",
        updated="✅ Обновлено: ",
        duplicate="♻️ Уже сохранено: ",
        detail=" ({chunks}) {place}.",
        private_place="в ваших личных заметках",
        shared_place="в общей базе знаний",
        chunks=("{n} фрагмент", "{n} фрагмента", "{n} фрагментов"),
        masked=(
            " Я скрыл в нём {n} номер карты (остались только последние четыре цифры).",
            " Я скрыл в нём {n} номера карт (остались только последние четыре цифры).",
            " Я скрыл в нём {n} номеров карт (остались только последние четыре цифры).",
        ),
    ),
    "zh": SourceWords(
        received="📥 已收到，正在处理…",
        saved="✅ 已保存：",
        updated="✅ 已更新：",
        duplicate="♻️ 已经保存过：",
        detail="（{chunks}），{place}。",
        private_place="存入你的私人笔记",
        shared_place="存入共享知识库",
        chunks=("{n} 个片段",),
        masked=("我遮盖了其中的 {n} 个卡号（只保留最后四位）。",),
    ),
    "ja": SourceWords(
        received="📥 受け取りました。処理しています…",
        saved="✅ 保存しました：",
        updated="✅ 更新しました：",
        duplicate="♻️ 保存済みです：",
        detail="（{chunks}）{place}。",
        private_place="あなたの個人メモに保存",
        shared_place="共有ナレッジベースに保存",
        chunks=("{n} チャンク",),
        masked=("カード番号 {n} 件を伏せました（下4桁のみ残しています）。",),
    ),
}


def source_words(language: str) -> SourceWords:
    """The words of `language` (an ISO 639-1 code), English for one without them."""
    return _WORDS.get(language, _WORDS["en"])


def count_text(forms: tuple[str, ...], n: int) -> str:
    """`n` in the form its plural class takes ("1 chunk", "3 фрагмента", "5 фрагментов")."""
    if len(forms) == 1:
        form = forms[0]
    elif len(forms) == 2:
        form = forms[0] if n == 1 else forms[1]
    elif n % 10 == 1 and n % 100 != 11:
        form = forms[0]
    elif 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        form = forms[1]
    else:
        form = forms[2]
    return form.format(n=n)


def text_language(texts: tuple[str | None, ...], default: str) -> str:
    """The language of the first of `texts` that has words: its own when clear, else
    `default` (also when there is none)."""
    text = next((text for text in texts if text and text.strip()), None)
    return default if text is None else answer_language(text, default)
