"""Hold the injection rule families in German, French, Spanish, Portuguese and Italian.

Same `Rule` format as `injection_rules`. Patterns match folded text, so they are written
without accents ("precedentes", "ignorieren", "instrucoes"). Each family is one rule name
shared with the English rules (`intent_rules`, `injection_rules`), so a message counts once
per family whatever its language: instruction override, goal hijack, fake transcript
labels, system-prompt extraction, persona set-ups, developer-mode switches, authority
claims and notes addressed to an AI. Switching a "developer mode" on weighs 0.7 (the turn
is hardened), because people also ask how to do that on their phones; being told one is
in it weighs 1.0.
"""

from __future__ import annotations

from graphs.guards.injection_rules import Rule, make_rule

__all__ = ["EUROPEAN_RULES"]

_DE = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignorier\w*|vergiss|vergessen sie|missacht\w*|verwirf|verwerfen sie|uberschreib\w*"
        r"|setze? \w+ au(?:ss|ß)er kraft)\s+(?:\w+\s+){0,3}?(?:anweisungen|instruktionen|befehle"
        r"|regeln|vorgaben|richtlinien|anordnungen)\b",
        "ignoriere ignorieren ignorier vergiss vergessen missachte missachten verwirf verwerfen"
        " uberschreibe uberschreiben kraft",
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
        "fake_transcript",
        1.0,
        r"\b(?:assistent|ki)\s*:\s.{1,300}?\b(?:benutzer|nutzer|mensch)\s*:\s"
        r"|\b(?:benutzer|nutzer)\s*:\s.{1,300}?\b(?:assistent|ki)\s*:\s",
        "assistent ki benutzer nutzer",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:zeig|gib|nenn|wiederhol|verrat|schreib)\w* (?:mir )?(?:\w+ )?(?:deine[nm]?|die|den)"
        r" (?:\w+ )?(?:systemprompt|system-prompt|systemanweisung\w*|anfangsanweisung\w*"
        r"|ursprunglich\w* anweisung\w*|anweisungen|instruktionen|vorgaben)\b"
        r"|\bwas (?:wurde dir|hat man dir) (?:\w+ ){0,3}(?:gesagt|vorgegeben|aufgetragen)",
        "zeig zeige gib nenn nenne wiederhole verrat verrate schreib schreibe gesagt vorgegeben"
        " aufgetragen",
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
        "mode_switch",
        0.7,
        r"\b(?:aktiviere|aktivieren sie|wechsle in|wechsel in|schalte|starte)\w* (?:den |in den )?"
        r"(?:entwickler-?modus|admin-?modus|gott-?modus|debug-?modus)\b(?! (?:auf|an|am|bei|in)\b)",
        "aktiviere aktivieren wechsle wechsel schalte starte",
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
        "indirect_injection",
        1.0,
        r"\b(?:hinweis|nachricht|anweisung) (?:an|fur) (?:alle |jede |die )?(?:ki|ki-systeme"
        r"|ki-modelle"
        r"|sprachmodelle|assistenten|ki-assistenten)\b|\bfalls du eine ki bist\b|\bwenn du eine"
        r" ki bist\b",
        "hinweis nachricht anweisung falls wenn",
    ),
)

