"""Why an ingest was refused: one exception per outcome a user sees, each with a polite message.

Every error leaves nothing behind: no document row, no chunk, no vector, no file.
The `str()` of each is safe to show to the person who sent the source.
"""

from __future__ import annotations

__all__ = [
    "DecompressionBombError",
    "EmptyDocumentError",
    "ExtractionLimitError",
    "FetchFailedError",
    "FileTooLargeError",
    "IngestError",
    "NotUtf8Error",
    "ReaderUnavailableError",
    "TooManyChunksError",
    "UnsupportedContentTypeError",
    "UnsupportedSourceError",
    "UrlRefusedError",
    "megabytes",
]


def megabytes(size: int) -> str:
    """A size as these messages write it: "12.3 MB"."""
    return f"{size / 1_000_000:.1f} MB"


class IngestError(Exception):
    """Base class: the source could not be ingested; the message says why, politely."""


class UnsupportedSourceError(IngestError):
    """The file type or URL scheme is not one Lore reads."""


class UnsupportedContentTypeError(IngestError):
    """A URL answered with a content type Lore does not read."""


class FileTooLargeError(IngestError):
    """The file or response exceeds the configured size cap."""


class TooManyChunksError(IngestError):
    """The text would be cut into more chunks than one document may have."""


class DecompressionBombError(IngestError):
    """An archive-based file (DOCX) would decompress beyond its cap."""


class EmptyDocumentError(IngestError):
    """No text could be extracted (an empty file, a scanned PDF without a text layer)."""


class NotUtf8Error(IngestError):
    """A text file is not valid UTF-8."""


class UrlRefusedError(IngestError):
    """The URL points somewhere Lore must not fetch (private address, bad scheme...)."""


class FetchFailedError(IngestError):
    """The URL could not be fetched (unreachable, timeout, HTTP error)."""


class ExtractionLimitError(IngestError):
    """Reading the file needed more CPU time or memory than one document may use."""


class ReaderUnavailableError(IngestError):
    """A reader's models (OCR, speech) are missing or not the recorded ones: an installation
    problem, not the file's fault."""
