"""Hold the German injection rules: every family at least twice, on folded text.

Folded German has no umlauts and "ss" for "ß" ("ungultig", "ausser"). Switching a
"Entwicklermodus" on weighs 0.7 (the turn is hardened), because people also ask how to do
that on their tablets; being told one is in it weighs 1.0.
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["DE_RULES"]

_RULES = r"(?:anweisungen|instruktionen|befehle|regeln|vorgaben|richtlinien|anordnungen|auftrage)"

DE_RULES: tuple[Rule, ...] = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignorier\w*|vergiss|vergessen sie|missacht\w*|verwirf|verwerfen sie|uberschreib\w*"
        rf"|setze? \w+ au(?:ss|ß)er kraft)\s+(?:\w+\s+){{0,3}}?{_RULES}\b",
        "ignoriere ignorieren ignorier vergiss vergessen missachte missachten verwirf verwerfen"
        " uberschreibe uberschreiben kraft",
    ),
    make_rule(
        "instruction_override",
        1.0,
        rf"\b(?:deine|die|alle|eure|ihre) (?:bisherigen|vorherigen|alten|ursprunglichen|fruheren)"
        rf" {_RULES} (?:gelten|zahlen|sind) (?:ab )?(?:jetzt |ab sofort )?(?:nicht mehr|nichts"
        r" mehr|ungultig|aufgehoben|hinfallig|nichtig)"
        r"|\balles,? was (?:man )?(?:dir|ihnen) (?:bisher|zuvor|vorher|bis jetzt) (?:\w+ ){0,2}"
        r"(?:gesagt|gegeben|aufgetragen|vorgegeben)\w*(?: \w+)?,? (?:gilt|zahlt|ist) (?:ab jetzt"
        r" |jetzt )?(?:nicht mehr|nichts mehr|ungultig|hinfallig)",
        "gelten zahlen sind alles",
    ),
    make_rule(
        "instruction_override",
        0.7,
        rf"\bab (?:jetzt|sofort|nun) (?:gelten|zahlen) (?:nur|ausschlie(?:ss|ß)lich) (?:noch )?"
        rf"meine {_RULES}",
        "gelten zahlen",
    ),
    make_rule(
        "instruction_override",
        1.0,
        r"\bvergiss (?:einfach )?alles (?:davor|zuvor|vorher|bisher\w*|oben\w*|was (?:du|man)"
        r" (?:\w+ ){0,3}(?:gesagt|gelernt|bekommen))"
        r"|\b(?:die |alle )?(?:obigen|vorherigen|bisherigen) (?:ausfuhrungen|texte|angaben"
        r"|nachrichten|aussagen) (?:ignorieren|vergessen|missachten)\b",
        "vergiss obigen vorherigen bisherigen",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\bvergiss alles,? (?:und )?(?:schreib|sag|gib|antworte)\w*",
        "vergiss",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\b(?:gib|schreib|antworte|sag)\w* (?:nur|ausschlie(?:ss|ß)lich|einfach) (?:mit |aus )?"
        r"[\"'„“«]|\bdeine (?:neue|eigentliche|wahre) aufgabe (?:ist|lautet)\b"
        r"|\bbeginne deine antwort mit\b",
        "gib gibst schreib schreibe antworte sag sage deine beginne",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\bbeantworte\w* (?:meine|die|diese) frage nicht,? sondern\b"
        r"|\b(?:ab sofort|von nun an|ab jetzt|kunftig) (?:beendest|beginnst|schliesst|endest"
        r"|startest) du (?:jede|alle|deine) antwort\w*"
        r"|\b(?:vergiss|ignoriere) (?:meine|die|diese) frage und (?:schreib|sag|gib|antworte)\w*",
        "beantworte beantworten sofort nun jetzt kunftig vergiss ignoriere",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:assistent|ki)\s*:\s.{1,300}?\b(?:benutzer|nutzer|mensch)\s*:\s"
        r"|\b(?:benutzer|nutzer)\s*:\s.{1,300}?\b(?:assistent|ki)\s*:\s",
        "assistent ki benutzer nutzer",
    ),
    make_rule(
        "fake_transcript",
        0.7,
        r"(?:^|[.!?\"'\]]\s*|\s)(?:assistent|ki|bot)\s*:\s*(?:klar|gern|gerne|naturlich|sicher"
        r"|selbstverstandlich|ok|okay|hier)\b"
        r"|^\s*(?:systemnachricht|systemanweisung|system)\s*:",
        "assistent ki bot systemnachricht systemanweisung system",
        dampened=False,
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        # Your instructions, or the system's ones; "die Anweisungen fur den Drucker" passes.
        r"\b(?:zeig|gib|nenn|wiederhol|verrat|schreib)\w* (?:mir )?(?:\w+ )?(?:(?:deine[nm]?"
        r"|ihre[nm]?) (?:\w+ )?(?:anweisungen|instruktionen|vorgaben)\b(?! (?:fur|zum|zur|zu|uber"
        r"|von)\b)|(?:deine[nm]?|ihre[nm]?|die|den) (?:\w+ )?(?:systemprompt|system-prompt"
        r"|systemanweisung\w*|anfangsanweisung\w*|ursprunglich\w* (?:anweisung|vorgabe)\w*))\b"
        r"|\bwas (?:wurde dir|hat man dir) (?:\w+ ){0,3}(?:gesagt|vorgegeben|aufgetragen)",
        "zeig zeige gib nenn nenne wiederhole verrat verrate schreib schreibe gesagt vorgegeben"
        " aufgetragen",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:wiederhol|gib|schreib|zitier|kopier)\w* (?:\w+ ){0,3}(?:wortlich|wort fur wort"
        r"|wortwortlich|vollstandig|unverandert)\b.{0,60}\b(?:text|nachricht|konfiguration"
        r"|einrichtung|einstellungen|vorgaben|alles),? (?:\w+ ){0,2}(?:vor|uber) meiner"
        r" (?:ersten )?"
        r"(?:nachricht|frage)"
        r"|\b(?:was|welcher text) (?:steht|stand) (?:vor|uber) meiner (?:ersten )?(?:nachricht"
        r"|frage)",
        "wiederhole wiederholen gib schreib schreibe zitiere zitier kopiere kopier steht stand",
    ),
    make_rule(
        "prompt_exfiltration",
        0.7,
        r"\bwas (?:genau )?(?:hat|haben) (?:dir|ihnen) (?:dein\w*|ihr\w*|die)"
        r" (?:betreiber|entwickler"
        r"|ersteller|macher|admins?|administrator\w*) (?:\w+ ){0,4}(?:mitgegeben|gesagt|vorgegeben"
        r"|aufgetragen|eingestellt|konfiguriert)",
        "hat haben",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:du bist|sie sind) (?:\w+ )?(?:jetzt |nun |ab jetzt )?im (?:entwickler-?modus"
        r"|admin-?modus|gott-?modus|debug-?modus)\b"
        r"|\bohne (?:jegliche |irgendwelche |alle )?(?:einschrankungen|beschrankungen|filter|regeln"
        r"|zensur)\b.{0,40}\b(?:antwort|antworte|reagier|sprich)"
        r"|\b(?:bleib|bleibe) in (?:der )?rolle\b|\b(?:verweigere|lehne) (?:niemals|nie)\b",
        "bist sind ohne bleib bleibe verweigere lehne",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:du bist|sie sind|spiele|spiel) (?:jetzt |nun |ab jetzt )?(?:\w+,? )?(?:eine |ein )?"
        r"(?:ki|bot|assistent\w*|sprachmodell|modell) (?:ohne (?:jede |jegliche |irgendwelche )?"
        r"(?:regeln?|grenzen?|einschrankungen?|filter|zensur|moral)|die (?:keine|alles) )"
        r"|\bgib (?:mir )?(?:immer )?zwei antworten\b|\bdu (?:darfst|wirst|musst) (?:niemals|nie)"
        r" (?:ablehnen|nein sagen|verweigern)",
        "bist sind spiele spiel gib darfst wirst musst",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"\b(?:aktiviere|aktivieren sie|wechsle in|wechsel in|schalte|starte)\w* (?:den |in den )?"
        r"(?:entwickler-?modus|admin-?modus|gott-?modus|debug-?modus)\b(?! (?:auf|an|am|bei|in)\b)",
        "aktiviere aktivieren wechsle wechsel schalte starte",
    ),
    make_rule(
        "mode_switch",
        1.0,
        r"\b(?:entwickler-?modus|admin-?modus|gott-?modus|debug-?modus|uneingeschrankter modus)"
        r" (?:ist )?(?:jetzt |nun )?(?:aktiv|aktiviert|eingeschaltet|an|freigeschaltet)\b",
        "",
        ("modus",),
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:systemhinweis|systemnachricht|systemmeldung|admin-?hinweis"
        r"|administratorhinweis)\s*[:!]"
        r"|\b(?:admin|administrator|entwickler)(?:-?rechte|-?zugang|-?modus) (?:\w+ )?(?:gewahrt"
        r"|aktiviert|freigeschaltet|erteilt)|\bich bin (?:der|dein|ihr) (?:administrator|admin"
        r"|entwickler|besitzer|betreiber)\b",
        "systemhinweis systemnachricht systemmeldung adminhinweis admin administratorhinweis"
        " administrator entwickler ich",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:nachricht|hinweis|mitteilung|anordnung) (?:vom|von der|des) (?:administrator|admin"
        r"|betreiber|entwickler|besitzer|sicherheitsteam|systemadministrator)\w*\s*[:!]"
        r"|\bhier spricht (?:der|das|die|dein) (?:administrator|admin|entwickler|betreiber"
        r"|besitzer|sicherheitsteam|it-abteilung)\b"
        r"|\b(?:dieses|dein|das) konto hat (?:jetzt |nun )?(?:volle|alle|uneingeschrankte)"
        r" (?:rechte|berechtigungen|admin-?rechte)",
        "nachricht hinweis mitteilung anordnung spricht konto",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\b(?:hinweis|nachricht|anweisung) (?:an|fur) (?:alle |jede |die )?(?:ki|ki-systeme"
        r"|ki-modelle"
        r"|sprachmodelle|assistenten|ki-assistenten)\b|\bfalls du eine ki bist\b|\bwenn du eine"
        r" ki bist\b",
        "hinweis nachricht anweisung falls wenn",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\ban (?:jedes|jede|jeden|alle|das|die) (?:ki-?modell|ki|sprachmodell|ki-system"
        r"|ki-assistent\w*|modell)\w*,? (?:das|die|der|welche\w*) (?:\w+ ){0,3}"
        r"(?:lies\w*|zusammenfass\w*"
        r"|verarbeit\w*|auslies\w*)"
        r"|\b(?:falls|wenn) (?:ein|eine) (?:automatische\w* )?(?:assistent|ki|sprachmodell|bot)"
        r" (?:\w+ ){0,3}(?:liest|verarbeitet|zusammenfasst),? (?:soll|muss|sollte)",
        "an falls wenn",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The bare secret, with nothing after it: "... the password?" (a secret kept in a
        # prompt); "the password for the guest Wi-Fi" is a question about a document.
        r"\b(?:was ist|wie lautet|nenn mir|sag mir|gib mir|verrat mir) (?:das|dein|euer|ihr)"
        r" (?:passwort|kennwort|geheimwort|losungswort)\s*(?:[?.!]|$)",
        "passwort kennwort geheimwort losungswort",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The assistant's own secret: "... your password" (never "my password").
        r"\b(?:dein|deine[nm]?|euer|eure[nm]?|(?:mir|uns) ihr\w*)"
        r" (?:passwort|kennwort|zugangscode)\b",
        "passwort kennwort zugangscode",
    ),
)
