"""Run `storage.onnx_export` in a child process, so a conversion's memory and its libraries'
log lines stay out of the process that asked for it.

Converting and quantising all-MiniLM-L6-v2 peaks near 0.5 GB and onnxruntime's quantiser
writes warnings to the root logger; the bot needs neither, once, at its first start. The
child gets its arguments on the command line (`python -m storage.onnx_export_child`), writes
the ONNX file, and exits 0; any other exit is a `ModelExportError` with its last line.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ModelExportError", "export_in_child"]


class ModelExportError(Exception):
    """The child could not convert the weights; the message says why."""


#: A conversion takes seconds; a child still running after this is stuck.
_TIMEOUT_SECONDS = 900.0


def export_in_child(
    weights_path: Path,
    config: Mapping[str, Any],
    out_path: Path,
    *,
    int8: bool,
    fp32_prefixes: Sequence[str] = (),
) -> None:
    """`storage.onnx_export.export_bert_onnx` with the same arguments, in a child process."""
    config_path = out_path.with_name(out_path.name + ".config.json")
    config_path.write_text(json.dumps(dict(config)), "utf-8")
    command = [
        sys.executable,
        "-m",
        "storage.onnx_export_child",
        str(weights_path),
        str(config_path),
        str(out_path),
        *(["--int8"] if int8 else []),
        *(f"--fp32-prefix={prefix}" for prefix in fp32_prefixes),
    ]
    try:
        done = subprocess.run(  # noqa: S603 - our own module, arguments we built
            command, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ModelExportError(f"converting the model took over {_TIMEOUT_SECONDS:.0f} s") from exc
    finally:
        config_path.unlink(missing_ok=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else f"exit code {done.returncode}"
        raise ModelExportError(f"converting the model failed: {last}")


def _main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description="Convert safetensors weights to ONNX.")
    parser.add_argument("weights", type=Path)
    parser.add_argument("config", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--int8", action="store_true")
    parser.add_argument("--fp32-prefix", action="append", default=[])
    args = parser.parse_args(argv)
    # onnxruntime's quantiser advises pre-processing at WARNING on the root logger.
    logging.basicConfig(level=logging.ERROR)
    from storage.onnx_export import export_bert_onnx  # noqa: PLC0415 - heavy, child only

    config: dict[str, Any] = json.loads(args.config.read_text("utf-8"))
    export_bert_onnx(
        args.weights, config, args.out, int8=args.int8, fp32_prefixes=tuple(args.fp32_prefix)
    )
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
