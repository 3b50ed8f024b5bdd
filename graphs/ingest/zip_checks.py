"""Office files are zip archives: their declared contents are checked for bombs before a
reader (python-docx, openpyxl, python-pptx) unpacks anything."""

from __future__ import annotations

import io
import zipfile

from graphs.ingest.errors import DecompressionBombError, UnsupportedSourceError, megabytes

__all__ = ["check_archive"]

_MAX_ZIP_MEMBERS = 10_000
_MAX_COMPRESSION_RATIO = 200
_RATIO_CHECK_FLOOR = 1 << 20  # members smaller than this may compress as well as they like


def check_archive(data: bytes, max_bytes: int, *, kind: str, broken: str) -> None:
    """Refuse a zip whose declared contents exceed `max_bytes` or compress absurdly well.

    `kind` names the file in messages ("Word document"); `broken` is the refusal for a file
    that is not a zip at all. `zipfile` stops reading a member at its declared size, so
    checking the declared sizes before parsing bounds what a reader can ever decompress.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise UnsupportedSourceError(broken) from exc
    if len(members) > _MAX_ZIP_MEMBERS:
        raise DecompressionBombError(
            f"This {kind} holds {len(members)} files inside; Lore will not unpack it."
        )
    declared = sum(member.file_size for member in members)
    if declared > max_bytes:
        raise DecompressionBombError(
            f"This {kind} would expand to {megabytes(declared)}, more than the "
            f"{megabytes(max_bytes)} Lore accepts."
        )
    for member in members:
        ratio_limit = _MAX_COMPRESSION_RATIO * max(member.compress_size, 1)
        if member.file_size > _RATIO_CHECK_FLOOR and member.file_size > ratio_limit:
            raise DecompressionBombError(
                f"This {kind} is compressed suspiciously well (it looks like a zip bomb); "
                "Lore will not unpack it."
            )
