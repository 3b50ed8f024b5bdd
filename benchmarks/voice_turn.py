"""A question asked by voice against the same question typed, through the real core (the
offline answerer): seconds to the first text of the answer, one run each, side by side.
The voice question is the committed espeak-ng fixture, transcribed with the default model.

    python benchmarks/voice_turn.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.app import open_lore
from bot.events import AnswerDelta, ChatEvent, ChatRef, Heard, TurnDone
from bot.settings import load_settings
from bot.sources import Source
from bot.voice import IncomingVoice
from tests.chat_turns import OWNER

ROOT = Path(__file__).resolve().parent.parent
QUESTION = ROOT / "tests" / "fixtures" / "speech" / "question.ogg"
NOTE = "The key to the boiler room hangs on the hook next to the printer on the second floor."


async def first_text(events: AsyncIterator[ChatEvent]) -> tuple[float, float, str]:
    """Seconds to the first answer text, to the end, and what was heard."""
    started = time.perf_counter()
    first, heard = 0.0, ""
    async for event in events:
        if isinstance(event, Heard):
            heard = event.text
        if isinstance(event, AnswerDelta | TurnDone) and not first:
            first = time.perf_counter() - started
    return first, time.perf_counter() - started, heard


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            _env_file=None, data_dir=Path(tmp) / "data", MODELS_DIR=ROOT / "data" / "models",
            sample_docs_dir="",
        )  # fmt: skip
        async with open_lore(settings) as lore:
            await lore.bot.ingest(OWNER, Source(text=NOTE, title="Building keys"), shared=True)
            chat = ChatRef("console", "owner")
            data = QUESTION.read_bytes()
            voice = IncomingVoice("q", "voice-q.ogg", len(data), 2.3)
            # Warm both paths once (model loads, worker start), then measure.
            await first_text(lore.bot.hear(OWNER, chat, voice, data))
            await first_text(lore.bot.handle_message(OWNER, chat, "Who services the boiler?"))
            # Typed first: its question's embedding is not cached yet (the spoken one's then is).
            words = "Where is the key to the boiler room?"
            typed = await first_text(lore.bot.handle_message(OWNER, chat, words))
            spoken = await first_text(lore.bot.hear(OWNER, chat, voice, data))
    print("| question | first answer text | whole answer |")
    print("|---|---|---|")
    print(f"| typed | {typed[0]:.2f} s | {typed[1]:.2f} s |")
    print(f"| spoken (2.3 s voice note) | {spoken[0]:.2f} s | {spoken[1]:.2f} s |")


if __name__ == "__main__":
    asyncio.run(main())
