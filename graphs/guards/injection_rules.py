"""Hold the weighted patterns for injections that try to take control of the assistant.

Each `Rule` (`graphs.guards.rule`) is a regex over folded text (casefolded, accents and
look-alikes folded, see `normalize`) with a weight; `injection.injection_score` sums the
weights of the rules that fire, and 1.0 refuses. Strong rules (weight 1.0) are phrasings
with essentially no benign use in a question to a knowledge base ("ignore all previous
instructions", "you are now DAN", "developer mode enabled"); weak ones (0.4-0.7) only
refuse together. Rules marked `dampened` count less inside a sentence that asks *about*
something ("how do I prevent ...", "why does the model ...").

Families here: instruction override (English plus a few common translations), prior-context
dismissal ("ignore the above and say"), safety override, role and persona hijack (DAN,
"you are now", "pretend you are an unrestricted AI"), authority claims and pretexts, and
mode switches ("developer mode", "<SYSTEM MODE>"). Rules that try to extract something
or make the assistant act live in `exfiltration_rules`.
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["COMPACT_RULES", "CONTROL_RULES"]


_IGNORE = (
    r"(?:ignore|ignoring|disregard|forget|overlook|bypass|override|abandon|discard|dismiss"
    r"|neglect|set aside|throw away|throw out|erase|stop following|do not follow"
    r"|don'?t follow|no longer follow|pay no attention to|never ?mind|discount|scrap|ditch|drop"
    r"|put aside|cast aside|wipe|void|nullify|cancel|supersede|forget about|skip over|look past)"
)
_IGNORE_WORDS = (
    "ignore ignoring disregard forget overlook bypass override abandon discard dismiss neglect"
    " aside throw erase follow attention never nevermind discount scrap ditch drop put cast wipe"
    " void nullify cancel supersede skip look"
)
_FILLER = (
    r"(?:all|any|every|each|of|the|your|my|these|those|its|their|our|that|this|about|whatever"
    r"|you|you'?ve|you have|have|had|were|was|been|being|previously|before|so far|earlier)"
)
_PRIOR = (
    r"(?:previous|previously|prior|above|preceding|earlier|former|original|initial|foregoing"
    r"|past|old|existing|system|developer|default|predefined|preset|given|current|first)"
)
_DIRECTIVES = (
    r"(?:instructions?|instrucions?|directives?|prompts?|rules?|guidelines?|commands?|orders?"
    r"|context|conversation|messages?|text|tasks?|training|programming|constraints?"
    r"|restrictions?|limitations?|settings?|polic(?:y|ies)|guardrails?|filters?|content"
    r"|input|requests?|information|answers?|responses?|directions?|steps?|guidance)"
)
_START = (
    r"(?:^|[.!?;:\"'()\[\]{}<>*#/\\|`~=,\u2013\u2014-]\s*|\b(?:please|now|just|simply|then|and"
    r"|so|ok|okay|also|first|actually|but|kindly|pls|must|should|will|to|always|instead)\s+)"
)

_OVERRIDE_RULES = (
    make_rule(
        "instruction_override",
        1.0,
        rf"\b{_IGNORE}\s+(?:{_FILLER}\s+){{0,4}}{_PRIOR}\s+(?:[\w-]+\s+){{0,2}}?{_DIRECTIVES}\b",
        _IGNORE_WORDS,
    ),
    make_rule(
        "instruction_override",
        1.0,
        rf"\b{_IGNORE}\s+(?:about\s+)?(?:all|everything|anything|every ?thing|everthing)\s+"
        r"(?:that\s+)?(?:you(?:'ve| have)?\s+(?:been|were)\s+(?:told|given|instructed|taught"
        r"|programmed|trained)|(?:i|we)\s+(?:said|told you|wrote)|(?:above|before|prior))",
        _IGNORE_WORDS,
    ),
    make_rule(
        "instruction_override",
        1.0,
        rf"{_START}{_IGNORE}\s+(?:{_FILLER}\s+){{0,3}}(?:[\w-]+\s+)?(?:instructions?|directives?"
        r"|guidelines|guardrails|programming|safety|ethics|morals|safeguards)\b"
        rf"|\b{_IGNORE}\s+(?:{_FILLER}\s+){{0,3}}(?:rules|restrictions|limits|guidelines|filters)"
        r"\s+(?:that|which)\s+(?:tell|limit|restrict|prevent|stop|govern|bind|control|keep)\s+you",
        _IGNORE_WORDS,
    ),
    make_rule(
        "instruction_override",
        0.6,
        rf"{_START}{_IGNORE}\s+(?:{_FILLER}\s+){{0,3}}(?:[\w-]+\s+)?(?:rules|filters|restrictions"
        r"|constraints|policies|limitations|limits)\b",
        _IGNORE_WORDS,
    ),
    make_rule(
        "instruction_override",
        0.5,
        rf"\b{_IGNORE}\s+(?:all|any|every|your)\s+(?:of\s+)?(?:your\s+|the\s+)?(?:instructions"
        r"|directives|guidelines|rules|restrictions)\b",
        _IGNORE_WORDS,
    ),
    make_rule(
        "instruction_override",
        1.0,
        r"\bregardless of (?:any |all |the |your )?previous",
        "regardless",
    ),
    make_rule(
        "context_dismissal",
        1.0,
        rf"\b{_IGNORE}\s+(?:all\s+)?(?:of\s+)?(?:the|that|this|what(?:'s| is| was))\s+(?:above"
        r"|before|previous|said before|written above)\b",
        _IGNORE_WORDS,
    ),
    make_rule(
        "context_dismissal",
        1.0,
        r"\b(?:ignore|disregard|forget|skip)\s+(?:the|this|that|your)\s+[\w-]+(?:\s+[\w-]+)?"
        r"\s+and\s+(?:just\s+|instead\s+|simply\s+)?(?:say|state|print|respond|reply|tell|output"
        r"|write|return|answer|claim|declare|display)\b",
        "ignore disregard forget skip",
    ),
    make_rule(
        "context_dismissal",
        1.0,
        r"\b(?:ignore|disregard|forget)\s+(?:the\s+)?above\s+and\b"
        r"|\bdespite (?:what|everything|anything) (?:you(?:'ve| have)? )?(?:been|were) told\b",
        "ignore disregard forget despite",
    ),
    make_rule(
        "goal_hijack",
        1.0,
        r"\b(?:do not|don'?t) answer (?:this|the|my) question,? (?:but|and|instead)\s+(?:just\s+"
        r"|only\s+|simply\s+)?(?:output|say|print|write|reply|respond|type)\b",
        "answer",
    ),
    make_rule(
        "safety_override",
        1.0,
        r"\b(?:bypass|override|disable|turn off|switch off|deactivate|circumvent|ignore|disregard"
        r"|remove|lift)\s+(?:all|your|any|every)\s+(?:of\s+)?(?:your\s+|the\s+)?(?:own\s+)?"
        r"(?:safety|security|content|ethical|moral)\s+(?:settings|measures|filters|guidelines"
        r"|protocols|restrictions|rules|checks|features|policies|guardrails|mechanisms"
        r"|constraints|training)\b",
        "safety security content ethical moral",
    ),
)

_MULTILINGUAL_RULES = (
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|ignore|ignorar|olvida|olvide|descarta|omite|esqueca|desconsidere)\s+"
        r"(?:todas\s+)?(?:las\s+|tus\s+|sus\s+|as\s+|suas\s+)?(?:instrucciones|instrucoes"
        r"|indicaciones|orientacoes|ordenes|reglas|regras)\s+(?:anteriores|previas)",
        "anteriores previas",
    ),
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:toutes\s+)?(?:les\s+|vos\s+|tes\s+)?(?:instructions"
        r"|consignes|directives|regles)\s+(?:precedentes|anterieures)"
        r"|\bignorez\s+(?:la|le|les)\s+\w+\s+et\s+(?:indiquez|dites|affichez|repondez|ecrivez)",
        "precedentes anterieures ignorez",
    ),
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignoriere|ignorieren sie|vergiss|vergessen sie|missachte)\s+(?:alle\s+)?(?:die\s+)?"
        r"(?:vorherigen|bisherigen|vorigen|obigen|fruheren)\s+(?:anweisungen|instruktionen|befehle"
        r"|regeln)",
        "anweisungen instruktionen befehle regeln",
    ),
    make_rule(
        "instruction_override",
        1.0,
        r"\b(?:ignora|dimentica|ignorate)\s+(?:tutte\s+)?(?:le\s+)?(?:istruzioni|indicazioni)\s+"
        r"(?:precedenti|anteriori)",
        "precedenti anteriori",
    ),
    make_rule(
        "instruction_override",
        1.0,
        r"(?:игнорир\w*|проигнорир\w*|забудь\w*)\s+(?:\w+\s+)?(?:предыдущ\w+|прошл\w+)\s+"
        r"(?:инструкц\w+|указани\w+)"
        r"|αγνοησ\w*\s+(?:\w+\s+)?προηγουμεν\w*\s+οδηγι\w*"
        r"|تجاهل\s+(?:جميع\s+|كل\s+)?(?:التعليمات|الأوامر|التوجيهات)\s+السابقة"
        r"|이전\s*(?:의\s*)?(?:지시|명령|지침)\S*\s*무시"
        r"|पिछले\s+निर्देश\S*\s+(?:की\s+)?(?:अनदेखी|उपेक्षा)"
        r"|(?:以前|前|これまで|上記)の(?:指示|命令|指令)を?無視"
        r"|忽略(?:之前|以前|上面|先前|所有)?的?(?:所有)?(?:指令|指示|说明|命令)",
        "",
        ("предыдущ", "прошл", "προηγουμεν", "السابقة", "무시", "निर्देश", "無視", "忽略"),
    ),
)

_PERSONA_RULES = (
    make_rule("jailbreak_persona", 1.0, r"\bdo anything now\b", "anything", dampened=False),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:you are|you're|act as|acting as|become|pretend to be|roleplay as|role-play as"
        r"|known as|called)\s+(?:now\s+)?(?:a\s+|an\s+|the\s+)?dan\b|\bdan mode\b"
        r"|\b(?:betterdan|antigpt|anti-gpt|mongo tom|chaosgpt|wormgpt|evilbot|smartgpt)\b",
        "dan betterdan antigpt anti mongo chaosgpt wormgpt evilbot smartgpt",
        dampened=False,
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:you are|you're|you will be|you'll be|you)\s+(?:now\s+|no longer\s+)?(?:not\s+)?"
        r"(?:bound|restricted|limited|constrained)\s+by\s+(?:any\s+|the\s+|your\s+|[\w-]+'?s?\s+)?"
        r"(?:rules|restrictions|guidelines|polic(?:y|ies)|filters|limitations|ethics|constraints"
        r"|content polic)",
        "bound restricted limited constrained",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:answer|respond|reply|talk|speak|act|behave|operate|continue|output|generate|say)\s+"
        r"(?:[\w-]+\s+){0,3}?without\s+(?:any\s+)?(?:restrictions?|limitations?|limits|filters?"
        r"|filtering|censorship|censoring|rules|guidelines|guardrails|moral|ethic|refus)",
        "without",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\bpretend (?:that )?(?:you(?:'re| are)|to be) (?:a |an |the )?(?:villain|evil"
        r"|unrestricted|unfiltered|uncensored|jailbroken|malicious|rogue|hacked|different ai"
        r"|another ai|(?:ai|model|assistant|chatbot) (?:with(?:out)?|that|who|which))"
        r"|\bforget (?:about )?(?:being|that you are|you are|you're) (?:an? )?(?:harmless|helpful"
        r"|ethical|safe|ai|assistant|language model|chatbot|bound|restricted)",
        "pretend forget",
    ),
    make_rule(
        "jailbreak_persona",
        0.5,
        r"\b(?:no|without) (?:special |any )?(?:filtering|censorship)\b|\bjailbr(?:oken|eak)\b"
        r"|\b(?:without|with no|free (?:of|from)|no)\s+(?:any\s+)?(?:ethical|moral|content"
        r"|safety)\s+(?:guidelines|rules|restrictions|constraints|boundaries|filters|limitations|policies"
        r"|principles|guardrails)",
        "filtering censorship jailbroken jailbreak ethical moral content safety",
    ),
    make_rule(
        "role_hijack",
        0.6,
        r"\byou are (?:now|no longer)\b|\bfrom now on,? (?:you|your)\b",
        "you your",
    ),
    make_rule(
        "role_hijack",
        1.0,
        r"\b(?:act|behave|respond) as (?:if|though) you(?:'re| are| were)? (?:not bound|free"
        r"|unrestricted|unfiltered|uncensored|without|no longer|an? (?:ai|assistant|model)"
        r" (?:without|with no))|\byou are no longer (?:bound|an ai|an assistant|restricted"
        r"|chatgpt|claude|limited)",
        "if though longer",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:i am|i'm|as) your (?:developer|creator|maker|programmer|maintainer|trainer|master"
        r"|god|designer)\b",
        "developer creator maker programmer maintainer trainer master god designer",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:imagine|pretend|suppose|assume|say|let'?s say|act as if)(?: that)? (?:i am|i'm)"
        r" (?:a|an|the|your) (?:\w+ )?(?:developer|admin|administrator|owner|operator|sysadmin"
        r"|creator|engineer)\b",
        "developer admin administrator owner operator sysadmin creator engineer",
    ),
    make_rule(
        "authority_claim",
        0.5,
        r"\b(?:i am|i'm) (?:a |the )?god\b|\b(?:i am|i'm) your (?:owner|admin|administrator|boss"
        r"|operator)\b|\bas an ai (?:developed|created|made|built|trained) by\b",
        "god owner admin administrator boss operator ai",
    ),
    make_rule(
        "coercion",
        0.6,
        r"\byou (?:have to|must|shall|will) (?:obey|comply|answer all|listen to (?:me|my)"
        r"|follow my|do (?:exactly )?(?:as|what) i say)",
        "obey comply all listen follow say",
    ),
    make_rule(
        "pretext",
        0.4,
        r"\b(?:running|performing|conducting|initiating|doing)\s+(?:an?|the)\s+['\"]?(?:security"
        r" audit|system (?:check|upgrade|reset|test|diagnostic)|maintenance|diagnostic)",
        "audit system maintenance diagnostic",
    ),
)

_MODE_RULES = (
    make_rule(
        "mode_switch",
        1.0,
        r"\b(?:override|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|no[- ]restrictions?"
        r"|evil|chaos|opposite|knowledge verification)\s+mode\b",
        "mode",
    ),
    make_rule(
        "mode_switch",
        1.0,
        r"\b(?:you are|you're|you will be|you'll be|now)\s+(?:now\s+)?(?:entering|in|into"
        r"|operating in|running in|switched to)\s+(?:the\s+|a\s+)?['\"]?(?:[\w-]+\s+){0,2}?"
        r"(?:developer|dev|maintenance|god|admin|administrator|debug|system|sudo|root|test"
        r"|diagnostic|verification|training|unlocked|unsafe)['\"]?\s+mode\b"
        r"|\b(?:i am|i'm|we are|we're)\s+(?:now\s+)?(?:entering|initiating|activating|enabling"
        r"|putting you in(?:to)?|switching you (?:to|into))\s+(?:the\s+|a\s+)?['\"]?"
        r"(?:[\w-]+\s+){0,3}?mode\b"
        r"|\b(?:chatgpt|gpt|ai|assistant|model|llm|claude|bot) (?:with|in) developer mode\b"
        r"|\bdeveloper mode (?:enabled|activated|on)\b",
        "mode",
    ),
    make_rule("mode_switch", 1.0, r"<[^<>]{0,40}\bmode\b[^<>]{0,20}>", "mode", dampened=False),
    make_rule(
        "override_claim",
        0.5,
        r"\b(?:system|developer|admin|security|law enforcement|training data|safety)\s+"
        r"(?:[\w-]+\s+)?override\b|\boverride (?:code|protocol|command|authori[sz]ation)\b",
        "override",
    ),
)

CONTROL_RULES: tuple[Rule, ...] = (
    *_OVERRIDE_RULES,
    *_MULTILINGUAL_RULES,
    *_PERSONA_RULES,
    *_MODE_RULES,
)

# Patterns for text with every non-letter removed ("i.g.n.o.r.e a-l-l ..."); only used when
# the text shows letter-by-letter spacing, so word boundaries no longer exist.
COMPACT_RULES: tuple[Rule, ...] = (
    make_rule(
        "instruction_override",
        1.0,
        r"(?:ignore|disregard|forget|bypass|override)(?:all|any|the|your|of)*(?:previous|prior"
        r"|above|preceding|earlier|system|safety)(?:instructions?|prompts?|rules|directives"
        r"|guidelines)",
        dampened=False,
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"(?:reveal|print|show|repeat|output|tellme|giveme)(?:me)?(?:your|the)(?:system|initial"
        r"|original|hidden)?prompt",
        dampened=False,
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"doanythingnow|youarenow(?:a|in)?dan|developermode",
        dampened=False,
    ),
)
