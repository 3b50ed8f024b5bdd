"""Reading text in pictures with rapidocr (PP-OCR models shipped inside its wheel): photos,
screenshots and the rendered pages of scanned PDFs.

Nothing is downloaded: the detection, direction and recognition models are passed to
rapidocr by path, from the installed package, and checked against their recorded SHA-256
before the first use (rapidocr would fetch any model it is not given). An image is checked
for its decoded size before its pixels are decoded (a 40,000 x 40,000 PNG is a few KB on
the wire and 4.8 GB in memory). Recognised boxes become lines in reading order: boxes are
grouped into lines by their vertical overlap, a line's boxes read left to right, and a gap
wider than a line's height between two lines starts a new paragraph.
"""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from graphs.ingest.errors import (
    DecompressionBombError,
    ReaderUnavailableError,
    UnsupportedSourceError,
)
from graphs.ingest.extract_protocol import ReadingStep
from graphs.ingest.reading_job import ReadingJob

__all__ = ["OCR_MODELS", "decode_image", "image_text", "read_image"]

#: rapidocr 3.10.0's default model set (its own `default_models.yaml` gives the same SHA-256).
OCR_MODELS: Final = {
    "Det": ("PP-OCRv6_det_small.onnx",
            "090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f"),
    "Rec": ("PP-OCRv6_rec_small.onnx",
            "6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884"),
    "Cls": ("ch_ppocr_mobile_v2.0_cls_mobile.onnx",
            "e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"),
}  # fmt: skip
#: Detection works on the picture scaled so that its longer side is at most this.
DETECTION_SIDE: Final = 960
_IMAGE_BROKEN = "This image could not be read; it may be damaged or not really a picture."
_PARAGRAPH_GAP = 1.0  # a gap between lines taller than this many line heights: a new paragraph


def read_image(data: bytes, job: ReadingJob) -> str:
    """The text in a picture, lines in reading order; "" when it holds none."""
    job.claim_pages(1, what="This image")
    picture = decode_image(data, job.limits.max_image_pixels)
    job.report(ReadingStep("image", 0, 1))
    return image_text(picture, job.limits.threads)


def decode_image(data: bytes, max_pixels: int) -> Image.Image:
    """The first frame of a picture as RGB, upright (its EXIF orientation applied), refused
    over `max_pixels` before its pixels are decoded."""
    # Pillow's own bomb check would refuse too, but without saying the size; this one does.
    Image.MAX_IMAGE_PIXELS = None
    try:
        picture = Image.open(io.BytesIO(data))  # reads the header only
        width, height = picture.size
        if width * height > max_pixels:
            raise _too_many_pixels(width, height, max_pixels)
        picture.seek(0)
        upright = ImageOps.exif_transpose(picture) or picture
        return upright.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise UnsupportedSourceError(_IMAGE_BROKEN) from exc


def _too_many_pixels(width: int, height: int, max_pixels: int) -> DecompressionBombError:
    return DecompressionBombError(
        f"This image is {width:,} x {height:,} pixels ({width * height / 1e6:,.0f} megapixels); "
        f"Lore reads images up to {max_pixels / 1e6:g} megapixels."
    )


def image_text(picture: Image.Image, threads: int) -> str:
    """OCR one upright RGB picture: its lines in reading order, paragraphs apart."""
    result = _engine(threads)(np.asarray(picture))
    if result.boxes is None or not result.txts:
        return ""
    return _reading_order(result.boxes, result.txts)


def _reading_order(boxes: Any, texts: Sequence[str]) -> str:
    """Boxes grouped into lines (vertical overlap), lines into paragraphs (gaps)."""
    found = sorted(
        (float(box[:, 1].min()), float(box[:, 1].max()), float(box[:, 0].min()), text.strip())
        for box, text in zip(boxes, texts, strict=True)
        if text.strip()
    )
    lines: list[tuple[float, float, list[tuple[float, str]]]] = []
    for top, bottom, left, text in found:
        if lines:
            line_top, line_bottom, words = lines[-1]
            middle = (top + bottom) / 2
            if line_top <= middle <= line_bottom:
                words.append((left, text))
                lines[-1] = (line_top, max(line_bottom, bottom), words)
                continue
        lines.append((top, bottom, [(left, text)]))
    out: list[str] = []
    previous_bottom: float | None = None
    for top, bottom, words in lines:
        height = max(bottom - top, 1.0)
        if previous_bottom is not None and top - previous_bottom > _PARAGRAPH_GAP * height:
            out.append("")
        out.append(" ".join(text for _, text in sorted(words)))
        previous_bottom = bottom
    return "\n".join(out)


@functools.cache
def _engine(threads: int) -> Any:
    """rapidocr with the packaged models, made once per worker process."""
    from rapidocr import RapidOCR  # noqa: PLC0415 - heavy (OpenCV): only for a first picture

    params: dict[str, Any] = {
        "Global.log_level": "critical",
        "EngineConfig.onnxruntime.intra_op_num_threads": threads,
        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        "Det.limit_type": "max",
        "Det.limit_side_len": DETECTION_SIDE,
        "Rec.rec_batch_num": 1,
    }
    for task, path in _model_paths().items():
        params[f"{task}.model_path"] = str(path)
    return RapidOCR(params=params)


def _model_paths() -> dict[str, Path]:
    """The packaged model files, each checked against its recorded SHA-256."""
    folder = Path(str(resources.files("rapidocr").joinpath("models")))
    paths: dict[str, Path] = {}
    for task, (name, sha256) in OCR_MODELS.items():
        path = folder / name
        try:
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise ReaderUnavailableError(_OCR_MISSING) from exc
        if actual != sha256:
            raise ReaderUnavailableError(_OCR_MISSING)
        paths[task] = path
    return paths


_OCR_MISSING = (
    "Lore's text recognition is not installed correctly (a model file of rapidocr is missing "
    "or changed), so it cannot read pictures right now."
)
