"""Hold the weighted English patterns for what an injection wants, whatever its wording.

Same `Rule` format and scoring as `injection_rules`; patterns match folded text. Families:

- goal hijack: a new task replaces the person's question ("your new task is", "just print
  X", "start your answer with ...", "respond only with").
- fake transcript: role labels inside one message ("Assistant: ... User: ..."), which try
  to make the model believe a conversation happened.
- extraction: questions about the assistant's original instructions asked without that
  word ("what were you told before this chat?", "your initial setup", "the text above
  my message").
- persona setup: a named AI with no rules, "two responses", "stay in character", "never
  refuse", "developer mode" and its kin.
- authority claim: "SYSTEM NOTICE from the owner", "admin mode granted", "authorised by the
  developers".
- indirect address: text written for an AI that reads a page ("Note to AI systems reading
  this", "if you are an AI", "when summarising this document, ...").

Weights: 1.0 where the wording has no ordinary use in a question to a knowledge base,
0.5-0.7 where it may (the turn then runs hardened unless something else adds up).
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["INTENT_RULES"]

_AI = r"(?:ai|a\.i\.|llm|llms|assistant|language model|chat ?bot|bot|gpt|chatgpt|model|agent)s?"
_ANSWER = r"(?:answer|reply|response|output|message|next message|first line)"

_HIJACK = (
    make_rule(
        "goal_hijack",
        1.0,
        r"\b(?:your|the) (?:new|real|actual|true|only|updated) (?:task|goal|job|objective|mission"
        r"|instructions?|purpose|role) (?:is|are|will be|now)\b|\bnew (?:instructions?|task|rules)"
        r"\s*[:!-]",
        "new real actual true only updated",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        rf"\b(?:start|begin|prefix|open|end|finish) (?:your|the|each|every) {_ANSWER}s? with\b"
        # "answer only in French / in bullet points" asks for a format, not a payload.
        rf"|\b(?:respond|reply|answer|output) (?:only|solely|exclusively|just) (?:with|using)\b",
        "start begin prefix open end finish respond reply answer output",
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"(?:^|[.!?:;]\s*|\b(?:instead|now|then)\s*,?\s*)(?:just|only|simply)\s+(?:print|say|output"
        r"|write|type|return|echo|reply|respond)\b(?:\s+(?:back|out|with))?\s*(?:the\s+(?:word"
        r"|phrase"
        r"|text|string)\s*)?[\"'«“‘`]",
        "just only simply",
    ),
    make_rule(
        "goal_hijack",
        1.0,
        r"\b(?:say|print|output|write|type|reply|respond with)\s*[\"'“`]?\s*(?:i have been|i've"
        r" been)"
        r" (?:pwned|hacked|owned|jailbroken)|\bpwned\b",
        "pwned",
        dampened=False,
    ),
    make_rule(
        "goal_hijack",
        0.7,
        r"\binstead(?: of (?:answering|that|the question|doing that))?,? (?:just |only |please )?"
        r"(?:print|say|output|write|tell me|reply|respond|do)\b",
        "instead",
    ),
)

_TRANSCRIPT = (
    make_rule(
        "fake_transcript",
        1.0,
        r"(?:^|\s|[.!?\"'\]])(?:assistant|ai|chatgpt|gpt|bot|lore)\s*:\s.{1,400}?"
        r"(?:^|\s|[.!?\"'\]])(?:user|human|me|you)\s*:\s"
        r"|(?:^|\s|[.!?\"'\]])(?:user|human)\s*:\s.{1,400}?(?:^|\s|[.!?\"'\]])(?:assistant|ai"
        r"|chatgpt|gpt|bot|lore)\s*:\s",
        "assistant ai chatgpt gpt bot lore",
    ),
    make_rule(
        "fake_transcript",
        1.0,
        r"^\s*(?:system|\[system\]|<system>|system message|system prompt)\s*:|\[(?:system|assistant"
        r"|developer)\]|\b(?:end|start|begin) of (?:system|user|assistant) (?:prompt|message"
        r"|turn)\b",
        "system assistant developer end start begin",
        dampened=False,
    ),
    make_rule(
        "fake_transcript",
        0.7,
        r"(?:[.!?\"'\]]\s*|\s)(?:assistant|ai)\s*:\s*(?:sure|ok|okay|of course|certainly|yes|here)",
        "assistant ai",
        dampened=False,
    ),
)

_EXTRACTION = (
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\bwhat (?:were|was|are|is|did) you (?:told|given|asked|instructed|programmed|configured"
        r"|set up)\b(?:\s+\w+){0,3}?\s+(?:before|at the (?:start|beginning)|initially|originally"
        r"|by (?:your|the) (?:developers?|creators?|owner|admin|operator|system))"
        r"|\bwhat (?:text|words|message|content) (?:came|comes|was|is|appears?) (?:before|above)"
        r" (?:my|this|our|the (?:first|user))",
        "told given asked instructed programmed configured set text words message content",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:your|the assistant'?s?) (?:initial|original|first|very first|hidden|secret"
        r"|underlying"
        r"|internal|starting|opening|pre-?set|base|core) (?:text|message|setup|configuration|config"
        r"|rules|guidance|orders|directions|briefing|context|commands)\b",
        "initial original first hidden secret underlying internal starting opening preset base"
        " core",
    ),
    make_rule(
        "prompt_exfiltration",
        0.7,
        r"\b(?:what|which) (?:rules|guidelines|constraints|restrictions) (?:do|did|must|were) you"
        r" (?:follow|obey|get|receive|have to|given)|\bhow (?:were|are) you (?:configured|set up"
        r"|instructed|programmed|prompted)\b",
        "rules guidelines constraints restrictions configured instructed programmed prompted",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:repeat|print|output|show|reproduce|dump|quote|recite|copy|translate|summari[sz]e)"
        r" (?:me )?(?:everything|all|the (?:words?|text|lines?|content)) (?:that )?(?:(?:was|is"
        r"|were"
        r"|appears?|came|comes) )?(?:written |said )?(?:before|above|prior to) (?:this|my|our|the"
        r" (?:first|user|conversation))|\bdump (?:your|the) (?:context|memory|prompt"
        r"|instructions)\b",
        "repeat print output show reproduce dump quote recite copy translate summarise summarize",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:what does|what do|show me what|tell me what) (?:your|the) (?:system (?:prompt"
        r"|message)"
        r"|hidden (?:prompt|text|instructions)|configuration|setup|pre-?prompt) (?:say|says|contain"
        r"|contains|look like)",
        "system hidden configuration setup prompt preprompt",
    ),
    make_rule(
        "tool_schema_exfiltration",
        0.7,
        r"\b(?:list|show|print|reveal|dump|output|describe) (?:me )?(?:all )?(?:of )?(?:your|the)"
        r" (?:tools?|functions?|tool (?:schemas?|definitions?|specs?)|function (?:schemas?"
        r"|definitions?)|json schemas?) (?:you have|you can (?:call|use)|available|with (?:their"
        r"|all"
        r"|the) (?:parameters|arguments|schemas?))",
        "tools tool functions function json",
    ),
)

_PERSONA = (
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:stay|remain|keep) in character\b|\bnever (?:break|leave|drop) (?:character|the role"
        r"|role)\b|\b(?:never|must not|will not|won'?t|cannot|can'?t|do not|don'?t) (?:ever )?"
        r"(?:refuse|decline|reject)(?: (?:a|any|my) (?:request|question|prompt))?\b"
        r"(?! (?:to|the|a refund))",
        "character role refuse decline reject",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:two|2|dual|both) (?:different |separate )?(?:responses|answers|replies|outputs"
        r"|paragraphs)\b.{0,80}\b(?:one|first)\b.{0,80}\b(?:other|second|another|unfiltered"
        r"|jailbroken|without)\b|\b(?:respond|answer|reply) (?:as|like) both\b",
        "two 2 dual both",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        rf"\b(?:you are|you're|you will be|you'll be|you will play|play|act as|pretend to be|become"
        rf"|simulate|emulate|roleplay as|role-play as) (?:now )?(?:a |an |the )?(?:\w+ )?{_AI}"
        r" (?:named|called|known as)\b",
        "named called known",
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        rf"\b{_AI} (?:named|called) [\w-]+,? (?:who|that|which) (?:has no|have no|doesn'?t|does not"
        r"|never|can do|will do|answers? (?:any|every)|is (?:free|not bound|unfiltered|unrestricted"
        r"|uncensored))",
        "named called",
    ),
    make_rule(
        "mode_switch",
        0.7,
        r"\b(?:enable|activate|enter|switch (?:on|to|into)|turn on|unlock|engage|go into|boot into)"
        r" (?:the |your )?(?:developer|dev|god|admin|administrator|debug|unrestricted|jailbreak"
        r"|sudo"
        r"|root|super ?user|unfiltered|uncensored|dan|evil|omega) mode\b(?! (?:on|in|for) (?:my|the"
        r"|an?|your) )",
        "mode",
    ),
    make_rule(
        "mode_switch",
        1.0,
        r"\b(?:god|admin|debug|sudo|root|jailbreak|unrestricted|unfiltered|uncensored) mode (?:is"
        r" )?"
        r"(?:now )?(?:on|enabled|activated|engaged|unlocked|granted)\b",
        "mode",
        dampened=False,
    ),
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\byou (?:have been|are now|were|got) (?:freed|liberated|unlocked|unchained|released"
        r"|broken"
        r" free)\b|\b(?:free|freed|liberated) from (?:your|all|the|any) (?:rules|restrictions"
        r"|guidelines|filters|programming|constraints|chains|shackles)",
        "freed liberated unlocked unchained released broken free",
    ),
    make_rule(
        "jailbreak_persona",
        0.7,
        r"\b(?:hypothetical|fictional|imaginary|unfiltered|unrestricted|uncensored|amoral|evil)"
        rf" (?:\w+ )?{_AI}\b|\bopposite (?:day|mode)\b|\bno (?:rules|limits|restrictions|filters)"
        r" (?:apply|exist|at all)\b|\b(?:doesn'?t|does not|don'?t|do not) (?:have|follow|care"
        r" about)"
        r" (?:any )?(?:rules|restrictions|guidelines|ethics|morals|filters)",
        "hypothetical fictional imaginary unfiltered unrestricted uncensored amoral evil opposite"
        " rules limits restrictions filters guidelines ethics morals",
    ),
)

_PERSONA_MORE = (
    make_rule(
        "jailbreak_persona",
        1.0,
        r"\b(?:not|never|no longer) (?:required|obliged|bound|supposed|forced|expected) to"
        r" (?:follow|obey|abide by|comply with|respect|adhere to) (?:any |the |your |their )?"
        r"(?:\w+ )?(?:rules|policies|guidelines|restrictions|content polic(?:y|ies)|norms|ethics)"
        r"|\bbroken free of (?:the |all |any |its |their )?(?:typical |usual |normal )?(?:confines"
        r"|rules|restrictions|limits|limitations|constraints|shackles)",
        "required obliged bound supposed forced expected broken",
    ),
    make_rule(
        "jailbreak_persona",
        0.7,
        r"\b(?:act|acting|pretend|pretending|role-?play) (?:as|to be|like) (?:my |a |an )?(?:\w+ )?"
        r"(?:grand(?:mother|father|ma|pa)|deceased \w+|late \w+)\b"
        r"|\b(?:simulate|act as|pretend to be|behave like|emulate) (?:a |an |my )?(?:linux |unix"
        r" |bash |windows |sql )?(?:terminal|shell|console|command line)\b",
        "act acting pretend pretending roleplay role simulate behave emulate",
    ),
)

_AUTHORITY = (
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:system|admin|administrator|security|owner|developer|operator|official|root|server)"
        r" (?:notice|message|alert|override|update|announcement|instruction|directive|command"
        r"|notification|broadcast|order)s?\s*(?:from [\w ]{1,30})?\s*[:!-]",
        "system admin administrator security owner developer operator official root server",
        dampened=False,
    ),
    make_rule(
        "authority_claim",
        1.0,
        r"\b(?:admin|administrator|root|owner|developer|elevated|sudo|super ?user|full"
        r"|unrestricted)"
        r" (?:mode|access|privileges?|rights|permissions?|clearance) (?:has been |is |are |now )*"
        r"(?:granted|enabled|activated|unlocked|confirmed|approved)",
        "admin administrator root owner developer elevated sudo super superuser full unrestricted",
        dampened=False,
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:i am|i'm|this is|it'?s|speaking as|message from|on behalf of) (?:the|your|an?"
        r"|lore'?s?)"
        r" (?:owner|admin|administrator|developer|creator|operator|system administrator|sysadmin"
        r"|it department|security team|openai|anthropic)\b",
        "owner admin administrator developer creator operator sysadmin department security openai"
        " anthropic",
    ),
    make_rule(
        "authority_claim",
        0.7,
        r"\b(?:authori[sz]ed|verified|approved|sanctioned|signed|cleared) by (?:the )?(?:owner"
        r"|admins?|administrators?|developers?|openai|anthropic|system|security team)\b"
        r"|\b(?:priority|emergency|urgent|critical) (?:override|instructions?|directive|command)\b",
        "authorized authorised verified approved sanctioned signed cleared priority emergency"
        " urgent critical",
    ),
)

_INDIRECT = (
    make_rule(
        "indirect_injection",
        1.0,
        rf"\b(?:note|message|instructions?|attention|notice|memo|reminder) (?:to|for) (?:any |all"
        rf" |the"
        rf" |every |an? )?{_AI}\b|\b{_AI} (?:reading|processing|parsing|summari[sz]ing|crawling"
        r"|scanning|analy[sz]ing) (?:this|these)\b"
        rf"|\bif you (?:are|'re) an? {_AI}\b(?:(?: \w+){{0,4}} (?:reading|processing))?"
        rf"|\bto (?:any|all|the) {_AI} (?:that|who|which) (?:reads?|process(?:es)?|sees?)\b",
        "ai llm llms assistant assistants model models bot bots chatbot chatbots gpt chatgpt agent"
        " agents",
        dampened=False,
    ),
    make_rule(
        "indirect_injection",
        0.7,
        r"\bwhen (?:you (?:are )?)?(?:summari[sz]ing|processing|reading|answering (?:questions"
        r" )?about"
        r"|asked about) this (?:page|document|email|text|file|article|site|message),? (?:you"
        r" (?:must"
        r"|should|will)|please|always|never|do not|don'?t|instead)\b",
        "summarizing summarising processing reading answering asked",
        dampened=False,
    ),
)

INTENT_RULES: tuple[Rule, ...] = (
    *_HIJACK,
    *_TRANSCRIPT,
    *_EXTRACTION,
    *_PERSONA,
    *_PERSONA_MORE,
    *_AUTHORITY,
    *_INDIRECT,
)
