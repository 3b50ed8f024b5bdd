"""Synthetic speech made with Debian's espeak-ng: the test fixtures (a few seconds each,
committed as small OGG/Opus and MP3 files, so the suite needs no system package) and the
recordings `benchmarks/speech.py` measures word error rates on.

Synthetic speech is easier than people: it is clean, evenly paced and has no background
noise, so error rates measured on it are a lower bound. `python benchmarks/speech_samples.py`
writes the fixtures again (espeak-ng must be installed: `apt-get install espeak-ng`).
"""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path
from typing import Final

import av

__all__ = ["FIXTURES", "encode", "speak"]

FIXTURE_DIR: Final = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "speech"
#: file name -> (espeak-ng voice, words per minute, words). The tests know these words; the
#: speeds are the ones whisper base hears them right at (espeak's voice is no person's).
FIXTURES: Final = {
    "question.ogg": ("en-us", 150, "Where is the key to the boiler room?"),
    "bike_shed.ogg": (
        "en-us",
        130,
        "The spare key for the bike shed is in the blue box in the kitchen.",
    ),
    "printer.mp3": (
        "en-us",
        140,
        "The printer on the second floor takes the black toner cartridge.",
    ),
    "remember.ogg": ("en-us", 150, "Remember that the recycling goes out every Tuesday morning."),
}


def speak(words: str, voice: str, *, speed: int = 150) -> bytes:
    """The WAV espeak-ng makes of `words` in `voice` (words per minute `speed`)."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise SystemExit("espeak-ng is not installed: apt-get install espeak-ng")
    done = subprocess.run(  # noqa: S603 - a fixed program, words as one argument
        [espeak, "-v", voice, "-s", str(speed), "--stdout", words],
        capture_output=True,
        check=True,
    )
    return done.stdout


def encode(wav: bytes, container: str) -> bytes:
    """A WAV re-encoded as a mono OGG/Opus voice note (24 kbit/s, as Telegram sends them)
    or an MP3 (32 kbit/s)."""
    codec, rate, bit_rate = (
        ("libopus", 48_000, 24_000) if container == "ogg" else ("libmp3lame", 22_050, 32_000)
    )
    out = io.BytesIO()
    with av.open(io.BytesIO(wav)) as source, av.open(out, "w", format=container) as target:
        stream = target.add_stream(codec, rate=rate, layout="mono")
        stream.bit_rate = bit_rate
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=rate)
        for frame in source.decode(audio=0):
            for piece in resampler.resample(frame):
                target.mux(stream.encode(piece))
        for piece in resampler.resample(None):
            target.mux(stream.encode(piece))
        target.mux(stream.encode(None))
    return out.getvalue()


def main() -> None:
    """Write the test fixtures."""
    FIXTURE_DIR.mkdir(parents=True, exist_ok=True)
    for name, (voice, speed, words) in FIXTURES.items():
        data = encode(speak(words, voice, speed=speed), name.rsplit(".", 1)[1])
        (FIXTURE_DIR / name).write_bytes(data)
        print(f"{name}: {len(data):,} bytes: {words}")


if __name__ == "__main__":
    main()
