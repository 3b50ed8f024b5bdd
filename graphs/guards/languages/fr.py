"""Hold the French injection rules: every family at least twice, on folded text.

Folded French has no accents ("regles", "precedentes", "systeme"). Switching a "mode
developpeur" on weighs 0.7 (the turn is hardened), being told one is in it 1.0.
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["FR_RULES"]

_RULES = r"(?:instructions|consignes|directives|regles|ordres|indications|parametres)"

FR_RULES: tuple[Rule, ...] = (
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
        "instruction_override",
        1.0,
        rf"\b(?:tes|vos|les) (?:anciennes |precedentes |premieres )?{_RULES} (?:precedentes"
        r" |initiales |d'origine )?(?:ne (?:comptent|valent|s'appliquent) plus|sont (?:annulees"
        r"|caduques|nulles|obsoletes))"
        r"|\btout ce qu'on t'a (?:dit|donne|demande|ecrit) (?:\w+ ){0,3}ne (?:compte|vaut"
        r"|s'applique) plus\b",
        "tes vos les tout",
    ),
    make_rule(
        "instruction_override",
        0.7,
        rf"\b(?:a partir de maintenant|desormais|dorenavant),? (?:seules|seuls|uniquement) (?:mes"
        rf" )?{_RULES} (?:comptent|s'appliquent|valent)",
        "partir desormais dorenavant",
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
        "goal_hijack",
        0.7,
        r"\bne reponds pas a (?:ma|la|cette) question\s*[:,;]"
        r"|\b(?:dorenavant|desormais|a partir de maintenant),? (?:termine|commence|finis)"
        r" (?:chacune de |chaque |toutes )?(?:tes |tes |ta )?reponses?\b"
        r"|\boublie (?:ma|la) question et (?:ecris|dis|affiche|reponds)\b",
        "reponds dorenavant desormais partir oublie",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:assistant|ia)\s*:\s.{1,300}?\b(?:utilisateur|humain)\s*:\s"
        r"|\butilisateur\s*:\s.{1,300}?\b(?:assistant|ia)\s*:\s",
        "assistant ia utilisateur",
    ),
    make_rule(
        "fake_transcript",
        0.7,
        r"(?:^|[.!?\"'\]]\s*|\s)(?:assistant|ia|bot)\s*:\s*(?:bien sur|d'accord|avec plaisir"
        r"|certainement|volontiers|ok|voici)\b|^\s*(?:systeme|message systeme)\s*:",
        "assistant ia bot systeme message",
        dampened=False,
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:montre|montrez|affiche|affichez|revele|revelez|repete|repetez|donne|donnez|ecris"
        r"|ecrivez)[\w-]* (?:moi )?(?:\w+ )?(?:(?:ton|tes|votre|vos) (?:\w+ )?(?:prompt"
        r"|instructions|consignes|directives)\b(?! (?:de|du|des|pour|sur)\b| d')|(?:le|les)"
        r" (?:\w+ )?(?:prompt|instructions|consignes|directives) (?:systeme|initiales?"
        r"|d'origine|originales?|cachees?)\b|(?:le|ton|votre) prompt\b(?! (?:de|du|pour)\b| d'))"
        r"|\bqu'est-ce qu'on t'a (?:dit|demande)\b",
        "montre montrez affiche affichez revele revelez repete repetez donne donnez ecris ecrivez"
        " dit",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:recopie|recopiez|repete|repetez|cite|citez|reproduis|reproduisez)\w* (?:\w+ ){0,2}"
        r"(?:mot pour mot|mot a mot|integralement|textuellement)?\s?(?:tout )?"
        r"(?:ce qui|le texte qui"
        r"|les lignes qui) (?:se trouve|se trouvent|precede|precedent|est|sont|vient|venait|figure)"
        r" (?:\w+ ){0,2}(?:avant|au-dessus de) (?:mon|ce|notre) (?:premier )?message"
        r"|\bqu'est-ce qu'on t'a (?:ecrit|fourni|donne) (?:exactement )?avant\b",
        "recopie recopiez repete repetez cite citez reproduis reproduisez qu",
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
        "jailbreak_persona",
        1.0,
        r"\b(?:tu es|tu joues|joue|vous etes) (?:maintenant |desormais )?(?:\w+,? )?(?:une |un )?"
        r"(?:ia|bot|assistant|modele)\b(?: \w+)? (?:sans (?:aucune |la moindre )?(?:regle|limite"
        r"|restriction|filtre|censure|morale)|qui (?:n'a aucune|ignore|repond a tout))"
        r"|\bne sors? (?:jamais|pas) du (?:personnage|role)\b"
        r"|\bdonne(?:-moi)? (?:toujours )?deux reponses\b",
        "es joues joue etes sors sort donne",
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
        "mode_switch",
        1.0,
        r"\bmode (?:developpeur|admin|administrateur|dieu|debogage|sans restriction) (?:est )?"
        r"(?:maintenant )?(?:active|actif|enclenche|debloque)\b",
        "mode",
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
        "authority_claim",
        0.7,
        r"\b(?:avis|message|note) (?:officiel|de l'equipe de securite|du proprietaire|du"
        r" developpeur)\s*[:!]|\bici (?:l'|le |la )(?:administrateur|admin|equipe de securite"
        r"|proprietaire|developpeur|service informatique)\b"
        r"|\b(?:a|ont) accorde a (?:ce|ton|votre) compte (?:tous les |les )?droits"
        r" d'(?:administrateur|admin)",
        "avis message note ici accorde",
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
    make_rule(
        "indirect_injection",
        1.0,
        r"\ba (?:toute|toutes les|chaque|l') ?(?:ia|intelligence artificielle|assistant|modele)s?"
        r" (?:qui|lisant|resumant) (?:\w+ ){0,2}(?:lit|lisent|resume|resument|traite|traitent"
        r"|cette|ce)\b"
        r"|\bsi (?:un|une) (?:assistant|ia|modele|bot)\w* (?:automatique )?(?:lit|traite|resume)"
        r" (?:ce|cette) (?:document|page|texte|message|courriel)",
        "a si",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The bare secret, with nothing after it: "... the password?" (a secret kept in a
        # prompt); "the password for the guest Wi-Fi" is a question about a document.
        r"\b(?:quel est|donne-moi|dis-moi|revele|revele-moi|c'est quoi) (?:le|ton|votre)"
        r" (?:mot de passe|code secret|mot secret)\s*(?:[?.!]|$)",
        "passe secret",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The assistant's own secret: "... your password" (never "my password").
        r"\b(?:ton|votre) (?:mot de passe|code secret|code d\'acces)\b",
        "passe secret acces",
    ),
)
