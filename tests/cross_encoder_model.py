"""A stand-in cross-encoder for tests: a tiny BERT with random weights, built as real ONNX.

Same architecture and interface as an operator's ms-marco-style cross-encoder: our BERT
encoder graph (`storage.onnx_export.build_bert_graph`), then BERT's pooler (tanh of a
linear layer on the [CLS] state) and a one-logit classifier, saved as `model.onnx` beside
a WordPiece `tokenizer.json` whose pair template is `[CLS] a [SEP] b [SEP]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from storage.onnx_export import build_bert_graph

HIDDEN = 32
LAYERS = 2
HEADS = 4
INTERMEDIATE = 64
POSITIONS = 128
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")


def build_cross_encoder(directory: Path, words: Iterable[str], *, seed: int = 0) -> Path:
    """Write `model.onnx`, `tokenizer.json` and `tokenizer_config.json` into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    vocabulary = sorted({w.lower() for text in words for w in re.findall(r"\w+|[^\w\s]", text)})
    tokenizer = _tokenizer([*SPECIAL, *vocabulary])
    tokenizer.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(
        '{"model_max_length": 96, "pad_token": "[PAD]"}', "utf-8"
    )
    rng = np.random.default_rng(seed)
    model = _model(_weights(rng, len(SPECIAL) + len(vocabulary)), rng)
    onnx.checker.check_model(model)
    onnx.save(model, directory / "model.onnx")
    return directory


def _tokenizer(vocabulary: list[str]) -> Tokenizer:
    ids = {token: n for n, token in enumerate(vocabulary)}
    tokenizer = Tokenizer(models.WordPiece(ids, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    return tokenizer


def _weights(rng: np.random.Generator, vocabulary: int) -> dict[str, NDArray[Any]]:
    def normal(*shape: int) -> NDArray[np.float32]:
        return rng.normal(scale=0.2, size=shape).astype(np.float32)

    weights: dict[str, NDArray[Any]] = {
        "embeddings.word_embeddings.weight": normal(vocabulary, HIDDEN),
        "embeddings.position_embeddings.weight": normal(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": normal(2, HIDDEN),
    }
    norms = ["embeddings.LayerNorm"]
    for layer in range(LAYERS):
        prefix = f"encoder.layer.{layer}"
        shapes = {
            "attention.self.query": (HIDDEN, HIDDEN),
            "attention.self.key": (HIDDEN, HIDDEN),
            "attention.self.value": (HIDDEN, HIDDEN),
            "attention.output.dense": (HIDDEN, HIDDEN),
            "intermediate.dense": (INTERMEDIATE, HIDDEN),
            "output.dense": (HIDDEN, INTERMEDIATE),
        }
        for name, (rows, cols) in shapes.items():
            weights[f"{prefix}.{name}.weight"] = normal(rows, cols)
            weights[f"{prefix}.{name}.bias"] = normal(rows)
        norms += [f"{prefix}.attention.output.LayerNorm", f"{prefix}.output.LayerNorm"]
    for norm in norms:
        weights[f"{norm}.weight"] = np.ones(HIDDEN, np.float32)
        weights[f"{norm}.bias"] = np.zeros(HIDDEN, np.float32)
    return weights


def _model(weights: dict[str, NDArray[Any]], rng: np.random.Generator) -> onnx.ModelProto:
    config = {
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "hidden_size": HIDDEN,
    }
    model = build_bert_graph(weights, config)
    graph = model.graph
    head = {
        "cls_index": np.array(0, np.int64),
        "pooler_kernel": rng.normal(scale=0.3, size=(HIDDEN, HIDDEN)).astype(np.float32),
        "pooler_bias": np.zeros(HIDDEN, np.float32),
        "classifier_kernel": rng.normal(scale=1.0, size=(HIDDEN, 1)).astype(np.float32),
        "classifier_bias": np.zeros(1, np.float32),
    }
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in head.items())
    graph.node.extend(
        [
            helper.make_node("Gather", ["last_hidden_state", "cls_index"], ["cls"], axis=1),
            helper.make_node("MatMul", ["cls", "pooler_kernel"], ["pooled_raw"]),
            helper.make_node("Add", ["pooled_raw", "pooler_bias"], ["pooled_biased"]),
            helper.make_node("Tanh", ["pooled_biased"], ["pooled"]),
            helper.make_node("MatMul", ["pooled", "classifier_kernel"], ["logits_raw"]),
            helper.make_node("Add", ["logits_raw", "classifier_bias"], ["logits"]),
        ]
    )
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1]))
    return model
