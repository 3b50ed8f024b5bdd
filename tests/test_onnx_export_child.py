"""The model conversion runs in a child process: its output is the in-process conversion's,
byte for byte, and a failure is one line, not a traceback of the child."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage.model_files import _package_path
from storage.model_hashes import file_sha256
from storage.model_registry import _MINILM_WEIGHTS
from storage.onnx_export import export_bert_onnx
from storage.onnx_export_child import ModelExportError, export_in_child


def _config() -> dict[str, object]:
    with _package_path(_MINILM_WEIGHTS) as weights:
        loaded: dict[str, object] = json.loads((weights.parent / "config.json").read_text())
    return loaded


def test_the_child_writes_the_same_model_as_an_in_process_conversion(tmp_path: Path) -> None:
    config = _config()
    with _package_path(_MINILM_WEIGHTS) as weights:
        export_in_child(weights, config, tmp_path / "child.onnx", int8=True)
        export_bert_onnx(weights, config, tmp_path / "here.onnx", int8=True)
    assert file_sha256(tmp_path / "child.onnx") == file_sha256(tmp_path / "here.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["child.onnx", "here.onnx"]


def test_a_failed_conversion_is_one_line_naming_the_cause(tmp_path: Path) -> None:
    broken = tmp_path / "weights.safetensors"
    broken.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
    with pytest.raises(ModelExportError) as failed:
        export_in_child(broken, _config(), tmp_path / "out.onnx", int8=True)
    message = str(failed.value)
    assert message.startswith("converting the model failed: ")
    assert "\n" not in message
    assert "Traceback" not in message
    assert not (tmp_path / "out.onnx").exists()
