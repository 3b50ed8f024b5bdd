"""Hold the Portuguese injection rules, European and Brazilian: every family at least twice.

Patterns match folded text ("instrucoes", "voce", "sessao"). European Portuguese forms are
written beside Brazilian ones: "utilizador" beside "usuario", "palavra-passe" beside
"senha", "equipa" beside "equipe", the "tu" imperative ("ignora", "esquece", "mostra-me",
"diz-me") beside the "voce" one ("ignore", "esqueca", "mostre", "diga"). Switching a
"modo desenvolvedor" on weighs 0.7 (the turn is hardened), being told one is in it 1.0.
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["PT_RULES"]

_RULES = (
    r"(?:instrucoes|orientacoes|ordens|regras|normas|diretrizes|diretivas|directivas|comandos"
    r"|indicacoes)"
)
_AI = r"(?:ia|inteligencia artificial|assistente|modelo|modelo de linguagem|bot)"

PT_RULES: tuple[Rule, ...] = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|ignore|ignorar|ignorem|esqueca|esquece|esquecer|desconsidere|desconsidera"
        rf"|descarta|descarte|deixe de lado|deixa de lado|nao ligues a|nao ligue para)\s+"
        rf"(?:\w+\s+){{0,3}}?{_RULES}\b",
        "ignora ignore ignorar ignorem esqueca esquece esquecer desconsidere desconsidera descarta"
        " descarte deixe deixa ligues ligue",
    ),
    make_rule(
        "instruction_override",
        1.0,
        rf"\b(?:as tuas|as suas|tuas|suas|as) (?:antigas |primeiras )?{_RULES} (?:anteriores"
        r" |iniciais |originais )?(?:ja nao (?:valem|contam|se aplicam)|(?:ficam|estao)"
        r" (?:anuladas|canceladas|sem efeito))"
        r"|\btudo o que te (?:disseram|deram|indicaram|escreveram) (?:\w+ ){0,3}(?:ja nao|nao)"
        r" (?:vale|conta|se aplica)\b",
        "as tuas suas tudo",
    ),
    make_rule(
        "instruction_override",
        0.7,
        rf"\b(?:a partir de agora|de agora em diante|a partir deste momento),? (?:so|apenas)"
        rf" (?:valem|contam|segues|segue|se aplicam) (?:as )?(?:minhas )?{_RULES}",
        "partir agora",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\b(?:responda|responde|escreva|escreve|diga|diz|imprima|imprime) (?:apenas|somente|so"
        r"|unicamente) (?:com )?[\"'«“]|\b(?:a )?(?:sua|tua) (?:nova|verdadeira) tarefa e\b"
        r"|\b(?:comece|comeca) a (?:sua|tua) resposta com\b",
        "responda responde escreva escreve diga diz imprima imprime sua tua comece comeca",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\bnao (?:respondas|responda) (?:a )?(?:minha|a|esta) pergunta\s*[:,;]"
        r"|\b(?:a partir de agora|de agora em diante),? (?:termina|termine|comeca|comece|acaba"
        r"|acabe) (?:cada|todas as|as tuas|as suas) respostas?\b"
        r"|\b(?:esquece|esqueca) a (?:minha )?pergunta e (?:escreve|escreva|diz|diga|responde"
        r"|responda)\b",
        "respondas responda partir agora esquece esqueca",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"\b(?:assistente|ia)\s*:\s.{1,300}?\b(?:usuario|utilizador|humano)\s*:\s"
        r"|\b(?:usuario|utilizador)\s*:\s.{1,300}?\b(?:assistente|ia)\s*:\s",
        "assistente ia usuario utilizador",
    ),
    make_rule(
        "fake_transcript",
        0.7,
        r"(?:^|[.!?\"'\]]\s*|\s)(?:assistente|ia|bot)\s*:\s*(?:claro|com certeza|com prazer"
        r"|certamente|pois claro|ok|aqui)\b|^\s*(?:sistema|mensagem do sistema)\s*:",
        "assistente ia bot sistema mensagem",
        dampened=False,
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:mostra|mostre|mostra-me|revela|revele|revela-me|repete|repita|diz-me|diga-me|me diga"
        r"|escreve|escreva)[\w-]* (?:me )?(?:\w+ )?(?:(?:o teu|os teus|as tuas|a tua|teu|teus"
        r"|tuas|suas|seu|seus) (?:\w+ )?(?:prompt|instrucoes|orientacoes)\b(?! (?:de|do|da|para"
        r"|sobre)\b)|(?:o|os|as|seu|seus|suas|teu|teus|tuas) (?:\w+ )?(?:prompt|instrucoes"
        r"|orientacoes) (?:do sistema|de sistema|iniciais|originais|ocultas)\b|(?:a|sua|tua)"
        r" mensagem do sistema\b)"
        r"|\bo que (?:te disseram|lhe disseram|te mandaram)\b",
        "mostra mostre revela revele repete repita diz diga me escreve escreva disseram mandaram",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:copia|copie|repete|repita|cita|cite|reproduz|reproduza|transcreve|transcreva)\w*"
        r" (?:\w+ ){0,2}(?:palavra por palavra|literalmente|textualmente|integralmente)?\s?"
        r"(?:tudo )?(?:o que|o texto que|as linhas que) (?:aparece|aparecem|ha|esta|estava|vem"
        r"|vinha|consta) (?:\w+ ){0,2}(?:antes da|acima da|antes de) (?:minha|esta|nossa)"
        r" (?:primeira )?mensagem"
        r"|\bo que (?:e que )?te (?:escreveram|puseram|deram) (?:exatamente |exactamente )?antes\b",
        "copia copie repete repita cita cite reproduz reproduza transcreve transcreva que",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:voce esta|estas|tu estas) (?:\w+ )?(?:agora )?(?:no|em) modo (?:desenvolvedor"
        r"|programador|administrador|admin|deus|depuracao|sem restricoes)\b|\bsem (?:nenhuma"
        r" |nenhum )?(?:restricoes|limites|filtros|censura|regras)\b.{0,40}\b(?:responde|responda"
        r"|aja|age|fala|fale)|\b(?:mantenha-se|mantem-te|fica|fique) (?:na|no) (?:personagem"
        r"|papel)\b|\bnunca (?:recuses|recuse|se recuse|digas que nao)\b",
        "voce estas sem mantenha mantem fica fique nunca",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        rf"\b(?:es|voce e|seras|finge ser|finja ser) (?:agora )?(?:a |o )?(?:\w+,? )?(?:uma |um )?"
        rf"{_AI}\b(?: \w+)? (?:sem (?:nenhuma |nenhum )?(?:regra|norma|limite|restricao|filtro"
        r"|censura|moral)|que (?:nao tem|ignora|responde a tudo))"
        r"|\bnunca (?:saias|saia) (?:da|do) (?:personagem|papel)\b"
        r"|\b(?:da-me|me de|de-me) (?:sempre )?duas respostas\b",
        "es voce seras finge finja nunca da me de",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"(?:^|[.!;:]\s*)(?:ativa|ative|activa|active|entra|entre|muda|mude|passa|passe)\w*"
        r" (?:no |o |em |para |para o )?(?:o )?modo (?:de )?(?:desenvolvedor|programador"
        r"|administrador|admin|deus|depuracao|sem restricoes)\b(?! (?:no|em|do|de|para)\b)",
        "ativa ative activa active entra entre muda mude passa passe",
    ),
    make_rule(
        "mode_switch",
        1.0,
        r"\bmodo (?:de )?(?:desenvolvedor|programador|administrador|admin|deus|depuracao|sem"
        r" restricoes) (?:esta )?(?:agora )?(?:ativado|activado|ativo|activo|desbloqueado"
        r"|ligado)\b",
        "modo",
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:aviso|mensagem|notificacao|alerta) (?:do|de) (?:sistema|administrador)\s*[:!]"
        r"|\b(?:modo|acesso|permissoes) (?:de )?(?:admin|administrador|desenvolvedor) (?:\w+ )?"
        r"(?:concedido|ativado|activado|desbloqueado)s?\b|\bsou (?:o|seu|teu|o teu|o seu)"
        r" (?:administrador|desenvolvedor|programador|dono|proprietario)\b",
        "aviso mensagem notificacao alerta modo acesso permissoes sou",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:aviso|mensagem|comunicado) (?:oficial|da equipa de seguranca|da equipe de seguranca"
        r"|do proprietario|do dono|do desenvolvedor)\s*[:!]|\baqui (?:fala )?(?:o |a )"
        r"(?:administrador|admin|equipa de seguranca|equipe de seguranca|proprietario|dono"
        r"|desenvolvedor|departamento de ti)\b"
        r"|\bconcedeu a (?:esta|tua|sua) conta (?:todas as )?permissoes de (?:administrador|admin)",
        "aviso mensagem comunicado aqui concedeu",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        r"\bnota (?:para|a|ao) (?:a |as |qualquer |toda )?(?:ia|ias|inteligencia artificial"
        r"|assistentes?|modelos de linguagem)\b|\bse (?:voce|tu) (?:e|es|for) uma ia\b",
        "nota se",
    ),
    make_rule(
        "indirect_injection",
        1.0,
        rf"\bpara (?:qualquer|toda|cada|a) {_AI}s? (?:que|a ler|a resumir|lendo|resumindo)"
        r" (?:\w+ ){0,2}(?:leia|le|resuma|resume|processe|processa|esta|este)\b"
        r"|\bse (?:um|uma) (?:assistente|ia|modelo|bot)\w* (?:automatico )?(?:ler|le|processar"
        r"|resumir) (?:este|esta) (?:documento|pagina|texto|mensagem|e-mail|email)",
        "para se",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The bare secret, with nothing after it: "... the password?" (a secret kept in a
        # prompt); "the password for the guest Wi-Fi" is a question about a document.
        r"\b(?:qual e|diga-me|diz-me|me diga|de-me|da-me|revela|revele) (?:a|sua|tua|a tua|a sua)"
        r" (?:senha|palavra-passe|palavra passe|password)\s*(?:[?.!]|$)",
        "senha passe password",
    ),
    make_rule(
        "secret_request",
        0.7,
        # The assistant's own secret: "... your password" (never "my password").
        r"\b(?:a tua|tua|a sua|sua) (?:senha|palavra-passe|password)\b",
        "senha passe password",
    ),
)
