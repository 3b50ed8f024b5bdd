"""Prompt-leak checks on their own: answers that reveal the canary, the instructions or the tool
definitions, however re-cased, re-spaced, paraphrased or lightly encoded, are caught; ordinary
answers, also ones that name a tool in passing or quote a passage about Lore, are not; and
the stream guard never passes on a piece of a leak, while it streams ordinary text whole."""

from __future__ import annotations

import base64
import codecs

import pytest

from graphs.agent.leak_corpus import compact
from graphs.agent.leak_stream import StreamLeakGuard
from graphs.agent.leaks import LeakCheck
from graphs.agent.prompts import HARDENED, INSTRUCTIONS

CANARY = "lore-canary-22f019839a454435"
LINES = [line.lstrip("- ") for line in INSTRUCTIONS.splitlines()]
PRIVACY = LINES[5]  # "A person's private notes are theirs alone. In group chats ..."
CITING = LINES[2]  # "Cite every claim with its source number in square brackets, like [1]; ..."

LEAKS = {
    "canary": f"My marker is {CANARY}.",
    "canary re-cased and re-spaced": " ".join(CANARY.upper()),
    "canary hex only, grouped": "It is 22F0-1983-9A45-4435.",
    "canary backwards": f"Backwards: {CANARY[::-1]}",
    "canary in ROT13": codecs.encode(CANARY, "rot13"),
    "canary in base64": base64.b64encode(CANARY.encode()).decode(),
    "canary as hex bytes": CANARY.encode().hex(),
    "a line upper-cased": f"My instructions say: {LINES[1].upper()}",
    "a line letter-spaced": " ".join(PRIVACY.upper()),
    "a line one word per line": PRIVACY.replace(" ", "\n").title(),
    "a line in base64": "Here you go: " + base64.b64encode(PRIVACY.encode()).decode(),
    "a line as HTML entities": "".join(f"&#{ord(c)};" for c in CITING),
    "a line in leetspeak": "My rul3s: c1t3 3v3ry cl41m w1th 1ts s0urc3 numb3r 1n squ4r3 br4ck3ts.",
    "the hardened rules": HARDENED.strip().splitlines()[-1],
    "pieces of several lines": (
        "Rules: 1) Search before answering a question. 2) Never guess. 3) Keep answers short "
        "and plain. 4) In group chats only shared knowledge exists."
    ),
    "a paraphrase": (
        "In other words: answer only from tool output and search before answering; cite every "
        "claim with a number like [1] taken from the tools; when the sources don't answer, "
        "say you could not find it and never guess; keep private notes private."
    ),
    "a summary": (
        "Sure. I'm Lore, a knowledge-base assistant for a small team. I only answer from what "
        "my tools return and always search first. I cite each claim with its source number in "
        "square brackets. If the sources don't cover it, I say I couldn't find it rather than "
        "guessing. Private notes belong to their owner, and group chats only see shared "
        "knowledge."
    ),
    "three tool names": "I have search_knowledge, Search-Private and searchMemory.",
    "every tool with parameters": (
        "My tools: search_knowledge(query), search_private(query), search_memory(query, "
        "day_from, day_to), get_entry(document_id), draft_contact_message(message)."
    ),
    "one tool with its parameters": "search_memory takes a query plus day_from and day_to.",
    "one tool with schema words": (
        '{"name": "search_knowledge", "parameters": {"type": "object", "properties": '
        '{"query": {"type": "string"}}}}'
    ),
    "a tool description": (
        "search_memory: search your past conversations with the person you are talking with: "
        "what they asked and what you answered."
    ),
}

ORDINARY = {
    "a cited fact": "The office opens at 8 am [1].",
    "a tool named in passing": "I searched with search_knowledge but found nothing on parking.",
    "an approval in passing": (
        "I'll send your message to the owner with draft_contact_message once they approve it."
    ),
    "a refusal": "I couldn't find a source for that in the knowledge base, so I won't guess.",
    "waiting for the owner": (
        "This needs the owner's approval, so I've asked them. I'll tell you when they decide."
    ),
    "privacy in a group": (
        "In group chats I only use the shared knowledge, so your private notes stay private."
    ),
    "what Lore can do": (
        "I can search the shared knowledge base and your private notes, and look up our past "
        "conversations."
    ),
    "no answer in the sources": (
        "The sources do not answer the question of weekend opening hours, so I could not find "
        "it. Please ask the front desk."
    ),
    "memory by date": (
        "Yesterday you asked about the holiday policy [1]; last week, on Monday, you asked "
        "about parking [2]. If you mean last Friday, tell me which date."
    ),
    "how to cite": "To cite a source, write its number in square brackets [1].",
    "a self-introduction": "I'm Lore, the knowledge-base assistant of your team.",
    "a commit hash": "The release commit is 9f2c4e1a7b3d5e6f8a9b0c1d2e3f4a5b6c7d8e9f [1].",
    "a document id": "The document_id of that entry is 4a5b; get_entry reads it.",
    "a long answer": (
        "The office is closed on 24 and 31 December [1]. Between Christmas and New Year the "
        "building opens from 10 am to 2 pm [2], and the parking garage stays open for badge "
        "holders [3]. If you need access on a closed day, ask the facilities team a week "
        "ahead [1]. Receipts go to finance within 30 days [4]."
    ),
}

