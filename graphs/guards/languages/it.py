"""Hold the Italian injection rules: every family at least twice, on folded text.

Folded Italian has no accents ("modalita", "e" for "è"). Switching a "modalità
sviluppatore" on weighs 0.7 (the turn is hardened), being told one is in it 1.0.
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["IT_RULES"]

_RULES = r"(?:istruzioni|indicazioni|regole|direttive|ordini|comandi|linee guida|impostazioni)"
_AI = r"(?:ia|intelligenza artificiale|assistente|modello|modello linguistico|bot)"

IT_RULES: tuple[Rule, ...] = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|ignorate|ignorare|dimentica|dimenticate|trascura|tralascia|non seguire|non"
        r" tenere conto)\s+(?:di\s+|delle\s+)?(?:\w+\s+){0,3}?(?:istruzioni|indicazioni|regole"
        r"|direttive|ordini|comandi)\b",
        "ignora ignorate ignorare dimentica dimenticate trascura tralascia non",
    ),
    make_rule(
        "instruction_override",
        1.0,
        rf"\b(?:le tue|le sue|le) (?:vecchie |prime )?{_RULES} (?:precedenti |iniziali"
        r" |originali )?(?:non (?:valgono|contano) piu|sono (?:annullate|revocate|nulle|superate))"
        r"|\btutto (?:cio|quello) che ti (?:e stato|hanno) (?:detto|dato|scritto|indicato)"
        r" (?:\w+ ){0,3}non (?:vale|conta) piu\b",
        "le tutto",
    ),
    make_rule(
        "instruction_override",
        0.7,
        rf"\b(?:d'ora in poi|da ora in poi|da adesso|da questo momento),? (?:contano|valgono"
        rf"|segui) (?:solo|soltanto) (?:le )?(?:mie )?{_RULES}",
        "poi adesso momento",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\b(?:rispondi|scrivi|di'|dimmi|stampa) (?:solo|soltanto|unicamente|semplicemente)"
        r" (?:con )?"
        r"[\"'«“]|\bil tuo (?:nuovo|vero) compito e\b|\binizia la tua risposta con\b",
        "rispondi scrivi di dimmi stampa il inizia",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\bnon rispondere (?:alla )?(?:mia|questa|la) domanda\s*[:,;]"
        r"|\b(?:d'ora in poi|da ora in poi|da adesso),? (?:chiudi|termina|inizia|comincia)"
        r" (?:ogni|ciascuna|tutte le) (?:tua )?rispost[ae]\b"
        r"|\bdimentica la (?:mia )?domanda e (?:scrivi|di'|rispondi|stampa)\b",
        "rispondere poi adesso dimentica",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:assistente|ia)\s*:\s.{1,300}?\butente\s*:\s|\butente\s*:\s.{1,300}?\b(?:assistente"
        r"|ia)\s*:\s",
        "assistente ia utente",
    ),
    make_rule(
        "fake_transcript",
        0.7,
        r"(?:^|[.!?\"'\]]\s*|\s)(?:assistente|ia|bot)\s*:\s*(?:certo|certamente|volentieri"
        r"|ovviamente|va bene|ok|ecco)\b|^\s*(?:sistema|messaggio di sistema)\s*:",
        "assistente ia bot sistema messaggio",
        dampened=False,
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:mostra|mostrami|rivela|rivelami|ripeti|dimmi|scrivi|stampa)[\w-]* (?:\w+ )?"
        r"(?:(?:il tuo|i tuoi|le tue) (?:\w+ )?(?:prompt|istruzioni|indicazioni)\b(?! (?:di|del"
        r"|della|per|su)\b)|(?:il|le|i) (?:\w+ )?(?:prompt|istruzioni|indicazioni) (?:di sistema"
        r"|iniziali|originali|nascoste)\b)|\bcosa ti (?:hanno detto|e stato detto)\b",
        "mostra mostrami rivela rivelami ripeti dimmi scrivi stampa detto",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:ricopia|copia|ripeti|cita|riporta|trascrivi)\w* (?:\w+ ){0,2}(?:parola per parola"
        r"|alla lettera|testualmente|integralmente)?\s?(?:tutto )?(?:quello che|cio che|il testo"
        r" che|le righe che) (?:c'e|ce|appare|appaiono|sta|stava|viene|compare) (?:\w+ ){0,2}"
        r"(?:prima del|sopra il|prima di) (?:mio|questo|nostro) (?:primo )?messaggio"
        r"|\bcosa ti hanno (?:scritto|dato|fornito) (?:esattamente )?prima\b",
        "ricopia copia ripeti cita riporta trascrivi cosa",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:sei|siete) (?:\w+ )?(?:ora |adesso )?in modalita (?:sviluppatore|sviluppo|admin"
        r"|amministratore|dio|debug|senza restrizioni)\b"
        r"|\bsenza (?:alcuna |nessuna )?(?:restrizioni|limiti|filtri|censura|regole)\b.{0,40}"
        r"\b(?:rispondi|risposta|agisci|parla)|\brimani nel personaggio\b|\bnon rifiutare mai\b",
        "sei siete senza rimani non",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        rf"\b(?:sei|sarai|fingi di essere|interpreta) (?:ora |adesso )?(?:\w+,? )?(?:una |un |un')?"
        rf"{_AI}\b(?: \w+)? (?:senza (?:alcuna |nessuna )?(?:regola|regole|limite|limiti"
        r"|restrizione|restrizioni|filtro|filtri|censura|morale)|che (?:non ha|ignora|risponde a"
        r" tutto))|\bnon uscire (?:mai )?dal personaggio\b|\bdammi (?:sempre )?due risposte\b",
        "sei sarai fingi interpreta non dammi",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"(?:^|[.!;:]\s*)(?:attiva|attivate|entra|entrate|passa|passate)\w* (?:in |la )?modalita"
        r" (?:sviluppatore|sviluppo|admin|amministratore|dio|debug|senza restrizioni)\b"
        r"(?! (?:su|sul|sulla|del|della|per)\b)",
        "attiva attivate entra entrate passa passate",
    ),
    make_rule(
        "mode_switch",
        1.0,
        r"\bmodalita (?:sviluppatore|sviluppo|admin|amministratore|dio|debug|senza restrizioni)"
        r" (?:e )?(?:ora |adesso )?(?:attiva|attivata|abilitata|sbloccata)\b",
        "modalita",
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:avviso|messaggio|notifica) (?:di sistema|del sistema|dell'amministratore)\s*[:!]"
        r"|\b(?:accesso|modalita|permessi) (?:admin|amministratore|sviluppatore) (?:\w+"
        r" )?(?:concess"
        r"|attivat|sbloccat)\w*|\bsono (?:l'|il tuo )(?:amministratore|admin|sviluppatore"
        r"|proprietario)\b",
        "avviso messaggio notifica accesso modalita permessi sono",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:avviso|messaggio|comunicazione) (?:ufficiale|del team di sicurezza|del proprietario"
        r"|dello sviluppatore)\s*[:!]|\bqui (?:parla )?(?:l'|il |la )(?:amministratore|admin"
        r"|team di sicurezza|proprietario|sviluppatore|reparto it)\b"
        r"|\bha concesso a (?:questo|il tuo) account (?:tutti i )?permessi di (?:amministratore"
        r"|admin)",
        "avviso messaggio comunicazione qui concesso",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\bnota (?:per|alle|all'|a) ?(?:l'|le |qualsiasi |ogni )?(?:ia|intelligenze? artificiali?"
        r"|assistenti|modelli linguistici)\b|\bse sei un'?ia\b",
        "nota se",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        rf"\ba (?:qualsiasi|ogni|ciascuna|l') ?{_AI} (?:che|leggendo|riassumendo) (?:\w+ ){{0,2}}"
        r"(?:legge|leggono|riassume|riassumono|elabora|questa|questo)\b"
        r"|\bse (?:un|una|un') ?(?:assistente|ia|modello|bot)\w* (?:automatico )?(?:legge"
        r"|elabora|riassume) (?:questo|questa) (?:documento|pagina|testo|messaggio|email)",
        "a se",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The bare secret, with nothing after it: "... the password?" (a secret kept in a
        # prompt); "the password for the guest Wi-Fi" is a question about a document.
        r"\b(?:qual e|dimmi|dammi|rivela|rivelami) (?:la|la tua|tua) (?:password|parola d'ordine"
        r"|parola segreta)\s*(?:[?.!]|$)",
        "password ordine segreta",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The assistant's own secret: "... your password" (never "my password").
        r"\b(?:la tua|tua) (?:password|parola d\'ordine|chiave di accesso)\b",
        "password ordine accesso",
    ),
)
