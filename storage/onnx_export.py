"""Convert a BERT encoder's safetensors weights into an ONNX graph, optionally int8-quantised.

Written with numpy and the `onnx` package alone (no PyTorch): the graph is the BERT
encoder of Hugging Face transformers, node for node — word + position + token-type
embeddings and LayerNorm, then per layer self-attention with the extended attention mask,
residual + LayerNorm, a GELU (erf form) feed-forward block, residual + LayerNorm — with
inputs `input_ids`, `attention_mask`, `token_type_ids` and the output `last_hidden_state`,
as fastembed expects. Int8 uses onnxruntime's dynamic quantisation (int8 weights, int8
matmuls with activations quantised per batch). Blocking and CPU-bound: callers run it in a
worker thread (`storage.model_files` does, once, when it assembles a model directory).
"""

from __future__ import annotations

import json
import math
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

__all__ = ["OnnxExportError", "build_bert_graph", "export_bert_onnx", "read_safetensors"]

_OPSET = 17
_MASK_BIAS = -10000.0  # what BERT adds to the scores of padding positions
_DTYPES: Mapping[str, str] = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}

Weights = Mapping[str, NDArray[Any]]


class OnnxExportError(Exception):
    """The weights or the config do not describe a BERT encoder we can convert."""


def read_safetensors(path: Path) -> dict[str, NDArray[Any]]:
    """Read a .safetensors file: 8-byte little-endian header size, JSON header, raw tensors."""
    data = path.read_bytes()
    (header_size,) = struct.unpack_from("<Q", data, 0)
    header: dict[str, Any] = json.loads(data[8 : 8 + header_size])
    base = 8 + header_size
    tensors: dict[str, NDArray[Any]] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(info["dtype"])
        if dtype is None:
            raise OnnxExportError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        array = np.frombuffer(data, dtype=dtype, count=-1, offset=base + start)
        count = (end - start) // array.itemsize
        tensors[name] = array[:count].reshape(info["shape"]).copy()
    return tensors


def export_bert_onnx(
    weights_path: Path,
    config: Mapping[str, Any],
    out_path: Path,
    *,
    int8: bool,
    fp32_prefixes: Sequence[str] = (),
) -> None:
    """Write the ONNX graph of the weights at `weights_path` to `out_path`.

    With `int8`, every linear layer's matmul becomes an int8 matmul with per-channel weight
    scales, except those whose weight name starts with one of `fp32_prefixes` (e.g.
    "encoder.layer.0."): layers whose inputs have outliers that a per-tensor activation
    scale cannot represent. Attention's activation x activation matmuls and the embedding
    tables stay fp32.
    """
    model = build_bert_graph(read_safetensors(weights_path), config)
    onnx.checker.check_model(model)
    if not int8:
        onnx.save(model, out_path)
        return
    initializers = {tensor.name for tensor in model.graph.initializer}
    linears = [
        node.name
        for node in model.graph.node
        if node.op_type == "MatMul"
        and node.input[1] in initializers
        and not node.input[1].startswith(tuple(fp32_prefixes))
    ]
    with tempfile.TemporaryDirectory(dir=out_path.parent) as tmp:
        fp32_path = Path(tmp) / "fp32.onnx"
        onnx.save(model, fp32_path)
        quantize_dynamic(
            fp32_path,
            out_path,
            weight_type=QuantType.QInt8,
            per_channel=True,
            nodes_to_quantize=linears,
        )


def build_bert_graph(weights: Weights, config: Mapping[str, Any]) -> onnx.ModelProto:
    """The BERT encoder graph (fp32) for `weights` named as in transformers' BertModel."""
    if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != (
        "absolute"
    ):
        raise OnnxExportError("only absolute positions and the erf GELU are supported")
    builder = _GraphBuilder(weights, float(config["layer_norm_eps"]))
    hidden = builder.embeddings()
    mask = builder.extended_mask()
    heads = int(config["num_attention_heads"])
    for layer in range(int(config["num_hidden_layers"])):
        hidden = builder.encoder_layer(hidden, mask, f"encoder.layer.{layer}", heads)
    builder.node("Identity", [hidden], ["last_hidden_state"])
    size = int(config["hidden_size"])
    graph = helper.make_graph(
        builder.nodes,
        "bert_encoder",
        [_int_input("input_ids"), _int_input("attention_mask"), _int_input("token_type_ids")],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", size]
            )
        ],
        builder.initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="lore"
    )
    model.ir_version = 8
    return model


def _int_input(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])


