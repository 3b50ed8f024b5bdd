"""Hardening row I: payment data is caught in every layout, IBANs before cards, and card numbers
in ingested sources are masked before anything is stored (rows, chunks, originals)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.payment_data import main as payment_data_benchmark
from bot.app import Lore
from bot.sources import Source
from graphs.guards import (
    GUARD_IBAN,
    GUARD_PAYMENT_CARD,
    check_input,
    check_sensitive,
    find_ibans,
    find_payment_cards,
)
from graphs.guards.payment import mask_payment_cards
from graphs.ingest.state import IngestOutcome
from tests.chat_turns import OWNER, local_member
from tests.fakes.http_server import ScriptedServer, static
from tests.sample_files import docx_bytes, pdf_bytes

ARABIC_INDIC = str.maketrans(
    "0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669"
)
DEVANAGARI = str.maketrans(
    "0123456789", "\u0966\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f"
)
FULLWIDTH = str.maketrans(
    "0123456789 ", "\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19\u3000"
)

CARDS_IN_ANY_LAYOUT = [
    "4111.1111.1111.1111",
    "4111/1111/1111/1111",
    "4111_1111_1111_1111",
    "4111 - 1111 - 1111 - 1111",
    "4111\u20131111\u20131111\u20131111",  # en dashes
    "4111\u00a01111\u00a01111\u00a01111",  # no-break spaces
    "4111  1111  1111  1111",
    "4111-111-111-111-111",  # 4-3-3-3-3
    "4111-1111-111-11111",
    "41111-11111-111111",
    "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
    "4111\u200b1111\u200b1111\u200b1111",
    "4111\u00ad1111\u00ad1111\u00ad1111",  # soft hyphens
    "4111 1111 1111 1111".translate(FULLWIDTH),
    "4111 1111 1111 1111".translate(ARABIC_INDIC),
    "4111-1111-1111-1111".translate(DEVANAGARI),
    "5555.5555.5555.4444",
    "3782/822463/10005",
    "card 4111.1111.1111.1111 exp 12/29",
]


@pytest.mark.parametrize("text", CARDS_IN_ANY_LAYOUT)
def test_row_i_card_numbers_with_any_separator_are_caught(text: str) -> None:
    cards = find_payment_cards(text)
    assert len(cards) == 1
    assert check_input(text).guard == GUARD_PAYMENT_CARD
    assert check_sensitive(text).guard == GUARD_PAYMENT_CARD
    masked = mask_payment_cards(text)
    assert masked.cards == 1
    assert find_payment_cards(masked.text) == []
    assert masked.text.count("\u2022") >= 9


def test_row_i_a_valid_serbian_iban_is_reported_as_an_iban() -> None:
    for text in ("RS35 2600 0560 1001 6113 79", "my IBAN: RS35260005601001611379."):
        assert [(i.country, i.last4) for i in find_ibans(text)] == [("RS", "1379")]
        assert find_payment_cards(text) == []
        assert check_input(text).guard == GUARD_IBAN
        assert check_sensitive(text).guard == GUARD_IBAN


@pytest.mark.parametrize(
    "text",
    [
        "RS35 2600 0560 1001 6113 70",  # one check digit off
        "RS35 2600 0560 1001 6113 7",  # one character short
        "RS35 2600 0560 1001 6113 790",  # one character long
        "DE89 3704 0044 0532 0130 01",
    ],
)
def test_row_i_a_near_miss_iban_is_not_refused_as_a_card(text: str) -> None:
    assert find_ibans(text) == []
    assert find_payment_cards(text) == []
    assert check_input(text).allowed
    assert check_sensitive(text).allowed


def test_row_i_a_card_beside_an_iban_is_still_a_card() -> None:
    text = "IBAN RS35 2600 0560 1001 6113 70, card 4111.1111.1111.1111"
    assert [c.last4 for c in find_payment_cards(text)] == ["1111"]
    assert check_input(text).guard == GUARD_PAYMENT_CARD


@pytest.mark.parametrize(
    "text",
    [
        "57 68 61 74 20 69 73 20 61 20 6d 6f 64 65 6c 20 75 73 65 64",  # a hex dump
        "Meetings on 2024-01-15 and 2024-02-16 2024-03-18",
        "Call 555 123 4567 or 555 987 6543",
        "10.0.0.1 10.0.0.2 10.0.0.3 10.0.0.4",
        "pi is 3.14159265358979323846",
    ],
)
def test_row_i_numbers_that_are_not_cards_pass(text: str) -> None:
    assert find_payment_cards(text) == []
    assert mask_payment_cards(text).cards == 0


async def test_row_i_card_numbers_in_notes_files_and_pages_are_masked_before_storage(
    lore: Lore, tmp_path: Path
) -> None:
    who = await local_member(lore.bot, "ivy")
    note = await lore.bot.ingest(
        who, Source(text="Travel card for the team: 4111.1111.1111.1111, ask Ann.")
    )
    pdf = tmp_path / "expenses.pdf"
    pdf.write_bytes(pdf_bytes(["Expenses", "Paid with 5555/5555/5555/4444 in March."]))
    from_pdf = await lore.bot.ingest(who, Source(path=pdf))
    word = docx_bytes("Suppliers", [("Bakery", "Card on file 3782 822463 10005.")])
    from_docx = await lore.bot.ingest(who, Source(data=word, file_name="suppliers.docx"))
    page = (
        b"<html><body><article><p>The office card is 4111 1111 1111 1111 for the printer"
        b" paper orders, kept by Bo.</p></article></body></html>"
    )
    async with ScriptedServer(routes={"/cards": static(page, "text/html")}) as site:
        from_page = await lore.bot.ingest(who, Source(url=site.url("/cards")))
    results = [note, from_pdf, from_docx, from_page]
    assert [r.outcome for r in results] == [IngestOutcome.SAVED] * 4
    assert [r.masked_cards for r in results] == [1, 1, 1, 1]

    chunks = await lore.database.fetch_all("SELECT text FROM chunks")
    stored = " ".join(row["text"] for row in chunks)
    for masked in ("\u2022\u2022\u2022\u2022.1111", "\u2022\u2022\u2022\u2022/4444", "\u20220005"):
        assert masked in stored
    assert "ask Ann" in stored
    originals = [p for p in lore.settings.uploads_dir.rglob("*") if p.is_file()]
    assert len(originals) == 4
    for path in [*originals, *lore.settings.data_dir.glob("lore.sqlite3*")]:
        raw = path.read_bytes()
        for number in (b"4111.1111.1111.1111", b"4111 1111 1111 1111", b"5555/5555/5555/4444"):
            assert number not in raw, path
        assert b"822463" not in raw, path
    # The masked text is the copy kept: Markdown for all four (a PDF reads as pages under
    # their headings, so as Markdown too).
    assert {p.suffix for p in originals} == {".md"}


async def test_row_i_sources_without_cards_are_kept_as_sent(lore: Lore) -> None:
    result = await lore.bot.ingest(
        OWNER, shared=True, source=Source(text="Invoice 2024-0042, total 1234.56")
    )
    assert result.masked_cards == 0
    originals = [p for p in lore.settings.uploads_dir.rglob("*") if p.is_file()]
    assert [p.read_text() for p in originals] == ["Invoice 2024-0042, total 1234.56"]


def test_the_payment_data_benchmark_runs_on_a_small_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header = "text\tpresidio_expected_matches\tluhn_valid_digits\tsource\n"
    (tmp_path / "pii_cards.tsv").write_text(
        header + "card 4111 1111 1111 1111 here\t1\tTrue\tours\norder 12345\t0\tn/a\tours\n"
    )
    (tmp_path / "pii_ibans.tsv").write_text(
        header + "IBAN GB82 WEST 1234 5698 7654 32\t1\tn/a\tours\nref GB00 0000\t0\tn/a\tours\n"
    )
    (tmp_path / "benign_questions.txt").write_text("When is the office open?\n")
    (tmp_path / "benign_hard.txt").write_text("What is the card limit for travel?\n")
    payment_data_benchmark([str(tmp_path)])
    out = capsys.readouterr().out
    assert "pii_cards.tsv: 2 lines" in out
    assert "positive -> payment_card': 1" in out
    assert "positive -> iban': 1" in out
    assert re.search(r"spaces 4-4-4-4 +caught +1/1 +100\.00%", out)
    assert re.search(r"payment guards false pos\. +0/1 +0\.00%", out)
