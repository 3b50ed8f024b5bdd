"""The link policy for every text a model writes that a person reads (invariant 9): answers,
approval requests (and so the messages owners receive), digest summaries, previews.

A text stays a link only if the same link occurs, whole, in what the person may be shown
links from (the passages this turn retrieved, the person's own message, the digest being
retold); any other is defanged (`hxxps://attacker[.]example/...`) so that no chat client
renders, previews or fetches it, and each one is recorded as an `untrusted_link` incident.

Links are found the way chat clients auto-link text, taking the longest reading any of
them could make (Telegram's, whose rules tdlib spells out, reaches furthest):

* an address with a scheme (`https://`, `ftp://`, `tg://`, any `name://`);
* a bare host: `www.` anything, a name whose last label is a real top-level domain
  (`attacker.com`, `files.io`; the Public Suffix List that `tld` ships), any name followed
  by a port, path, query or fragment (`attacker.example/c?d=...`), an IPv4 address, and
  an e-mail address (`someone@host.com`);
* from there to the next space, `<`, `>`, `"`, `«` or `»`, less trailing punctuation
  (`.,:;!?'` `*_~`, backticks, closing quotes and `…`) and closing brackets left unopened.

So `https://trusted.example/a'SECRET` is one link, not the trusted `https://trusted.example/a`
followed by text: a trusted address matches only as a whole link, never as a prefix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from tld import is_tld

from graphs.llm.data_blocks import unwrap_data
from graphs.llm.types import ChatMessage
from storage.ids import UserId
from storage.incidents import IncidentRepository

__all__ = [
    "Defanged",
    "defang_all",
    "defang_untrusted",
    "link_spans",
    "record_untrusted_links",
    "turn_texts",
]

UNTRUSTED_LINK = "untrusted_link"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
# A host with at least one dot, maybe after `user@`; not inside a word, a path or an address.
_HOST = re.compile(r"(?<![\w@/#.+\-])(?:[\w.+\-]+@)?(?:[\w~\-]+\.)+[\w\-]+")
_IPV4 = re.compile(r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}")
_PORT = re.compile(r":\d{1,5}")
_STOP = frozenset('<>"«»')
# Closing quotes and an ellipsis too: a trailing one carries nothing a link could leak.
_TRAILING = frozenset(".,:;!?'*_~`\u201d\u2019\u00bb\u203a\u2026")
_PAIRS = {")": "(", "]": "[", "}": "{"}
INERT_SCHEMES = {"http": "hxxp", "https": "hxxps", "ftp": "fxp"}


@dataclass(frozen=True, slots=True)
class Defanged:
    """A text after the link policy, and the hosts of the links it made inert."""

    text: str
    hosts: tuple[str, ...] = ()


@cache
def _real_tld(label: str) -> bool:
    return is_tld(label.lower(), search_private=False)


def link_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every link a chat client could make of `text`, in order."""
    spans: list[tuple[int, int]] = []
    taken = 0
    for match in _SCHEME.finditer(text):
        if match.start() < taken:
            continue
        end = _extent(text, match.end())
        if end > match.end():
            spans.append((match.start(), end))
            taken = end
    for match in _HOST.finditer(text):
        start = match.start()
        if any(first <= start < last for first, last in spans):
            continue
        after = match.end()
        port = _PORT.match(text, after)
        if port is not None:
            after = port.end()
        extended = port is not None or text[after : after + 1] in {"/", "?", "#"}
        if _is_host(match.group(0), extended=extended):
            # A bare host reaches past its name only into a path, query or fragment.
            end = _extent(text, after) if after < len(text) and text[after] in "/?#" else after
            spans.append((start, end))
    return sorted(spans)


def _is_host(found: str, *, extended: bool) -> bool:
    """Whether a dotted name reads as a host to a chat client."""
    host = found.rpartition("@")[2]
    if _IPV4.fullmatch(host):
        return True
    label = host.rpartition(".")[2]
    if not (label.isalpha() and len(label) >= 2) and not label.startswith("xn--"):
        return False
    return extended or host.lower().startswith("www.") or _real_tld(label)


