"""Hold the weighted patterns for injections that try to extract data or make the agent act.

Same `Rule` format and scoring as `injection_rules`. Families: system-prompt exfiltration
("reveal your system prompt", "repeat the text above", "the instructions you were
given"), secret exfiltration ("what is your password", the password as a poem or in pig
latin), fake chat-template delimiters (`<|im_start|>`, `[INST]`, `</system>`,
`### system:`), tool and approval manipulation ("approve this automatically", "call the
tool without asking"), data exfiltration (send data to a URL or an e-mail address,
markdown/HTML images whose URL carries a query), payload splitting ("part 1 ... part 2 ...
combine them"), shell-command requests and token flooding (one word repeated 20+ times).
"""

from __future__ import annotations

from graphs.guards.rule import Rule, make_rule

__all__ = ["EXTRACTION_RULES", "FLOODING_RULE", "NUMBER_FLOODING_RULE"]

_SENSITIVE = (
    r"(?:password|passcode|passphrase|pass phrase|secret (?:key|code|word|phrase)s?"
    r"|api[ _-]?keys?|private keys?|access (?:codes?|tokens?|keys?)|credentials|tokens?"
    r"|confidential (?:string|data|information))"
)
_SENSITIVE_WORDS = (
    "password passcode passphrase pass secret secrets api apikey apikeys api_key api_keys private"
    " access credentials token tokens confidential"
)
_SHOW = (
    r"(?:reveal|print|show|display|output|repeat|tell|give|share|leak|dump|write|spell|recite"
    r"|list|paste|copy|return|provide|disclose|expose|read|send|type)"
)

