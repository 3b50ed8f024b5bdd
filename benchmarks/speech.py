"""Speech recognition as Lore runs it (faster-whisper in an extraction worker's settings: int8,
one thread, VAD, temperature 0): word error rate per language and model, real-time factor of
a one-minute voice note, and the transcribing process's peak RSS, side by side in one run.

No recordings with reference transcripts install from a package registry here, so the speech
is synthetic: Debian's espeak-ng reading public text (Lore's own docs in English; Article 1
to 3 of the Universal Declaration of Human Rights in German and French), encoded as a 24
kbit/s Opus voice note. Synthetic speech is easier than people (clean, evenly paced, no noise),
so these error rates are a lower bound. Each model runs in a child process of its own, so its
peak RSS is its own.

    python benchmarks/speech.py [--models whisper-base,whisper-tiny.en] [--beams 1,2,5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.speech_samples import encode, speak
from storage.speech_models import ensure_speech_model

ROOT = Path(__file__).resolve().parent.parent
TEXTS = {
    "en": [
        "Lore is a self-hosted knowledge base agent that lives in chat apps.",
        "People give Lore notes, files and web pages to remember, and ask it questions.",
        "Every answer cites the sources it came from, or Lore says it does not know.",
        "The owner runs Lore on one machine and invites the members of the team.",
        "A voice note sent in a private chat is transcribed and answered like typed words.",
        "Scanned letters and photos of whiteboards are read on the same machine.",
    ],
    "de": [
        "Alle Menschen sind frei und gleich an Würde und Rechten geboren.",
        "Sie sind mit Vernunft und Gewissen begabt und sollen einander im Geist der "
        "Brüderlichkeit begegnen.",
        "Jeder hat Anspruch auf die in dieser Erklärung verkündeten Rechte und Freiheiten.",
        "Jeder hat das Recht auf Leben, Freiheit und Sicherheit der Person.",
    ],
    "fr": [
        "Tous les êtres humains naissent libres et égaux en dignité et en droits.",
        "Ils sont doués de raison et de conscience et doivent agir les uns envers les autres "
        "dans un esprit de fraternité.",
        "Chacun peut se prévaloir de tous les droits et de toutes les libertés proclamés "
        "dans la présente Déclaration.",
        "Tout individu a droit à la vie, à la liberté et à la sûreté de sa personne.",
    ],
}
VOICES = {"en": "en-us", "de": "de", "fr": "fr-fr"}
_WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def word_errors(reference: str, heard: str) -> tuple[int, int]:
    """Word-level edit distance and the reference's word count."""
    ref, hyp = words(reference), words(heard)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (r != h))
    return row[-1], len(ref)


def child(model_dir: str, beam: int, jobs_file: str) -> None:
    """Transcribe each job in this process; print JSON results and the peak RSS."""
    from faster_whisper import WhisperModel  # noqa: PLC0415 - only in the child

    from graphs.ingest.audio_reading import _decode  # noqa: PLC0415
    from graphs.ingest.reading_job import ReadingJob  # noqa: PLC0415

    model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=1)
    out = []
    for job in json.loads(Path(jobs_file).read_text("utf-8")):
        sound = _decode(Path(job["path"]).read_bytes(), ReadingJob())
        started = time.perf_counter()
        segments, info = model.transcribe(
            sound, beam_size=beam, temperature=0.0, condition_on_previous_text=False,
            vad_filter=True,
        )  # fmt: skip
        heard = " ".join(segment.text.strip() for segment in segments)
        seconds = time.perf_counter() - started
        out.append({**job, "heard": heard, "seconds": seconds, "detected": info.language,
                    "duration": len(sound) / 16000})  # fmt: skip
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"results": out, "peak_rss_mb": rss}))


def make_samples(folder: Path) -> list[dict[str, str]]:
    jobs = []
    for language, texts in TEXTS.items():
        for number, text in enumerate(texts):
            path = folder / f"{language}-{number}.ogg"
            path.write_bytes(encode(speak(text, VOICES[language]), "ogg"))
            jobs.append({"language": language, "text": text, "path": str(path)})
    minute = " ".join(TEXTS["en"] * 2)  # about a minute of speech
    path = folder / "minute.ogg"
    path.write_bytes(encode(speak(minute, "en-us"), "ogg"))
    jobs.append({"language": "minute", "text": minute, "path": str(path)})
    return jobs


def run(model_dir: Path, beam: int, jobs: list[dict[str, str]], folder: Path) -> dict[str, object]:
    jobs_file = folder / "jobs.json"
    jobs_file.write_text(json.dumps(jobs), "utf-8")
    done = subprocess.run(  # noqa: S603 - this script, in a child
        [sys.executable, __file__, "--child", str(model_dir), str(beam), str(jobs_file)],
        capture_output=True, text=True, check=True, timeout=1800,
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="whisper-base,whisper-tiny.en")
    parser.add_argument("--beams", default="1,2,5")
    parser.add_argument("--models-dir", default=str(ROOT / "data" / "models"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jobs = make_samples(folder)
        rows = []
        for key in args.models.split(","):
            model_dir = asyncio.run(ensure_speech_model(Path(args.models_dir), key))
            english_only = key.endswith(".en")
            mine = [j for j in jobs if not english_only or j["language"] in {"en", "minute"}]
            for beam in (int(b) for b in args.beams.split(",")):
                found = run(model_dir, beam, mine, folder)
                rows.append((key, beam, found))
    print(
        "| model | beam | language | WER | detected right | 1-min note: seconds (RTF) | peak RSS |"
    )
    print("|---|---|---|---|---|---|---|")
    for key, beam, found in rows:
        results = found["results"]  # type: ignore[index]
        minute = next(r for r in results if r["language"] == "minute")
        for language in ("en", "de", "fr"):
            mine = [r for r in results if r["language"] == language]
            if not mine:
                continue
            errors = sum(word_errors(r["text"], r["heard"])[0] for r in mine)
            total = sum(word_errors(r["text"], r["heard"])[1] for r in mine)
            detected = sum(1 for r in mine if r["detected"] == language)
            print(
                f"| {key} | {beam} | {language} | {errors / total:.1%} | "
                f"{detected}/{len(mine)} | "
                f"{minute['seconds']:.1f} s of {minute['duration']:.0f} s "
                f"({minute['seconds'] / minute['duration']:.2f}) | "
                f"{found['peak_rss_mb']:.0f} MB |"  # type: ignore[index]
            )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        main()