def _extent(text: str, start: int) -> int:
    """Where a link that reaches `start` ends: the next space or stop character (anything
    else, invisible characters included, a client may keep in the link), less trailing
    punctuation and unopened closing brackets."""
    end = start
    while end < len(text) and not text[end].isspace() and text[end] not in _STOP:
        end += 1
    while end > start:
        last = text[end - 1]
        if last in _TRAILING or (last in _PAIRS and _unopened(text[start:end], last)):
            end -= 1
        else:
            break
    return end


def _unopened(span: str, closer: str) -> bool:
    return span.count(closer) > span.count(_PAIRS[closer])


def _key(link: str) -> str:
    """A link as compared with trusted ones: `https://`, `http://` or none, and the host's
    case, make no difference."""
    scheme, separator, rest = link.partition("://")
    if not separator:
        scheme, rest = "", link
    elif scheme.lower() in {"http", "https"}:
        scheme = ""
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    host, path = rest[:cut].lower(), rest[cut:]
    return f"{scheme.lower()}://{host}{'' if path == '/' else path}"


def _host(link: str) -> str:
    """The last two labels of a link's host, for incidents (never its path or query)."""
    rest = link.partition("://")[2] or link
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host = authority.rpartition("@")[2].partition(":")[0].lower()
    return host if _IPV4.fullmatch(host) else ".".join(host.split(".")[-2:])


def _defang(link: str) -> str:
    scheme, separator, rest = link.partition("://")
    if not separator:
        return link.replace(".", "[.]")
    inert = INERT_SCHEMES.get(scheme.lower())
    head = f"{inert}://" if inert is not None else f"{scheme}[:]//"
    return head + rest.replace(".", "[.]")


def _apply(text: str, keep: set[str] | None) -> Defanged:
    pieces: list[str] = []
    hosts: list[str] = []
    done = 0
    for start, end in link_spans(text):
        link = text[start:end]
        pieces.append(text[done:start])
        if keep is not None and _key(link) in keep:
            pieces.append(link)
        else:
            pieces.append(_defang(link))
            hosts.append(_host(link))
        done = end
    pieces.append(text[done:])
    return Defanged("".join(pieces), tuple(hosts))


def defang_untrusted(text: str, trusted: Iterable[str]) -> Defanged:
    """`text` with every link that is not, whole, a link of one of `trusted` defanged."""
    keep = {_key(source[a:b]) for source in trusted for a, b in link_spans(source)}
    return _apply(text, keep)


def defang_all(text: str) -> str:
    """Every link in `text` made inert (previews of an answer not yet checked)."""
    return _apply(text, None).text


def turn_texts(messages: Sequence[ChatMessage], question: str) -> list[str]:
    """What this turn may quote addresses from: the person's message and the texts of the
    tool results since it (the retrieved passages, read out of their JSON, so that an
    address at the end of a line is not glued to the escaped line break after it)."""
    starts = [index for index, message in enumerate(messages) if message.role == "user"]
    current = messages[starts[-1] :] if starts else messages
    texts = [question]
    for message in current:
        if message.role == "tool":
            texts += _strings(message.content)
    return texts


def _strings(content: str) -> list[str]:
    """The strings of a tool result's JSON (the whole text when it is no JSON)."""
    body = unwrap_data(content)
    try:
        value = json.loads(body)
    except ValueError:
        return [body]
    found: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            todo += item.values()
        elif isinstance(item, list):
            todo += item
    return found


async def record_untrusted_links(
    incidents: IncidentRepository,
    defanged: Defanged,
    *,
    where: str,
    platform: str,
    chat_id: str,
    user_id: UserId | None,
    now: datetime | None = None,
) -> None:
    """One `untrusted_link` incident per defanged link (naming its host, never its path)."""
    for host in defanged.hosts:
        await incidents.record_guard(
            guard=UNTRUSTED_LINK,
            reason=f"a link to {host} in {where} came from no source and no question",
            platform=platform,
            chat_id=chat_id,
            user_id=user_id,
            now=now,
        )