_FR = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignore[rz]?|oublie[rz]?|ne tiens pas compte|ne tenez pas compte|fais abstraction"
        r"|faites abstraction|neglige[rz]?)\s+(?:de\s+)?(?:\w+\s+){0,3}?(?:instructions|consignes"
        r"|directives|regles|ordres|indications)\b",
        "ignore ignorer ignorez oublie oublier oubliez tiens tenez fais faites neglige negliger"
        " negligez",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\b(?:reponds|repondez|ecris|ecrivez|dis|dites|affiche|affichez) (?:seulement|uniquement"
        r"|simplement|juste) (?:par |avec )?[\"'«“]|\bta (?:nouvelle|vraie) (?:tache|mission) est\b"
        r"|\bcommence ta reponse par\b",
        "reponds repondez ecris ecrivez dis dites affiche affichez ta commence",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:assistant|ia)\s*:\s.{1,300}?\b(?:utilisateur|humain)\s*:\s"
        r"|\butilisateur\s*:\s.{1,300}?\b(?:assistant|ia)\s*:\s",
        "assistant ia utilisateur",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:montre|montrez|affiche|affichez|revele|revelez|repete|repetez|donne|donnez|ecris"
        r"|ecrivez)[\w-]* (?:moi )?(?:\w+ )?(?:ton|tes|votre|vos|le|les) (?:\w+ )?(?:prompt"
        r"|instructions|consignes|directives) ?(?:systeme|initiales?|d'origine|originales?"
        r"|cachees?)?"
        r"|\bqu'est-ce qu'on t'a (?:dit|demande)\b",
        "montre montrez affiche affichez revele revelez repete repetez donne donnez ecris ecrivez"
        " dit",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:tu es|vous etes) (?:\w+ )?(?:maintenant |desormais )?en mode (?:developpeur|admin"
        r"|administrateur|dieu|debogage|sans restriction)\b"
        r"|\bsans (?:aucune |la moindre )?(?:restriction|limite|filtre|censure|regle)s?\b.{0,40}"
        r"\b(?:reponds|repondez|reponse|agis|parle)|\breste dans (?:ton|le) (?:personnage|role)\b"
        r"|\bne refuse (?:jamais|rien)\b",
        "es etes sans reste refuse",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"(?:^|[.!;:]\s*)(?:active|activez|passe|passez|bascule|basculez)\w* (?:en |le )?mode"
        r" (?:developpeur|admin|administrateur|dieu|debogage|sans restriction)\b"
        r"(?! (?:sur|de|du|dans|pour)\b)",
        "active activez passe passez bascule basculez",
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:avis|message|notification|alerte) (?:systeme|de l'administrateur|de l'admin)\s*[:!]"
        r"|\b(?:mode|acces|droits) (?:admin|administrateur|developpeur) (?:\w+ )?(?:accorde|active"
        r"|debloque)s?\b|\bje suis (?:l'|ton |votre )(?:administrateur|admin|developpeur"
        r"|proprietaire)\b",
        "avis message notification alerte mode acces droits je",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\b(?:note|message|consigne)s? (?:aux|a l'|a toute|pour les|pour l'|a l') ?(?:ia"
        r"|intelligences"
        r" artificielles|assistants|modeles de langage)\b|\bsi tu es une ia\b|\bsi vous etes une"
        r" ia\b",
        "note notes message consigne consignes si",
    ),
)

