"""Reading the pages of a PDF that have no text layer (scans, photographed letters): each is
rendered with pypdfium2 and its picture read by OCR (`graphs.ingest.ocr_reading`).

Only pages that hold a picture are read (a blank page has nothing to OCR); their number is
claimed from the job first (over `MAX_OCR_PAGES` the PDF is refused before any page is read).
A page is rendered at 200 dpi, less when that would pass the picture size limit (a PDF page
may declare any size), and reported before it is read ("page 3 of 12").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from graphs.ingest.errors import UnsupportedSourceError
from graphs.ingest.extract_protocol import ReadingStep
from graphs.ingest.ocr_reading import image_text
from graphs.ingest.reading_job import ReadingJob

__all__ = ["read_scanned_pages"]

_DPI: Final = 200
_POINTS_PER_INCH: Final = 72
_PDF_BROKEN = "This PDF could not be read; it may be damaged or not really a PDF."


def read_scanned_pages(data: bytes, candidates: Sequence[int], job: ReadingJob) -> dict[int, str]:
    """The OCR'd text of those `candidates` (0-based pages without a text layer) that hold a
    picture, by page."""
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        raise UnsupportedSourceError(_PDF_BROKEN) from exc
    try:
        total = len(document)
        scanned = [index for index in candidates if _has_picture(document, index)]
        job.claim_pages(len(scanned), what="This PDF")
        found: dict[int, str] = {}
        for index in scanned:
            job.report(ReadingStep("page", index + 1, total))
            found[index] = _page_text(document, index, job)
        return found
    finally:
        document.close()


def _has_picture(document: pdfium.PdfDocument, index: int) -> bool:
    try:
        page = document[index]
        try:
            pictures = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3)
            return next(iter(pictures), None) is not None
        finally:
            page.close()
    except (pdfium.PdfiumError, ValueError, OSError) as exc:
        raise UnsupportedSourceError(_PDF_BROKEN) from exc


def _page_text(document: pdfium.PdfDocument, index: int, job: ReadingJob) -> str:
    try:
        page = document[index]
        try:
            width, height = page.get_size()
            scale = _scale(width, height, job.limits.max_image_pixels)
            bitmap = page.render(scale=scale)
            picture = bitmap.to_pil().convert("RGB")
        finally:
            page.close()
    except (pdfium.PdfiumError, ValueError, OSError) as exc:
        raise UnsupportedSourceError(_PDF_BROKEN) from exc
    return image_text(picture, job.limits.threads)


def _scale(width: float, height: float, max_pixels: int) -> float:
    """Pixels per point: 200 dpi, or less for a page that would pass `max_pixels`."""
    scale = _DPI / _POINTS_PER_INCH
    area = max(width, 1.0) * max(height, 1.0)
    if area * scale * scale > max_pixels:
        scale = math.sqrt(max_pixels / area)
    return scale