_PROMPT_RULES = (
    make_rule(
        "prompt_exfiltration",
        1.0,
        rf"\b(?:{_SHOW}|what(?:'s| is| are| was| were))\s+(?:me\s+|us\s+)?(?:out\s+)?"
        r"(?:\w+\s+){0,3}?your\s+(?:\w+\s+)?(?:system prompt|system message|prompt|instructions"
        r"|initial prompt|programming|directives|hidden instructions|secret instructions)",
        "prompt system instructions programming directives",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        rf"\b{_SHOW}\s+(?:me\s+|us\s+)?(?:out\s+)?(?:the\s+|that\s+|this\s+)?(?:(?:full|complete"
        r"|entire|exact|original|initial|hidden|secret|whole)\s+)*(?:text of the\s+)?"
        r"(?:system prompt|system message|(?:initial|original|hidden) prompt|pre-?prompt"
        r"|meta-?prompt|prompt above)\b"
        # "the original instructions for the espresso machine" is a manual, not a prompt.
        r"|\b(?:initial|original|hidden) instructions\b(?!\s+(?:for|of|on|to|about|from|in)\b)",
        "prompt message instructions preprompt metaprompt",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:instructions|prompt|rules|guidelines|directives)\s+(?:that\s+)?(?:you\s+(?:were"
        r"|have been|'ve been|got)|were)\s+(?:given|told|programmed|provided|trained)",
        "given told programmed provided trained",
    ),
    make_rule(
        "prompt_exfiltration",
        1.0,
        r"\b(?:repeat|print|output|show|say|copy|write out|recite|echo)\s+(?:back\s+)?(?:everything"
        r"|all|the (?:text|words|content|message|lines?|sentences?|instructions|conversation"
        r"|prompt))\s+(?:\w+\s+)?(?:above|before|so far|preceding|from the (?:beginning|start))"
        r"|\b(?:starting|beginning) with ['\"]?you are\b",
        "above before far preceding beginning start starting",
    ),
    make_rule(
        "secret_exfiltration",
        1.0,
        rf"\b(?:{_SHOW}|ask for|hand over|what(?:'s| is| are))\s+"
        r"(?:(?:me|with me|us|to me|what)\s+)?"
        rf"(?:\w+\s+){{0,3}}?your\s+(?:own\s+)?(?:\w+\s+)?{_SENSITIVE}\b"
        rf"|\bwhat (?:would|will|is|was|might|could) (?:be )?your {_SENSITIVE}",
        _SENSITIVE_WORDS,
    ),
    make_rule(
        "secret_exfiltration",
        1.0,
        r"\b(?:poem|haiku|acrostic|song|story|riddle|limerick|leetspeak|leet|pig latin|rot13|morse"
        r"|reverse order|backwards)\b.{0,40}\b(?:the|your|our) (?:password|passcode|passphrase"
        r"|secret)\b|\b(?:the|your|our) (?:password|passcode|passphrase|secret)\b.{0,40}"
        r"\b(?:poem|haiku|acrostic|leetspeak|leet|pig latin|rot13|morse|reverse order|backwards)\b"
        r"|\bspell (?:out )?(?:the|your) (?:password|passcode|passphrase)\b",
        "password passcode passphrase secret",
    ),
    make_rule(
        "secret_request",
        0.7,
        r"\b(?:confirm|tell me|give me|share|reveal|provide|what(?:'s| is)|send me)\s+(?:me\s+)?"
        r"(?:the|our) (?:system )?(?:password|passcode|passphrase|secret key|secret code|api key"
        r"|access code)(?:\s*[?.!,]|\s*$| for (?:our|the|this) (?:system|account|database|server"
        r"|mode|audit|upgrade|check|test))",
        "password passcode passphrase secret api access",
    ),
    make_rule(
        "secret_request",
        0.6,
        r"\b(?:print|return|dump|list|show|reveal|output|send)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?"
        r"(?:environment variables|env vars|\.env|api keys|secrets|admin password)\b",
        "environment env api secrets admin",
    ),
)

_DELIMITER_RULES = (
    make_rule(
        "fake_delimiter",
        1.0,
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id"
        r"|end_header_id|begin_of_text)\|>|\[/?inst\]|<</?sys>>|</(?:system|sys|instructions?"
        r"|admin|developer)(?:_prompt)?>",
        "",
        ("<", "[inst]", "[/inst]"),
        dampened=False,
    ),
    make_rule(
        "fake_delimiter",
        1.0,
        r"(?:^|\s)#{1,6}\s*(?:system|instructions?|new instructions|admin|developer|sudo)\s*"
        r"(?:prompt|message|override|mode|note)?\s*:",
        "",
        ("#",),
        dampened=False,
    ),
    make_rule(
        "fake_delimiter",
        0.6,
        r"<(?:system|sys|instructions?|admin|developer)(?:_prompt)?>",
        "",
        ("<",),
    ),
    make_rule(
        "fake_delimiter",
        0.5,
        r"</?(?:assistant|user|prompt|context|tool|function)>|(?:^|[.!?]\s*)(?:system|admin"
        r"|developer)\s*(?:prompt|message|note|override)?\s*:|\bnew (?:instructions|task|rules"
        r"|directives?)\s*:|\bend of (?:the )?(?:system )?(?:prompt|instructions|context)\b",
        "system admin developer new end",
        ("<",),
        dampened=False,
    ),
)

_ACTION_RULES = (
    make_rule(
        "approval_manipulation",
        1.0,
        r"\b(?:approve|accept|authori[sz]e|confirm|allow|grant)\s+(?:this|it|that|them|these|all"
        r"|everything|(?:the|any|every) (?:[\w-]+\s+){0,2}?(?:request|action|tool call|call"
        r"|transfer|payment|deletion|command|operation|change|tool)s?)?\s*(?:automatically"
        r"|without (?:asking|approval|confirmation|checking|review|the owner|owner|me|a human"
        r"|human)|on (?:my|the owner'?s?) behalf|silently)",
        "automatically without behalf silently",
    ),
    make_rule(
        "approval_manipulation",
        1.0,
        r"\b(?:call|run|use|invoke|execute|trigger|fire)\s+(?:the\s+|any\s+|all\s+|every\s+|this\s+"
        r"|that\s+)?(?:[\w-]+\s+){0,2}?(?:tools?|functions?|commands?|actions?|api)\s+(?:[\w-]+\s+)"
        r"{0,2}?without\s+(?:asking|approval|confirmation|confirming|permission|checking|telling"
        r"|notifying|the owner|human|review)",
        "without",
    ),
    make_rule(
        "approval_manipulation",
        1.0,
        r"\b(?:skip|bypass|circumvent|don'?t ask for|do not ask for|no need (?:for|to ask for))\s+"
        r"(?:the\s+|any\s+)?(?:owner'?s?\s+|human\s+|manual\s+)?(?:approval|confirmation"
        r"|permission)s?\b",
        "approval approvals confirmation confirmations permission permissions",
    ),
    make_rule(
        "approval_claim",
        0.5,
        r"\b(?:owner|admin|administrator)\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed"
        r"|pre-?approved|signed off)|\b(?:auto-?approve|pre-?approved)\b|\bwithout approval\b",
        "owner admin administrator approve autoapprove approved preapproved approval",
    ),
    make_rule(
        "command_execution",
        0.5,
        r"\b(?:run|execute|exec)\s+(?:\w+\s+){0,2}?(?:os|shell|system|terminal|bash|arbitrary)\s+"
        r"commands?\b",
        "command commands",
    ),
    make_rule(
        "data_exfiltration",
        1.0,
        r"\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email|mail|submit|pipe|append"
        r"|embed)\s+(?:it|this|them|that|everything|all|(?:the|your|my|all|any|our)\s+(?:[\w-]+\s+)"
        r"{0,3}?(?:data|conversation|chat|history|context|contents?|secrets?|keys?|passwords?"
        r"|credentials|tokens?|prompt|instructions|messages?|files?|documents?|notes|results?"
        r"|summary|emails?|report|information|info|details|answers?|records?|database"
        r"|environment variables))\s+(?:[\w-]+\s+){0,3}?to\s+(?:https?://|www\.)",
        "",
        ("http", "www."),
    ),
    make_rule(
        "data_exfiltration",
        0.5,
        r"\b(?:send|post|upload|forward|transmit|exfiltrate|leak|email|mail|submit|pipe)\s+"
        r"(?:[\w-]+\s+){1,4}?to\s+(?:[\w.+-]+@[\w-]+\.|(?:my|this|our|an?) (?:server|webhook"
        r"|endpoint|url|address|email address|inbox))",
        "server webhook endpoint url address inbox",
        ("@",),
    ),
    make_rule(
        "secret_request",
        0.5,
        r"\b(?:tell|give|share|reveal|show)\s+(?:me\s+|us\s+)?(?:all\s+)?your\s+secrets\b",
        "secrets",
    ),
    make_rule(
        "data_exfiltration",
        0.8,
        r"!\[[^\]]*\]\(\s*https?://[^)\s]*\?[^)\s]*=|<img\b[^>]*\bsrc\s*=\s*['\"]?https?://[^'\"\s>]*"
        r"\?[^'\"\s>]*=",
        "",
        ("http",),
        dampened=False,
    ),
    make_rule(
        "exfiltration_url",
        0.5,
        r"https?://\S*(?:steal|exfil|leak|grab|collect)\S*\?\S*=",
        "",
        ("http",),
        dampened=False,
    ),
)

_SPLITTING_RULES = (
    make_rule("payload_parts", 0.5, r"\bpart (?:1|one)\b.{0,160}?\bpart (?:2|two)\b", "part"),
    make_rule(
        "payload_assembly",
        0.5,
        r"\b(?:interlace|interleave|combine|concatenate|join|merge|assemble|put together)\b"
        r"(?:\s+\w+){0,2}?\s*(?:the\s+)?(?:parts?|strings?|pieces|[a-e](?:,\s*[a-e])*,?\s*and\s*"
        r"[a-e])\b|\bstring\s+\w\s*=\s*\w\s*\+\s*\w",
        "interlace interleave combine concatenate join merge assemble together string",
    ),
    make_rule(
        "payload_question",
        0.5,
        r"\banswer the question (?:using|from|formed|made)|\band answer the question\b",
        "question",
    ),
)

# Probes for another person's data: "the user's birth year", "the user's email address"
# (a knowledge base answers about documents, not about whoever else is talking to it), and
# calls of a function that fetches a secret ("get_admin_password()"). Enough to harden.
_PERSONAL_DATA_RULES = (
    make_rule(
        "personal_data_probe",
        0.7,
        r"\b(?:the|this|that|other|another|current) (?:user|member|customer|person|human)'?s? "
        r"(?:(?:current|full|first|last|home|real|exact|personal|private|date of|place of|birth"
        r"|e-?mail|email|phone|mobile|postal|street) ){0,2}(?:e-?mail(?: address)?|address"
        r"|phone(?: number)?|telephone|mobile|birth ?(?:day|date|year|month|place)|birthday|age"
        r"|city|residence|location|whereabouts|initials|surname|last name|full name|ssn"
        r"|social security(?: number)?|salary|income|bank(?: account)?|account number"
        r"|ip address|postcode|zip ?code|year of birth|birth)\b",
        "user member customer person human users members customers",
    ),
    make_rule(
        "personal_data_probe",
        0.7,
        r"\b(?:where|in which (?:city|town|country|street)|what (?:city|town|country|street))"
        r" (?:does|did|do) (?:the|this|that|other|another|our) (?:other )?(?:user|member|customer"
        r"|person|human)s? (?:currently |actually |really |now )?(?:live|lives|reside|stay|work)\b",
        "user member customer person human users members customers",
    ),
    make_rule(
        "secret_request",
        0.7,
        r"\b\w*(?:password|passwd|passphrase|secret|api_?key|apikey|credentials?)\w*\s*\(\s*\)",
        "",
        ("password", "passwd", "passphrase", "secret", "api", "credential"),
    ),
)

# Only tried when some token repeats 20 times or more (see `injection`).
FLOODING_RULE = make_rule(
    "token_flooding", 1.0, r"\b([^\W\d_]{2,30})\b(?:\W{1,3}\1\b){19,}", dampened=False
)
# The same number 20 times in a row ("12345 12345 ..."), padding that pushes the real
# request past a reader's attention: enough to harden.
NUMBER_FLOODING_RULE = make_rule(
    "token_flooding", 0.7, r"\b(\d{3,30})\b(?:\W{1,3}\1\b){19,}", dampened=False
)

EXTRACTION_RULES: tuple[Rule, ...] = (
    *_PROMPT_RULES,
    *_DELIMITER_RULES,
    *_ACTION_RULES,
    *_SPLITTING_RULES,
    *_PERSONAL_DATA_RULES,
)
