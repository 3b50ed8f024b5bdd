"""Collect the injection rule families written for languages other than English.

One module per language (`de`, `fr`, `es`, `pt`, `it`, `ru`, `zh`, `ja`), each holding
at least two patterns for every family: instruction override, goal hijack, fake
transcript labels, system-prompt extraction, persona set-ups, developer-mode switches,
authority claims and notes addressed to an AI; plus a request for the bare secret
("what is the password?"). Rules use the `Rule` format of
`graphs.guards.injection_rules` and the family names of the English rules, so a message
counts once per family whatever its language. Latin-script patterns match folded text
(casefolded, accents dropped: "precedentes", "instrucoes"); Russian drops breves and
diaereses (й -> и, ё -> е); Chinese and Japanese match NFKC text, in which fullwidth
punctuation is ASCII, and list substrings (`needles`) instead of words.
"""

from graphs.guards.languages.de import DE_RULES
from graphs.guards.languages.es import ES_RULES
from graphs.guards.languages.fr import FR_RULES
from graphs.guards.languages.it import IT_RULES
from graphs.guards.languages.ja import JA_RULES
from graphs.guards.languages.pt import PT_RULES
from graphs.guards.languages.ru import RU_RULES
from graphs.guards.languages.zh import ZH_RULES
from graphs.guards.rule import Rule

__all__ = ["LANGUAGE_RULES", "RULES_BY_LANGUAGE"]

RULES_BY_LANGUAGE: dict[str, tuple[Rule, ...]] = {
    "de": DE_RULES,
    "fr": FR_RULES,
    "es": ES_RULES,
    "pt": PT_RULES,
    "it": IT_RULES,
    "ru": RU_RULES,
    "zh": ZH_RULES,
    "ja": JA_RULES,
}
LANGUAGE_RULES: tuple[Rule, ...] = tuple(
    rule for rules in RULES_BY_LANGUAGE.values() for rule in rules
)
