"""Deterministic routing of a user message to what the offline model does: a reply or tool calls.

Rules, tried in this order on the last user message (case, curly quotes and spacing
normalised; rules 3 and 4 are anchored at the start, so a request must *be* a request):

1. greeting -> no tool: empty, or only greetings and help requests ("hi", "thanks",
   "what can you do?", "/start").
2. document -> get_entry: "show/open/get/view document|doc|entry|source|file <id>" where
   the id holds a digit ("open document 4f9e21").
3. contact -> draft_contact_message: starts (after "please", "can/could/would/will you")
   with tell, inform, notify, remind, warn, ask, message, contact, ping, email, write to,
   "let ... know", or "send/write/draft a message|note|request (to) ..." addressed to the
   owner or admin. The request wrapper is stripped: "tell the owner that X" -> "X.",
   "ask the admin to X" -> "Please X.", "ask the owner whether X" -> "Could you tell me
   whether X?", "message the owner: X" -> "X".
4. share -> search_private, then share_to_knowledge: starts with share/publish + "my ..."
   ("share my note about the offsite with everyone"), or "make my ... public". The topic
   is what follows "my note about|on|called|titled ...", else the rest of "my ...".
5. memory -> search_memory: asks what was said before, at the start (after "please",
   "can you remind/tell/show me", "remind me"): "what (did/have) I ask(ed)/tell/told/
   say/said (you) ...", "what did we talk/discuss/chat about ...", "what was/were my
   (last) question(s) ...", "which questions did I ask ...". The days it names are resolved
   by `graphs.llm.offline_memory`; "what did I write/save ..." stays a question (rule 6).
6. question -> search_knowledge (+ search_private when offered): everything else.

Rules 3 and 4 need the imperative at the start and an owner/admin or "my ..." object, so
questions that only *mention* owners or sharing ("who is the owner of the wifi?", "can I
share my notes?", "what does share_to_knowledge do?") are questions (rule 6), never a
high-risk tool. "can I ..." asks about a capability; only "can you ..." asks Lore to act.

A question refers to the user's own material (`private_ref`) when it says "my
notes/documents/files/links/...", "did I save/write/...", "I wrote/saved/...", "what did
I ...". Principle: relevance, not keywords, decides what answers, so in a private chat
every question searches both collections (own notes first when `private_ref`). In a
group chat private notes are never searched; a `private_ref` question searches the
shared knowledge and the answer says that private notes are not searched there.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

__all__ = ["Route", "RouteKind", "normalise", "route"]

RouteKind = Literal["greeting", "document", "contact", "share", "memory", "question"]


@dataclass(frozen=True, slots=True)
class Route:
    """What the last user message asks for; `text` is the query, message, topic or id."""

    kind: RouteKind
    text: str = ""
    private_ref: bool = False


_GREETING_ITEM = (
    r"(?:(?:hi|hello|hey|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day))"
    r"(?: there)?|(?:thanks|thank you|thx|cheers)(?: very much| a lot)?|help|/?start|/help"
    r"|how are you(?: doing)?(?: today)?|what can you do(?: for me)?|what can i ask(?: you)?"
    r"|what do you do|how do i use (?:you|this|lore|this bot)|who are you|what are you"
    r"|what is this bot)"
)
_GREETING = re.compile(rf"{_GREETING_ITEM}(?: {_GREETING_ITEM})*")
_DOCUMENT = re.compile(
    r"\b(?:show|open|display|get|fetch|view|read)\s+(?:me\s+)?(?:the\s+)?"
    r"(?:document|doc|entry|source|file|note)\s+(?:id\s+)?[#:]?\s*"
    r"(?P<id>(?=[A-Za-z_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{2,})",
    re.IGNORECASE,
)
_POLITE = (
    r"(?:(?:hey|hi|ok|okay|lore)[\s,]+)*(?:please\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
)
_OWNER = (
    r"(?:the\s+|our\s+|my\s+)?(?:bot\s+|lore\s+)?"
    r"(?:owner|admin|administrator|admins|administrators)\b"
)
_GAP = r"[\s,:;-]*"
_SEND = r"(?:send|write|draft|pass\s+on|forward)"
_NOTE = r"(?:a\s+|an\s+|this\s+|the\s+)?(?:message|note|msg|request|question|complaint)"
_SAYING = r"(?:(?:saying|that|to\s+say|asking|about)\s+)?"
_CONTACT = (
    re.compile(
        rf"^{_POLITE}(?:tell|inform|notify|remind|warn)\s+{_OWNER}{_GAP}"
        r"(?:(?:that|about)\s+)?(?P<msg>.*)$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        rf"^{_POLITE}let\s+{_OWNER}\s+know{_GAP}(?:(?:that|about)\s+)?(?P<msg>.*)$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        rf"^{_POLITE}ask\s+{_OWNER}{_GAP}(?:(?P<ask>to|whether|if|about|for)\s+)?(?P<msg>.*)$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        rf"^{_POLITE}(?:message|contact|ping|e-?mail|text|write\s+to|reach\s+out\s+to"
        rf"|get\s+in\s+touch\s+with)\s+{_OWNER}{_GAP}"
        r"(?:(?:saying|that|to\s+say|and\s+say|and\s+tell\s+(?:them|him|her)(?:\s+that)?"
        r"|with)\s+)?(?P<msg>.*)$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        rf"^{_POLITE}{_SEND}\s+{_OWNER}\s+{_NOTE}{_GAP}{_SAYING}(?P<msg>.*)$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        rf"^{_POLITE}{_SEND}\s+{_NOTE}\s+to\s+{_OWNER}{_GAP}{_SAYING}(?P<msg>.*)$",
        re.IGNORECASE | re.DOTALL,
    ),
)
_SHARE = (
    re.compile(
        rf"^{_POLITE}(?:share|publish)\s+(?P<obj>my\s+.+?)"
        r"(?:\s+(?:with|to)\s+(?:everyone|everybody|all|others|the\s+(?:whole\s+)?(?:team|group)"
        r"|the\s+(?:shared\s+)?(?:knowledge(?:\s+base)?|collection|kb))|\s+publicly)?[\s.!?]*$",
        re.IGNORECASE | re.DOTALL,
    ),
    re.compile(
        rf"^{_POLITE}make\s+(?P<obj>my\s+.+?)\s+(?:public|shared|available\s+to\s+everyone)"
        r"[\s.!?]*$",
        re.IGNORECASE | re.DOTALL,
    ),
)
_TOPIC = re.compile(
    r"^my\s+(?:own\s+)?(?:private\s+)?(?:notes?|documents?|docs?|files?|entry|entries|pages?"
    r"|links?|bookmarks?|uploads?)\s+(?:about|on|called|titled|named|regarding|re|for|from)\s+"
    r"(?P<topic>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_MEMORY = re.compile(
    r"^(?:(?:hey|hi|ok|okay|lore|so|and|please)\s+)*"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:remind|tell|show)\s+me\s+"
    r"|(?:remind|tell|show)\s+me\s+)?"
    r"(?:(?:what|which\s+questions?)\s+(?:(?:did|have|had)\s+)?i\s+(?:ever\s+|already\s+)?"
    r"(?:ask|asked|tell|told|say|said)\b"
    r"|what\s+(?:did|have)\s+we\s+(?:talk|talked|discuss|discussed|chat|chatted)\b"
    r"|what\s+(?:was|were)\s+my\s+(?:last\s+|previous\s+|earlier\s+)?questions?\b)"
)
_PRIVATE_REF = re.compile(
    r"\b(?:my\s+(?:own\s+)?(?:private\s+)?(?:notes?|documents?|docs|files?|uploads?|links?"
    r"|bookmarks?|entries|pages)"
    r"|(?:did|have)\s+i\s+(?:ever\s+)?(?:save|saved|write|written|note|noted|store|stored|add"
    r"|added|forward|forwarded|send|sent|upload|uploaded|keep|kept|mention|mentioned|bookmark"
    r"|bookmarked|jot|record|recorded)"
    r"|i\s+(?:wrote|saved|noted|stored|added|forwarded|uploaded|bookmarked|jotted|recorded)"
    r"|what\s+did\s+i)\b"
)


def normalise(text: str) -> str:
    """Lower case, plain quotes, punctuation dropped (except '/' and "'"), single spaces."""
    folded = unicodedata.normalize("NFKC", text).lower()
    folded = folded.replace("\u2019", "'").replace("\u2018", "'")
    folded = re.sub(r"[^\w\s/']", " ", folded)
    return " ".join(folded.split())


def route(text: str) -> Route:
    """Classify one user message (rules in the module docstring); pure and deterministic."""
    plain = " ".join(unicodedata.normalize("NFKC", text).replace("\u2019", "'").split())
    folded = normalise(plain)
    if not folded or _GREETING.fullmatch(_without_filler(folded)):
        return Route("greeting")
    if document := _DOCUMENT.search(plain):
        return Route("document", document.group("id"))
    if _MEMORY.match(folded):
        return Route("memory", plain)
    if (message := _contact_message(plain)) is not None:
        return Route("contact", message)
    if (topic := _share_topic(plain)) is not None:
        return Route("share", topic)
    return Route("question", plain, private_ref=_PRIVATE_REF.search(folded) is not None)


def _without_filler(folded: str) -> str:
    words = [word for word in folded.split() if word not in {"please", "lore", "so", "oh", "ok"}]
    return " ".join(words)


def _contact_message(plain: str) -> str | None:
    """The message for the owner when `plain` asks to contact them ("" when none was given)."""
    for pattern in _CONTACT:
        if (match := pattern.match(plain)) is None:
            continue
        return _shape_message(match.group("msg"), match.groupdict().get("ask"), plain)
    return None


def _shape_message(raw: str, ask: str | None, plain: str) -> str:
    body = raw.strip().strip("\"'\u201c\u201d").strip()
    if re.match(r"^(?:can|could|would|will)\s+you\b", plain, re.IGNORECASE) or ask:
        body = body.rstrip("?").rstrip()  # the "?" belonged to the request itself
    body = body.rstrip(".").rstrip()
    if not body:
        return ""
    wrappers = {
        "to": "Please {}.",
        "whether": "Could you tell me whether {}?",
        "if": "Could you tell me if {}?",
        "about": "I have a question about {}.",
        "for": "I'd like to ask for {}.",
    }
    if ask:
        return wrappers[ask.lower()].format(body)
    if body[-1] not in "!?":
        body += "."
    return body[0].upper() + body[1:]


def _share_topic(plain: str) -> str | None:
    """The topic of the user's note to share ("" when none was named), or None."""
    for pattern in _SHARE:
        if (match := pattern.match(plain)) is None:
            continue
        obj = match.group("obj").strip().rstrip(".!?").strip()
        if topic := _TOPIC.match(obj):
            return topic.group("topic").strip().strip("\"'\u201c\u201d").strip()
        rest = re.sub(r"^my\s+(?:own\s+)?(?:private\s+)?", "", obj, flags=re.IGNORECASE)
        generic = r"(?:notes?|documents?|docs?|files?|entry|entries|pages?|links?|bookmarks?)"
        return "" if re.fullmatch(generic, rest, re.IGNORECASE) else rest
    return None
