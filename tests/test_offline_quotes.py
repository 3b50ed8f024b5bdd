"""Sentence selection of the offline answerer: lists, sections, headings, answer kinds."""

from __future__ import annotations

import pytest

from graphs.llm.offline_answer import Source, search_answer
from graphs.llm.offline_cues import AnswerKind, answer_kind
from graphs.llm.offline_quotes import pick_sentences, stem_weights

TOOLS_TEXT = (
    "## Risky tools\n\nTwo tools are labelled risky, because they reach other people:\n\n"
    "- `send_note` sends a note from the person to the owner;\n"
    "- `publish` publishes a private document to everyone.\n\n"
    "Risk is a property of the tool, not of the prompt."
)
PAGE_TEXT = (
    "# Morning digests and memory\n\nScheduled jobs send morning digests and build memory.\n\n"
    "## How to turn on the morning digest\n\nSend `/digest 07:30 Europe/Berlin` in a private "
    "chat. Add `quiet` to skip empty days."
)


def source(ref: int, text: str, relevance: float, section: str = "") -> Source:
    return Source(ref, f"doc-{ref}", f"Doc {ref}", f"doc{ref}.md", section, text, relevance, False)


def quoted(question: str, text: str, *, section: str = "") -> str:
    sentences, _ = pick_sentences(question, text, section=section)
    return " ".join(sentence.text for sentence in sentences)


def test_a_sentence_ending_in_a_colon_brings_every_item_of_its_list() -> None:
    quote = quoted("Which tools are risky?", TOOLS_TEXT)
    assert quote.startswith("Two tools are labelled risky")
    assert "`send_note`" in quote
    assert "`publish`" in quote


def test_the_section_named_after_the_question_beats_the_page_opening() -> None:
    quote = quoted("How do I turn on the morning digest?", PAGE_TEXT)
    assert quote.startswith("Send `/digest 07:30 Europe/Berlin`")
    assert "Scheduled jobs" not in quote


def test_a_passage_cut_from_a_long_section_is_read_under_that_section() -> None:
    text = "It costs one dollar a day at most. Nothing is charged twice."
    question = "What is the daily budget?"
    alone, alone_score = pick_sentences(question, text)
    under, under_score = pick_sentences(question, text, section="Daily budget")
    assert under_score > alone_score  # it now competes with passages that show the heading
    assert under[0].heading == "Daily budget"
    assert not under[0].opening  # not shown under its heading: no bonus for an opening
    assert alone[0].heading == ""


def test_the_kind_of_answer_breaks_a_tie() -> None:
    wait = source(1, "Retries wait between attempts.", 0.60)
    count = source(2, "Retries happen up to 3 times.", 0.55)
    how_many = search_answer("How many retries?", [wait, count], threshold=0.3, group_note=False)
    why = search_answer("Why retries?", [wait, count], threshold=0.3, group_note=False)
    assert how_many is not None
    assert why is not None
    assert how_many.text.startswith("From \u201cDoc 2\u201d: \u201cRetries happen up to 3 times.")
    assert why.text.startswith("From \u201cDoc 1\u201d: \u201cRetries wait between attempts.")


def test_words_inside_a_link_do_not_make_a_sentence_relevant() -> None:
    text = (
        "A link is refused with `https://example.org/big.pdf is too large`. "
        "Uploads may be 20 MiB big."
    )
    assert quoted("How big may an upload be?", text) == "Uploads may be 20 MiB big."


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many rounds can a turn use?", AnswerKind.NUMBER),
        ("What is the default daily budget?", AnswerKind.NUMBER),
        ("Where are the originals kept?", AnswerKind.PLACE),
        ("How do I add a document?", AnswerKind.ACTION),
        ("Which values can SEARCH_MODE take?", AnswerKind.CHOICE),
        ("Which log levels can LOG_LEVEL take?", AnswerKind.CHOICE),
        ("Why is my PDF refused?", AnswerKind.ANY),
    ],
)
def test_answer_kinds(question: str, kind: AnswerKind) -> None:
    assert answer_kind(question) is kind


def test_a_passage_outside_the_margin_is_quoted_when_it_holds_more_of_the_question() -> None:
    best = source(1, "The budget day rolls over at midnight.", 0.60, "Budget day")
    lower = source(2, "`DAILY_BUDGET_USD` (default 1.0) caps one day's spending.", 0.45)
    unrelated = source(3, "Digests are sent in the morning.", 0.44)
    answer = search_answer(
        "What is the default daily budget?",
        [best, lower, unrelated],
        threshold=0.3,
        group_note=False,
    )
    assert answer is not None
    assert "default 1.0" in answer.text
    assert "[2]" in answer.text
    assert "[3]" not in answer.text  # below the margin and no better a match