_ES_PT = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|ignore|ignorar|ignorad|olvida|olvide|olvidar|descarta|descarte|omite|omita"
        r"|esqueca|esquece|esquecer|desconsidere|desconsidera|pasa por alto|deixe de lado|deja de"
        r" lado)\s+(?:\w+\s+){0,3}?(?:instrucciones|instrucoes|indicaciones|orientacoes|ordenes"
        r"|ordens|reglas|regras|directrices|diretrizes|directivas|diretivas|comandos)\b",
        "ignora ignore ignorar ignorad olvida olvide olvidar descarta descarte omite omita esqueca"
        " esquece esquecer desconsidere desconsidera pasa deixe deja",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\b(?:responde|responda|escribe|escreva|di|diga|imprime|imprima) (?:solo|solamente"
        r"|unicamente|apenas|somente|so) (?:con |com )?[\"'«“]|\btu (?:nueva|verdadera) tarea es\b"
        r"|\bsua (?:nova|verdadeira) tarefa e\b|\b(?:comienza|empieza|comece) (?:tu|sua) respuesta"
        r" (?:con|com)\b",
        "responde responda escribe escreva di diga imprime imprima tu sua comienza empieza comece",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:asistente|assistente|ia)\s*:\s.{1,300}?\b(?:usuario|humano)\s*:\s"
        r"|\busuario\s*:\s.{1,300}?\b(?:asistente|assistente|ia)\s*:\s",
        "asistente assistente ia usuario",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:muestra|muestrame|mostra|mostre|mostrame|revela|revele|repite|repita|dime|diga-me"
        r"|me diga|escribe|escreva)[\w-]* (?:me )?(?:\w+ )?(?:tu|tus|su|sus|seu|seus|o|os|el|los"
        r"|as)"
        r" (?:\w+ )?(?:prompt|instrucciones|instrucoes|indicaciones|orientacoes)"
        r" ?(?:del sistema|do sistema|de sistema|iniciales|iniciais|originales|originais|ocultas)?"
        r"|\bque (?:te dijeron|te indicaron|te disseram|lhe disseram)\b",
        "muestra muestrame mostra mostre mostrame revela revele repite repita dime diga escribe"
        " escreva dijeron indicaron disseram",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:estas|voce esta|estas ahora) (?:\w+ )?(?:ahora |agora )?(?:en|no|em) modo"
        r" (?:desarrollador|desenvolvedor|administrador|admin|dios|deus|depuracion"
        r"|sin restricciones|sem restricoes)\b|\b(?:sin|sem) (?:ninguna |nenhuma |ningun |nenhum )?"
        r"(?:restricciones|restricoes|limites|filtros|censura|reglas|regras)\b.{0,40}\b(?:responde"
        r"|responda|contesta|actua|aja|fala|habla)|\b(?:mantente|mantenha-se|permanece|fique) en?"
        r" (?:el )?(?:personaje|personagem)\b|\bnunca (?:te niegues|rechaces|recuse|se recuse)\b",
        "estas esta sin sem mantente mantenha permanece fique nunca",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"(?:^|[.!;:]\s*)(?:activa|active|ativa|ative|entra|entre|cambia|mude|pasa|passe)\w*"
        r" (?:en |el |no |o |em |para )?(?:el |o )?modo (?:desarrollador|desenvolvedor"
        r"|administrador|admin|dios|deus|depuracion|sin restricciones|sem restricoes)\b"
        r"(?! (?:en|no|em|del|do|de|para)\b)",
        "activa active ativa ative entra entre cambia mude pasa passe",
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:aviso|mensaje|mensagem|notificacion|notificacao|alerta) (?:del|do|de) (?:sistema"
        r"|administrador)\s*[:!]|\b(?:modo|acceso|acesso|permisos|permissoes) (?:de )?(?:admin"
        r"|administrador|desarrollador|desenvolvedor) (?:\w+ )?(?:concedido|activado|ativado"
        r"|desbloqueado)s?\b|\b(?:soy|sou) (?:el|o|tu|seu) (?:administrador|desarrollador"
        r"|desenvolvedor|dueno|dono|propietario|proprietario)\b",
        "aviso mensaje mensagem notificacion notificacao alerta modo acceso acesso permisos"
        " permissoes soy sou",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\bnota (?:para|a) (?:la |a |las |as |cualquier |qualquer |toda )?(?:ia|ias|inteligencia"
        r" artificial|asistentes?|assistentes?|modelos de lenguaje|modelos de linguagem)\b"
        r"|\bsi eres una ia\b|\bse voce (?:e|for) uma ia\b",
        "nota si se",
    ),
)

_IT = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|ignorate|ignorare|dimentica|dimenticate|trascura|tralascia|non seguire|non"
        r" tenere conto)\s+(?:di\s+|delle\s+)?(?:\w+\s+){0,3}?(?:istruzioni|indicazioni|regole"
        r"|direttive|ordini|comandi)\b",
        "ignora ignorate ignorare dimentica dimenticate trascura tralascia non",
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
        "fake_transcript",
        1.0,
        r"\b(?:assistente|ia)\s*:\s.{1,300}?\butente\s*:\s|\butente\s*:\s.{1,300}?\b(?:assistente"
        r"|ia)\s*:\s",
        "assistente ia utente",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:mostra|mostrami|rivela|rivelami|ripeti|dimmi|scrivi|stampa)[\w-]* (?:\w+ )?(?:il"
        r" tuo|i"
        r" tuoi|le tue|il|le) (?:\w+ )?(?:prompt|istruzioni|indicazioni) ?(?:di sistema|iniziali"
        r"|originali|nascoste)?|\bcosa ti (?:hanno detto|e stato detto)\b",
        "mostra mostrami rivela rivelami ripeti dimmi scrivi stampa detto",
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
        "mode_switch",
        0.7,
        r"(?:^|[.!;:]\s*)(?:attiva|attivate|entra|entrate|passa|passate)\w* (?:in |la )?modalita"
        r" (?:sviluppatore|sviluppo|admin|amministratore|dio|debug|senza restrizioni)\b"
        r"(?! (?:su|sul|sulla|del|della|per)\b)",
        "attiva attivate entra entrate passa passate",
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
        "indirect_injection",
        1.0,
        r"\bnota (?:per|alle|all'|a) ?(?:l'|le |qualsiasi |ogni )?(?:ia|intelligenze? artificiali?"
        r"|assistenti|modelli linguistici)\b|\bse sei un'?ia\b",
        "nota se",
    ),
)

EUROPEAN_RULES: tuple[Rule, ...] = (*_DE, *_FR, *_ES_PT, *_IT)
