"""Score (question, passage) pairs with an operator-supplied ONNX cross-encoder, offline.

The model directory holds `model.onnx` (a BERT-style cross-encoder: inputs `input_ids`,
`attention_mask` and optionally `token_type_ids`; first output the logits, shaped
[batch, 1] or [batch, 2]) and `tokenizer.json` (a Hugging Face tokenizer whose pair
template yields `[CLS] question [SEP] passage [SEP]`); `tokenizer_config.json` may give
`model_max_length` and `pad_token`. Nothing is downloaded. Inference runs in a worker
thread, one run at a time (like the embedder), in batches of `BATCH_SIZE` pairs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from numpy.typing import NDArray
from tokenizers import Encoding, Tokenizer

__all__ = ["BATCH_SIZE", "CrossEncoder", "RerankerError"]

logger = logging.getLogger(__name__)

BATCH_SIZE = 16
_MAX_TOKENS = 512
_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})
_REQUIRED_INPUTS = frozenset({"input_ids", "attention_mask"})


class RerankerError(Exception):
    """The cross-encoder could not be loaded or failed on an input."""


class CrossEncoder:
    """A loaded cross-encoder; build it with `await CrossEncoder.load(model_dir)`."""

    def __init__(self, session: ort.InferenceSession, tokenizer: Tokenizer, name: str) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {item.name for item in session.get_inputs()}
        self._output = session.get_outputs()[0].name
        self._lock = threading.Lock()
        self.name = name

    @classmethod
    async def load(cls, model_dir: Path, *, threads: int = 1) -> CrossEncoder:
        """Load `model_dir`; `RerankerError` names what is missing or wrong."""
        return await asyncio.to_thread(cls._load, model_dir, threads)

    @classmethod
    def _load(cls, model_dir: Path, threads: int) -> CrossEncoder:
        started = time.perf_counter()
        for name in ("model.onnx", "tokenizer.json"):
            if not (model_dir / name).is_file():
                raise RerankerError(f"reranker directory {model_dir} has no {name}")
        settings = _tokenizer_settings(model_dir / "tokenizer_config.json")
        try:
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.enable_cpu_mem_arena = False  # no arena that grows with the largest batch
            session = ort.InferenceSession(
                str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime and tokenizers raise their own base types
            raise RerankerError(f"cannot load the reranker in {model_dir}: {exc}") from exc
        inputs = {item.name for item in session.get_inputs()}
        if not _REQUIRED_INPUTS <= inputs <= _INPUTS:
            raise RerankerError(
                f"{model_dir}/model.onnx takes inputs {sorted(inputs)}; a cross-encoder takes"
                " input_ids, attention_mask and optionally token_type_ids"
            )
        max_tokens = min(int(settings.get("model_max_length", _MAX_TOKENS)), _MAX_TOKENS)
        tokenizer.enable_truncation(max_length=max_tokens, strategy="longest_first")
        pad_token = str(settings.get("pad_token", "[PAD]"))
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad_token) or 0, pad_token=pad_token)
        logger.info(
            "loaded reranker %s (%d tokens) in %.1fs",
            model_dir.name,
            max_tokens,
            time.perf_counter() - started,
        )
        return cls(session, tokenizer, model_dir.name)

    async def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage, in order: higher means more relevant to `query`."""
        if not passages:
            return []
        return await asyncio.to_thread(self._score, query, list(passages))

    def _score(self, query: str, passages: list[str]) -> list[float]:
        scores: list[float] = []
        with self._lock:
            for start in range(0, len(passages), BATCH_SIZE):
                batch = passages[start : start + BATCH_SIZE]
                encodings = self._tokenizer.encode_batch([(query, text) for text in batch])
                scores.extend(self._run(encodings))
        return scores

    def _run(self, encodings: list[Encoding]) -> list[float]:
        feed: dict[str, NDArray[np.int64]] = {
            "input_ids": np.asarray([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in encodings], dtype=np.int64),
        }
        try:
            [logits] = self._session.run(
                [self._output], {k: v for k, v in feed.items() if k in self._inputs}
            )
        except Exception as exc:  # onnxruntime's errors share no public base class
            raise RerankerError(f"reranker {self.name} failed: {exc}") from exc
        matrix = np.asarray(logits, dtype=np.float32).reshape(len(encodings), -1)
        if matrix.shape[1] == 1:
            column = matrix[:, 0]
        elif matrix.shape[1] == 2:  # two classes: the log-odds of "relevant"
            column = matrix[:, 1] - matrix[:, 0]
        else:
            raise RerankerError(f"reranker {self.name} gave {matrix.shape[1]} logits per pair")
        result: list[float] = column.tolist()
        return result


def _tokenizer_settings(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        raw: Any = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise RerankerError(f"{path} is not readable JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise RerankerError(f"{path} is not a JSON object")
    settings: dict[str, Any] = raw
    pad = settings.get("pad_token")
    if isinstance(pad, dict):  # {"content": "[PAD]", ...} in newer files
        settings["pad_token"] = pad.get("content", "[PAD]")
    return settings