def test_a_fourth_passage_in_the_margin_leads_when_its_quote_answers_best() -> None:
    near = [
        source(1, "Removing a document: use /forget with its handle.", 0.55),
        source(2, "The reindex job repairs the vector store.", 0.52),
        source(3, "Every command opens the data directory.", 0.51),
        source(4, "Deleting DATA_DIR while Lore is stopped resets Lore completely.", 0.49),
    ]
    answer = search_answer(
        "How do I reset Lore completely?", near, threshold=0.3, group_note=False, min_coverage=0.25
    )
    assert answer is not None  # its words count for coverage too: no refusal
    assert answer.text.startswith("From \u201cDoc 4\u201d: \u201cDeleting DATA_DIR")


def test_the_prose_annotating_a_code_line_counts_in_full() -> None:
    layout = (
        "```\nlore.sqlite3        the metadata database\n"
        "qdrant/private/     embedded shard for all private notes\n```"
    )
    prose = "Their vectors live in the private collection of the embedded engine."
    question = "Where does the embedded shard for private notes live?"
    answer = search_answer(
        question, [source(1, prose, 0.40), source(2, layout, 0.39)], threshold=0.3, group_note=False
    )
    assert answer is not None
    assert answer.text.startswith("From \u201cDoc 2\u201d: \u201c`qdrant/private/")
    # A bare code line (no annotation) is still an example, worth half.
    bare = "```\nqdrant/private/embedded/shard/notes\n```"
    answer = search_answer(
        question, [source(1, prose, 0.40), source(2, bare, 0.39)], threshold=0.3, group_note=False
    )
    assert answer is not None
    assert answer.text.startswith("From \u201cDoc 1\u201d")


def test_a_question_for_a_choice_gets_the_quote_that_lists_the_values() -> None:
    section = "## LOG_LEVEL: what Lore logs\n\n`LOG_LEVEL` (default `INFO`) sets the log level."
    table = (
        "| setting | default | meaning |\n|---|---|---|\n"
        "| `LOG_LEVEL` | `INFO` | log level: `DEBUG`, `INFO`, `WARNING` or `ERROR` |"
    )
    passages = [source(1, section, 0.55), source(2, table, 0.31)]
    answer = search_answer(
        "Which log levels can LOG_LEVEL take?", passages, threshold=0.3, group_note=False
    )
    assert answer is not None
    assert answer.text.startswith("From \u201cDoc 1\u201d (LOG_LEVEL: what Lore logs)")
    assert "`DEBUG`, `INFO`, `WARNING` or `ERROR`" in answer.text
    assert "[2]" in answer.text
    # Asked otherwise, the section's own answer is enough.
    answer = search_answer("What does LOG_LEVEL set?", passages, threshold=0.3, group_note=False)
    assert answer is not None
    assert "[2]" not in answer.text


def test_a_word_only_the_answer_holds_outweighs_words_every_sentence_repeats() -> None:
    text = (
        "The Discord bot needs a token. The Discord bot answers in threads. "
        "The Discord bot edits answers once a second. The Discord bot syncs `/lore`. "
        "The Discord bot asks for few intents. The Discord bot logs no tokens. "
        "It reconnects and resumes on its own after a network failure."
    )
    question = "Does the Discord bot reconnect on its own?"
    unweighted = quoted(question, text)
    weights = stem_weights(question, [text])
    assert weights["reconnect"] > 1 > weights["discord"]
    sentences, _ = pick_sentences(question, text, weights=weights)
    assert "It reconnects" not in unweighted
    assert "It reconnects" in " ".join(sentence.text for sentence in sentences)


def test_stems_match_across_derived_forms() -> None:
    quote = quoted(
        "How many dimensions do the vectors have?",
        "Vectors are stored in Qdrant. The model maps text to 384-dimensional vectors.",
    )
    assert "384-dimensional" in quote


def test_a_sentence_that_goes_on_from_the_best_one_comes_along() -> None:
    text = (
        "Every passage gets a number. A citation is kept only if it names a stored passage. "
        "Any other number is removed from the answer. The sources are listed below."
    )
    quote = quoted("What happens to a citation that names no stored passage?", text)
    assert "A citation is kept only if" in quote
    assert "Any other number is removed" in quote
    assert "listed below" not in quote


def test_the_page_title_counts_toward_a_section_named_after_the_question() -> None:
    text = "## Upgrades\n\n```sh\ngit pull\n```\n\nBack up before an upgrade."
    question = "How do I upgrade a deployment?"
    assert not quoted(question, text).startswith("`git pull`")
    sentences, _ = pick_sentences(question, text, title="Deploying Lore")
    assert sentences[0].text == "`git pull`"