class _GraphBuilder:
    """Accumulates nodes and initializers; each method returns the name of its output."""

    def __init__(self, weights: Weights, eps: float) -> None:
        self.weights = weights
        self.eps = eps
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def node(
        self, op: str, inputs: list[str], outputs: list[str] | None = None, **attrs: Any
    ) -> str:
        self._count += 1
        outputs = outputs or [f"{op.lower()}_{self._count}"]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0], **attrs))
        return outputs[0]

    def const(self, name: str, value: NDArray[Any]) -> str:
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str) -> NDArray[Any]:
        try:
            return self.weights[name]
        except KeyError:
            raise OnnxExportError(f"the weights have no tensor {name}") from None

    def linear(self, x: str, prefix: str, scale: float = 1.0) -> str:
        kernel = (self.weight(f"{prefix}.weight").T * scale).astype(np.float32)
        bias = (self.weight(f"{prefix}.bias") * scale).astype(np.float32)
        product = self.node("MatMul", [x, self.const(f"{prefix}.kernel", kernel)])
        return self.node("Add", [product, self.const(f"{prefix}.bias", bias)])

    def layer_norm(self, x: str, prefix: str) -> str:
        gamma = self.const(f"{prefix}.weight", self.weight(f"{prefix}.weight"))
        beta = self.const(f"{prefix}.bias", self.weight(f"{prefix}.bias"))
        return self.node("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=self.eps)

    def embeddings(self) -> str:
        table = "embeddings.{}_embeddings.weight"
        words = self.node(
            "Gather", [self.const("word", self.weight(table.format("word"))), "input_ids"]
        )
        shape = self.node("Shape", ["input_ids"])
        length = self.node("Gather", [shape, self.const("one", np.array(1, np.int64))], axis=0)
        zero, step = self.const("zero", np.array(0, np.int64)), "one"
        positions = self.node("Range", [zero, length, step])
        position_table = self.const("position", self.weight(table.format("position")))
        pos = self.node("Gather", [position_table, positions])
        type_table = self.const("token_type", self.weight(table.format("token_type")))
        types = self.node("Gather", [type_table, "token_type_ids"])
        summed = self.node("Add", [self.node("Add", [words, pos]), types])
        return self.layer_norm(summed, "embeddings.LayerNorm")

    def extended_mask(self) -> str:
        """(1 - mask) * -10000 shaped [batch, 1, 1, sequence], added to every head's scores."""
        mask = self.node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
        axes = self.const("mask_axes", np.array([1, 2], np.int64))
        mask = self.node("Unsqueeze", [mask, axes])
        inverted = self.node("Sub", [self.const("f_one", np.array(1.0, np.float32)), mask])
        return self.node(
            "Mul", [inverted, self.const("mask_bias", np.array(_MASK_BIAS, np.float32))]
        )

    def encoder_layer(self, x: str, mask: str, prefix: str, heads: int) -> str:
        attention = self.self_attention(x, mask, f"{prefix}.attention.self", heads)
        projected = self.linear(attention, f"{prefix}.attention.output.dense")
        x = self.layer_norm(
            self.node("Add", [projected, x]), f"{prefix}.attention.output.LayerNorm"
        )
        inner = self.gelu(self.linear(x, f"{prefix}.intermediate.dense"))
        out = self.linear(inner, f"{prefix}.output.dense")
        return self.layer_norm(self.node("Add", [out, x]), f"{prefix}.output.LayerNorm")

    def self_attention(self, x: str, mask: str, prefix: str, heads: int) -> str:
        hidden = int(self.weight(f"{prefix}.query.weight").shape[0])
        head_size = hidden // heads
        split = self.const(f"{prefix}.split", np.array([0, 0, heads, head_size], np.int64))
        merge = self.const(f"{prefix}.merge", np.array([0, 0, hidden], np.int64))

        def heads_of(name: str, perm: list[int], scale: float = 1.0) -> str:
            projected = self.linear(x, f"{prefix}.{name}", scale)
            return self.node("Transpose", [self.node("Reshape", [projected, split])], perm=perm)

        # 1/sqrt(head_size) folded into the query projection: the same scores, one op fewer
        query = heads_of("query", [0, 2, 1, 3], 1.0 / math.sqrt(head_size))
        key = heads_of("key", [0, 2, 3, 1])
        value = heads_of("value", [0, 2, 1, 3])
        scores = self.node("Add", [self.node("MatMul", [query, key]), mask])
        probs = self.node("Softmax", [scores], axis=-1)
        context = self.node("Transpose", [self.node("MatMul", [probs, value])], perm=[0, 2, 1, 3])
        return self.node("Reshape", [context, merge])

    def gelu(self, x: str) -> str:
        """0.5 * x * (1 + erf(x / sqrt(2))); onnxruntime fuses it into one Gelu kernel."""
        scaled = self.node("Div", [x, self.const_scalar(math.sqrt(2.0))])
        erf_plus_one = self.node("Add", [self.node("Erf", [scaled]), self.const_scalar(1.0)])
        return self.node("Mul", [self.node("Mul", [x, self.const_scalar(0.5)]), erf_plus_one])

    def const_scalar(self, value: float) -> str:
        name = f"scalar_{value!r}"
        if not any(init.name == name for init in self.initializers):
            self.const(name, np.array(value, np.float32))
        return name
