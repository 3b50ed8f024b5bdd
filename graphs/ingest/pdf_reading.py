"""Reading a PDF with pypdf: an empty password is tried, page texts are capped in total, and
pypdf's many failure types on malformed files become one polite `IngestError`."""

from __future__ import annotations

import io
import zlib

import pypdf
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from graphs.ingest.errors import DecompressionBombError, UnsupportedSourceError, megabytes

__all__ = ["read_pdf"]

_PDF_LOCKED = (
    "This PDF is password-protected, so Lore cannot open it; please send an unlocked copy."
)
_PDF_BROKEN = "This PDF could not be read; it may be damaged or not really a PDF."

# pypdf raises far more than its own error classes on malformed files.
_PDF_ERRORS = (
    PyPdfError, ValueError, TypeError, LookupError, AttributeError, AssertionError, RuntimeError,
    ArithmeticError, zlib.error,
)  # fmt: skip


def read_pdf(data: bytes, max_bytes: int) -> tuple[str | None, list[str]]:
    """The PDF's metadata title and its page texts; an `IngestError` if it cannot be read."""
    try:
        return _read(data, max_bytes)
    except (DependencyError, FileNotDecryptedError) as exc:
        raise UnsupportedSourceError(_PDF_LOCKED) from exc
    except _PDF_ERRORS as exc:
        raise UnsupportedSourceError(_PDF_BROKEN) from exc


def _read(data: bytes, max_bytes: int) -> tuple[str | None, list[str]]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted and reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
        raise UnsupportedSourceError(_PDF_LOCKED)
    pages: list[str] = []
    total = 0
    for page in reader.pages:
        page_text = page.extract_text()
        total += len(page_text)
        if total > max_bytes:
            raise DecompressionBombError(
                f"This PDF holds more than {megabytes(max_bytes)} of text, "
                "more than Lore accepts for one document."
            )
        pages.append(page_text)
    metadata = reader.metadata
    return (metadata.title if metadata is not None else None), pages
