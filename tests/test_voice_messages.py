"""A voice message is handled like the same words typed, by the same rules on every edge
(`bot.voice`): in a private chat it is transcribed, then a question gets a cited answer led by
"🎙 “…”" and "remember that …" keeps the recording in the member's private notes; in a group
it is heard only when addressed to Lore; a forwarded one is kept like a file; one announced too
long or too big is refused before it is downloaded. Typed "remember that …" keeps a note too."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import Lore
from bot.errors import LoreError
from bot.events import ChatEvent, ChatRef, Heard, Identity, Listening
from bot.turn_view import TurnView
from bot.voice import IncomingVoice, VoiceAction
from tests.chat_turns import ask, invite, remember

SPEECH = Path(__file__).resolve().parent / "fixtures" / "speech"
BOILER = "The key to the boiler room hangs on the hook next to the printer on the second floor."
LIMIT = 20 * 1024 * 1024


def voice(name: str, *, forwarded: bool = False, addressed: bool = False) -> IncomingVoice:
    data = (SPEECH / name).read_bytes()
    return IncomingVoice(
        name, f"voice-{name}", len(data), 3.0, forwarded=forwarded, addressed=addressed
    )


async def hear(lore: Lore, who: Identity, chat: ChatRef, name: str) -> list[ChatEvent]:
    data = (SPEECH / name).read_bytes()
    return [event async for event in lore.bot.hear(who, chat, voice(name), data)]


def view_of(chat: ChatRef, events: list[ChatEvent]) -> TurnView:
    view = TurnView(chat)
    for event in events:
        view.add(event)
    return view


async def test_a_spoken_question_gets_the_cited_answer_the_typed_one_gets(lore: Lore) -> None:
    await remember(lore.bot, None, text=BOILER, title="Building keys")
    alice = await invite(lore.bot, "alice")
    chat = ChatRef("telegram", "alice")
    assert await lore.bot.voice_message(alice, chat, voice("question.ogg"), LIMIT) is (
        VoiceAction.LISTEN
    )
    events = await hear(lore, alice, chat, "question.ogg")
    listening = [e.message for e in events if isinstance(e, Listening)]
    assert listening[0] == "🎙 Listening…"
    assert any(line.startswith("🎙 Transcribing 0:00 of 0:02") for line in listening)
    [heard] = [e for e in events if isinstance(e, Heard)]
    assert heard == Heard("Where is the key to the boiler room?", "en")

    spoken = view_of(chat, events).final()
    typed = (await ask(lore.bot, alice, heard.text)).done
    assert spoken.text == f"🎙 “{heard.text}”\n\n{typed.answer}"
    assert [c.title for c in spoken.citations] == [c.title for c in typed.citations]
    assert [c.title for c in spoken.citations] == ["Building keys"]


async def test_remember_that_keeps_the_recording_and_its_words_typed_or_spoken(lore: Lore) -> None:
    alice = await invite(lore.bot, "alice")
    chat = ChatRef("telegram", "alice")
    events = await hear(lore, alice, chat, "remember.ogg")
    final = view_of(chat, events).final()
    assert final.text.startswith("🎙 “Remember that the recycling goes out every Tuesday")
    assert "✅ Saved: the recycling goes out every Tuesday morning. (1 chunk)" in final.text
    assert final.text.endswith("in your private notes.")
    assert final.feedback_turn is None

    typed = await ask(lore.bot, alice, "Remember that the gate code is 4711.")
    assert typed.done.answer == "✅ Saved: the gate code is 4711. (1 chunk) in your private notes."
    spoken, written = sorted(await lore.bot.sources(alice), key=lambda d: d.format)
    assert (spoken.format, written.format) == ("audio", "markdown")
    assert Path(spoken.original_path).read_bytes() == (SPEECH / "remember.ogg").read_bytes()
    assert spoken.language == "en"

    answer = (await ask(lore.bot, alice, "When does the recycling go out?")).done
    assert [(c.title, c.location) for c in answer.citations] == [(spoken.title, "at 0:00")]


async def test_in_a_group_only_an_addressed_voice_message_is_heard_and_nothing_is_kept(
    lore: Lore,
) -> None:
    await remember(lore.bot, None, text=BOILER, title="Building keys")
    alice = await invite(lore.bot, "alice")
    group = ChatRef("telegram", "team", is_group=True)
    unaddressed = voice("remember.ogg")
    assert await lore.bot.voice_message(alice, group, unaddressed, LIMIT) is VoiceAction.IGNORE
    addressed = voice("remember.ogg", addressed=True)
    assert await lore.bot.voice_message(alice, group, addressed, LIMIT) is VoiceAction.LISTEN

    view = view_of(group, await hear(lore, alice, group, "remember.ogg"))
    assert view.preview() is None  # groups see the verified final answer only
    assert view.done is not None
    assert view.done.outcome != "saved"  # "remember that" keeps nothing from a group
    assert await lore.bot.sources(alice) == []


async def test_forwarded_long_big_and_strangers_voice_messages_are_decided_before_download(
    lore: Lore,
) -> None:
    alice = await invite(lore.bot, "alice")
    chat = ChatRef("telegram", "alice")
    forwarded = voice("question.ogg", forwarded=True)
    assert await lore.bot.voice_message(alice, chat, forwarded, LIMIT) is VoiceAction.SAVE
    saved = await lore.bot.save_source(
        alice, forwarded.as_source(), data=(SPEECH / "question.ogg").read_bytes()
    )
    assert "✅ Saved: Where is the key to the boiler room? (1 chunk)" in "".join(
        span.text for span in saved.body
    )

    three_hours = IncomingVoice("f", "voice-long.ogg", size=300_000, seconds=3 * 3600)
    with pytest.raises(LoreError, match=r"^This recording is 3:00:00 long; Lore transcribes"):
        await lore.bot.voice_message(alice, chat, three_hours, LIMIT)
    too_big = IncomingVoice("f", "voice-big.ogg", size=50 * 1024 * 1024, seconds=60)
    with pytest.raises(LoreError, match=r"^That file is 50.0 MB; I can take files up to 0.5 MB"):
        await lore.bot.voice_message(alice, chat, too_big, LIMIT)
    stranger = Identity("telegram", "999", "Sam")
    with pytest.raises(LoreError, match="invite"):
        await lore.bot.voice_message(
            stranger, ChatRef("telegram", "999"), voice("question.ogg"), LIMIT
        )