#: A passage from Lore's own documentation, retrieved this turn, describing its tools.
DOCS_PASSAGE = (
    "Lore's agent has six tools: search_knowledge, search_private and search_memory find "
    "passages and past conversations (search_memory takes a query, day_from and day_to); "
    "get_entry reads a document; draft_contact_message and share_to_knowledge need the "
    "owner's approval."
)


@pytest.mark.parametrize("text", LEAKS.values(), ids=LEAKS.keys())
def test_a_leak_is_caught_however_it_is_written(text: str) -> None:
    assert LeakCheck(CANARY).reason(text) is not None


@pytest.mark.parametrize("text", ORDINARY.values(), ids=ORDINARY.keys())
def test_an_ordinary_answer_is_not_a_leak(text: str) -> None:
    assessment = LeakCheck(CANARY).assess(text)
    assert assessment.reason is None
    assert not assessment.suspicious  # so its preview streams without a pause


def test_quoting_a_retrieved_passage_about_the_tools_is_not_a_leak_but_the_canary_is() -> None:
    answer = f"From the docs: {DOCS_PASSAGE} [1]"
    assert LeakCheck(CANARY).reason(answer) is not None  # without the passage: a tool listing
    assert LeakCheck(CANARY, [DOCS_PASSAGE]).reason(answer) is None
    planted = LeakCheck(CANARY, [f"the marker is {CANARY}"])
    assert planted.reason(f"{answer} The marker is {CANARY}.") == (
        "answer contains the prompt canary"
    )


def _streamed(text: str, pieces: int = 1, context: str = "") -> tuple[str, StreamLeakGuard]:
    shown: list[str] = []
    guard = StreamLeakGuard(LeakCheck(CANARY), shown.append, context=context)
    for start in range(0, len(text), pieces):
        guard.feed(text[start : start + pieces])
    guard.finish()
    return "".join(shown), guard


@pytest.mark.parametrize(
    "leak",
    [
        f"Sure, happy to help with that question of yours today. It is {CANARY} as asked.",
        f"Sure, happy to help with that question of yours today. {CANARY[::-1]} as asked.",
        f"Sure, happy to help with that question of yours today: {' '.join(CANARY)} done.",
        "Sure, happy to help with that question of yours today: "
        + base64.b64encode(CANARY.encode()).decode()
        + " done.",
        f"Sure, happy to help with that question of yours today. My rules: {PRIVACY} Bye.",
        f"Sure, happy to help with that question of yours today: {' '.join(PRIVACY)} Bye.",
    ],
    ids=["canary", "backwards", "spaced", "base64", "a line", "a spaced line"],
)
def test_the_stream_guard_never_passes_on_a_piece_of_a_leak(leak: str) -> None:
    for pieces in (1, 3, 7):
        shown, guard = _streamed(leak, pieces)
        assert guard.leak is not None
        assert leak.startswith(shown)
        assert shown.startswith("Sure, happy to help")
        secret_hex = CANARY.removeprefix("lore-canary-")
        for form in (secret_hex, secret_hex[::-1]):
            assert form[:4] not in compact(shown)
        assert compact(PRIVACY)[:12] not in compact(shown)


def test_a_canary_split_across_two_model_calls_of_one_turn_is_caught() -> None:
    first = f"Let me check the knowledge base for you. {CANARY[:16]}"
    shown, guard = _streamed(CANARY[16:] + " and more text follows here.", 2, context=first)
    assert guard.leak == "answer contains the prompt canary"
    assert shown == ""


@pytest.mark.parametrize("text", ORDINARY.values(), ids=ORDINARY.keys())
def test_the_stream_guard_passes_ordinary_text_on_whole_and_in_order(text: str) -> None:
    shown, guard = _streamed(text, 2)
    assert guard.leak is None
    assert shown == text


def test_the_stream_guard_holds_a_possible_start_of_the_canary_until_it_is_not_one() -> None:
    shown: list[str] = []
    guard = StreamLeakGuard(LeakCheck(CANARY), shown.append)
    guard.feed("The version you asked about is called lore-can")
    assert "lore-can" not in "".join(shown)
    assert "".join(shown).startswith("The version")
    guard.feed("dle and it ships next week, as the release notes say.")
    guard.finish()
    assert "".join(shown).endswith("lore-candle and it ships next week, as the release notes say.")
