"""Our safetensors -> ONNX conversion agrees with the packaged model, in fp32 and int8."""

from __future__ import annotations

import asyncio
import json
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest

from storage.embeddings import Embedder
from storage.model_files import ensure_model_dir, model_choice
from storage.onnx_export import OnnxExportError, build_bert_graph, read_safetensors

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "Paris is the capital and most populous city of France.",
    "How do I reset my router to factory settings?",
    "Mitochondria are the powerhouse of the cell.",
    "The stock market rallied after the central bank cut interest rates.",
    "She whispered a secret to her best friend during the concert.",
    "Please send me the quarterly report by Friday afternoon.",
    "Quantum entanglement links the states of two particles.",
    "Our team won the championship after a dramatic penalty shootout.",
    "Add two cups of flour and mix until the dough is smooth.",
    "The patient presented with fever, cough and shortness of breath.",
    "Git rebase rewrites commit history onto a new base.",
    "Volcanic eruptions can lower global temperatures for years.",
    "I left my umbrella on the train this morning.",
    "The committee postponed the vote until next month.",
    "Photosynthesis turns light energy into chemical energy.",
    "What time does the pharmacy close on Sundays?",
    "Renewable energy capacity grew faster than expected last year.",
    "He practised the violin for three hours every day.",
    "The API returns a 404 error when the resource does not exist.",
    "Ancient Romans built aqueducts to carry water into cities.",
    "Tax returns must be filed before the end of April.",
    "A gentle breeze rustled the leaves of the old oak tree.",
    "Insulin regulates the amount of glucose in the blood.",
    "The novel follows a detective investigating a string of thefts.",
    "Use a hash map when you need constant-time lookups.",
    "Heavy snowfall closed the mountain pass overnight.",
    "Children learn languages more easily than adults.",
    "The museum's new exhibit features impressionist paintings.",
    "Our flight was delayed because of a technical problem.",
    "Vaccines train the immune system to recognise pathogens.",
    "The startup raised twenty million dollars in its second round.",
    "Don't forget to water the tomatoes while I'm away.",
    "Black holes bend light with their immense gravity.",
    "The recipe calls for fresh basil, garlic and olive oil.",
    "Employees may work remotely up to three days per week.",
    "The river flooded the low-lying farmland after the storm.",
    "Encryption keeps messages private between sender and receiver.",
    "The orchestra tuned their instruments before the symphony.",
    "Sleep deprivation impairs memory and concentration.",
    "The bridge was closed for repairs for six months.",
    "Machine translation has improved dramatically with neural networks.",
    "My grandmother grew up on a farm in Ireland.",
    "The new law requires companies to disclose data breaches.",
    "Coral reefs are threatened by rising ocean temperatures.",
    "Press the red button twice to restart the machine.",
    "The documentary explores the life of deep-sea creatures.",
    "Interest on the loan is calculated monthly.",
    "Bees pollinate a large share of the crops we eat.",
    "Thank you for your patience while we fix the outage.",
]


@pytest.fixture(scope="session")
def embedders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Embedder]:
    models_dir = tmp_path_factory.mktemp("models")

    async def load_all() -> dict[str, Embedder]:
        keys = ("minilm-l6-int8", "minilm-l6-fp32-local", "minilm-l6-int8-local")
        loaded: dict[str, Embedder] = {}
        for key in keys:
            model_dir = await ensure_model_dir(models_dir, model_choice(key))
            loaded[key] = await Embedder.load(model_dir, threads=1)
        return loaded

    return asyncio.run(load_all())


@pytest.fixture(scope="session")
def sentence_vectors(embedders: dict[str, Embedder]) -> dict[str, np.ndarray]:
    async def embed_all() -> dict[str, np.ndarray]:
        return {
            key: np.asarray(await embedder.embed_passages(SENTENCES))
            for key, embedder in embedders.items()
        }

    return asyncio.run(embed_all())


def _cosines(a: np.ndarray, b: np.ndarray) -> Sequence[float]:
    return [float(x) for x in (a * b).sum(axis=1)]


def test_fp32_export_matches_the_packaged_model(sentence_vectors: dict[str, np.ndarray]) -> None:
    cosines = _cosines(sentence_vectors["minilm-l6-fp32-local"], sentence_vectors["minilm-l6-int8"])
    assert len(cosines) == 50
    assert min(cosines) >= 0.99


def test_int8_export_matches_fp32(sentence_vectors: dict[str, np.ndarray]) -> None:
    fp32 = sentence_vectors["minilm-l6-fp32-local"]
    assert min(_cosines(sentence_vectors["minilm-l6-int8-local"], fp32)) >= 0.99
    # the int8 model still tells sentences apart: each is nearest to its own fp32 vector
    nearest = (sentence_vectors["minilm-l6-int8-local"] @ fp32.T).argmax(axis=1)
    assert nearest.tolist() == list(range(50))


def test_local_choices_describe_themselves(embedders: dict[str, Embedder]) -> None:
    local = embedders["minilm-l6-int8-local"]
    assert (local.model_name, local.dimension, local.max_tokens) == (
        "minilm-l6-int8-local",
        384,
        254,
    )


async def test_int8_graph_has_int8_matmuls_and_the_fastembed_interface(tmp_path: Path) -> None:
    model_dir = await ensure_model_dir(tmp_path, model_choice("minilm-l6-int8-local"))
    model = onnx.load(model_dir / "model.onnx")
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in model.graph.output] == ["last_hidden_state"]
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("MatMulInteger") == 30  # 6 linears in each of layers 1-5
    layer0 = [n.op_type for n in model.graph.node if "encoder.layer.0." in n.input[-1]]
    assert layer0.count("MatMul") == 6  # layer 0 stays fp32
    assert "MatMulInteger" not in layer0


def _write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset, blobs = 0, []
    for name, (dtype, shape, blob) in tensors.items():
        header[name] = {
            "dtype": dtype,
            "shape": shape,
            "data_offsets": [offset, offset + len(blob)],
        }
        offset += len(blob)
        blobs.append(blob)
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))


def test_read_safetensors_reads_shapes_and_values(tmp_path: Path) -> None:
    matrix = np.arange(6, dtype="<f4").reshape(2, 3)
    ids = np.array([7, 8], dtype="<i8")
    path = tmp_path / "w.safetensors"
    _write_safetensors(
        path, {"m": ("F32", [2, 3], matrix.tobytes()), "ids": ("I64", [2], ids.tobytes())}
    )
    tensors = read_safetensors(path)
    assert sorted(tensors) == ["ids", "m"]
    np.testing.assert_array_equal(tensors["m"], matrix)
    np.testing.assert_array_equal(tensors["ids"], ids)


def test_read_safetensors_rejects_unknown_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "w.safetensors"
    _write_safetensors(path, {"b": ("BF16", [1], b"\0\0")})
    with pytest.raises(OnnxExportError, match="BF16"):
        read_safetensors(path)


def test_missing_weights_and_unsupported_configs_are_refused() -> None:
    config = {"hidden_act": "gelu", "layer_norm_eps": 1e-12, "num_attention_heads": 12}
    with pytest.raises(OnnxExportError, match=r"embeddings\.word_embeddings\.weight"):
        build_bert_graph({}, {**config, "num_hidden_layers": 1, "hidden_size": 384})
    with pytest.raises(OnnxExportError, match="GELU"):
        build_bert_graph({}, {**config, "hidden_act": "relu"})
