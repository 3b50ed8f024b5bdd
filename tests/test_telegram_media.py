"""What people send in a Telegram chat besides text, through the real edge and the fake Bot
API: a voice note asked as a question, a forwarded voice note kept and found, a photo whose
text is searched, a scanned PDF cited by page, a spreadsheet row cited; and the hostile ones
(a 3-hour voice note, a 40,000 x 40,000 photo, a 500-page scan, a corrupt voice note), each
one clear line with nothing kept, while another member's question is answered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.settings import Settings
from tests.chat_turns import remember
from tests.conftest import SettingsFactory
from tests.fakes.telegram_server import ApiCall, FakeTelegram, TgChat
from tests.media_files import drawn_text, mixed_pdf, png_bomb, png_bytes, scanned_pdf
from tests.test_bounded_input import stored
from tests.test_office_readers import workbook
from tests.test_telegram import ALICE, BOB, OWNER, final_answer_containing, join, send, telegram

SPEECH = Path(__file__).resolve().parent / "fixtures" / "speech"
GROUP = TgChat(-700, "supergroup", "Team")
BOILER = "The key to the boiler room hangs on the hook next to the printer on the second floor."


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
def settings(make_settings: SettingsFactory) -> Settings:
    return make_settings(owners="telegram:1001,console:owner", max_file_bytes=1024 * 1024)


def speech(name: str) -> bytes:
    return (SPEECH / name).read_bytes()


async def reply_containing(fake: FakeTelegram, chat_id: int, needle: str) -> ApiCall:
    """The first message or edit sent to `chat_id` whose text holds `needle`."""
    return await fake.wait_until_call(
        lambda c: c.chat_id == chat_id and c.method != "sendMessageDraft" and needle in c.text
    )


def forwarded_from(name: str) -> dict[str, Any]:
    when = int(datetime(2026, 12, 1, 9, 0, tzinfo=UTC).timestamp())
    return {"type": "hidden_user", "date": when, "sender_user_name": name}


async def test_a_voice_note_asked_as_a_question_gets_an_answer_led_by_its_words(
    settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(settings, fake) as (lore, _):
        await remember(lore.bot, None, text=BOILER, title="Building keys")
        await join(fake, ALICE)
        fake.enqueue(fake.voice(ALICE, speech("question.ogg"), seconds=2))
        answer = await final_answer_containing(fake, ALICE.id, "Building keys")
        drafts = [call.text for call in fake.of("sendMessageDraft", chat_id=ALICE.id)]
    assert answer.text.startswith("🎙 “Where is the key to the boiler room?”\n\n")
    assert "Sources" in answer.text
    assert "🎙 Listening…" in drafts
    assert any(text.startswith("🎙 Transcribing 0:00 of 0:02") for text in drafts)
    assert fake.of("getFile")  # downloaded only once the Bot said to listen


async def test_a_forwarded_voice_note_is_kept_listed_and_found_by_a_later_question(
    settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(settings, fake) as (_, _edge):
        await join(fake, ALICE)
        note = speech("bike_shed.ogg")
        fake.enqueue(fake.voice(ALICE, note, seconds=4, forward_origin=forwarded_from("Eve")))
        saved = await reply_containing(fake, ALICE.id, "✅ Saved")
        assert "The spare key for the bike shed is in the blue box in the kitchen." in saved.text
        # Forwarded again: the same recording, recognised without hearing it again.
        fake.enqueue(fake.voice(ALICE, note, seconds=4, forward_origin=forwarded_from("Eve")))
        again = await reply_containing(fake, ALICE.id, "Already saved")
        assert "bike shed" in again.text

        await send(fake, ALICE, "/sources")
        listed = await reply_containing(fake, ALICE.id, "Your private documents")
        assert "</b> (1)\n🎙 <code>" in listed.text  # one document, a recording

        await send(fake, ALICE, "Where is the spare key for the bike shed?")
        answer = await final_answer_containing(fake, ALICE.id, "Sources")
    assert "blue box" in answer.text
    assert "The spare key for the bike shed is in the blue box in the kitchen., at 0:00" in (
        answer.text
    )


async def test_a_photo_a_scanned_pdf_and_a_spreadsheet_are_read_and_cited_where_they_say(
    settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(settings, fake) as (_, _edge):
        await join(fake, ALICE)
        screenshot = drawn_text(["Error 502: Bad Gateway", "upstream nginx timed out"])
        fake.enqueue(fake.photo(ALICE, png_bytes(screenshot), caption="Server error"))
        await reply_containing(fake, ALICE.id, "✅ Saved: <b>Server error")

        scan = mixed_pdf(["Minutes of the May meeting."], ["The spare key hangs by the boiler."])
        fake.add_file("scan-1", scan, "documents/minutes.pdf")
        document = {"file_id": "scan-1", "file_unique_id": "u-scan-1", "file_name": "minutes.pdf"}
        fake.enqueue(fake.message(ALICE, None, document=document))
        await reply_containing(fake, ALICE.id, "✅ Saved: <b>Minutes of the May meeting.")

        rows = [["Name", "Room"]] + [[f"Person {n}", 100 + n] for n in range(60)]
        rows[40] = ["Zelda Quartermaine", 731]
        fake.add_file("sheet-1", workbook({"Rooms": rows}), "documents/rooms.xlsx")
        sheet = {"file_id": "sheet-1", "file_unique_id": "u-sheet-1", "file_name": "rooms.xlsx"}
        fake.enqueue(fake.message(ALICE, None, document=sheet))
        await reply_containing(fake, ALICE.id, "✅ Saved: <b>rooms")

        await send(fake, ALICE, "What did the upstream nginx do?")
        photo = await final_answer_containing(fake, ALICE.id, "] Server error (photo-")
        await send(fake, ALICE, "Where does the spare key hang?")
        page = await final_answer_containing(fake, ALICE.id, "Minutes of the May meeting., page 2")
        await send(fake, ALICE, "Which room is Zelda Quartermaine in?")
        row = await final_answer_containing(fake, ALICE.id, "rooms, rows ")
    assert "timed out" in photo.text
    assert "boiler" in page.text
    assert "731" in row.text


async def test_hostile_media_get_one_line_each_nothing_is_kept_and_others_are_answered(
    settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(settings, fake) as (lore, _):
        await remember(lore.bot, None, text=BOILER, title="Building keys")
        await join(fake, ALICE)
        await join(fake, BOB)
        three_hours = fake.voice(ALICE, speech("question.ogg"), seconds=3 * 3600)
        corrupt = fake.voice(ALICE, speech("question.ogg")[:300] + bytes(range(256)) * 8, seconds=2)
        scan = scanned_pdf([["A page of a long scan"]], copies=500, size=(120, 170))
        fake.add_file("scan-500", scan, "documents/archive.pdf")
        archive = {"file_id": "scan-500", "file_unique_id": "u-500", "file_name": "archive.pdf"}
        for update in (
            three_hours,
            fake.photo(ALICE, png_bomb()),
            fake.message(ALICE, None, document=archive),
            corrupt,
        ):
            fake.enqueue(update)
        await send(fake, BOB, "Where is the key to the boiler room?")

        answered = await final_answer_containing(fake, BOB.id, "Building keys")
        lines = [
            await reply_containing(fake, ALICE.id, "This recording is 3:00:00 long"),
            await reply_containing(fake, ALICE.id, "40,000 x 40,000 pixels"),
            await reply_containing(fake, ALICE.id, "500 pages without a text layer"),
            await reply_containing(fake, ALICE.id, "This recording could not be read"),
        ]
        documents, _, files = await stored(lore)
        three_hour_file = three_hours["message"]["voice"]["file_id"]
    assert "hangs on the hook" in answered.text
    assert all("\n" not in line.text.strip() for line in lines)  # one line each
    assert (documents, len(files)) == (1, 1)  # the shared note only
    assert not fake.of("getFile", file_id=three_hour_file)  # refused before the download


async def test_in_a_group_a_voice_note_is_heard_only_when_it_replies_to_lore(
    settings: Settings, fake: FakeTelegram
) -> None:
    async with telegram(settings, fake) as (lore, _edge):
        await remember(lore.bot, None, text=BOILER, title="Building keys")
        await join(fake, ALICE)
        question = speech("question.ogg")
        fake.enqueue(fake.voice(ALICE, question, seconds=2, chat=GROUP))
        await send(fake, OWNER, "/help")  # a later update, to know the first one was handled
        await fake.wait_until_call(lambda c: c.chat_id == OWNER.id and "/sources" in c.text)
        assert not [c for c in fake.calls if c.chat_id == GROUP.id]  # not addressed: left alone

        earlier = {"message_id": 1, "date": 0, "chat": GROUP.as_dict(), "text": "Hello",
                   "from": {**fake.bot_user.as_dict(), "is_bot": True}}  # fmt: skip
        fake.enqueue(fake.voice(ALICE, question, seconds=2, chat=GROUP, reply_to_message=earlier))
        answer = await final_answer_containing(fake, GROUP.id, "Building keys")
    assert answer.text.startswith("🎙 “Where is the key to the boiler room?”")
    assert not fake.of("sendMessageDraft", chat_id=GROUP.id)  # groups see the final answer only
