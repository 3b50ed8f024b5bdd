"""Owner-only on disk (invariant 13): DATA_DIR is 0700 and every file in it 0600.

Members' notes live in `DATA_DIR` (the SQLite databases and their `-wal`/`-shm` files, the
vector shards, the originals, the logs, the model files, backups): under the usual umask of
022 all of them would be readable by every local user and by any container that shares the
volume. Lore therefore

* sets the process umask to 077 before it creates anything (`keep_files_private`), so
  whatever any library writes (SQLite, the embedded Qdrant engine, log rotation) is
  created owner-only;
* makes `DATA_DIR` 0700, also when it already existed (a mounted volume, a folder the
  operator made), and tightens every folder and file in it that others could read
  (`secure_data_dir`): such a mode Lore did not create, so one warning names it.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "OWNER_ONLY_UMASK",
    "WiderModes",
    "keep_files_private",
    "private_folder",
    "secure_data_dir",
]

logger = logging.getLogger(__name__)

OWNER_ONLY_UMASK = 0o077
FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


@dataclass(frozen=True, slots=True)
class WiderModes:
    """What `secure_data_dir` found readable by others: made owner-only, or not (another
    owner's files, a read-only mount)."""

    tightened: tuple[tuple[Path, int], ...] = ()
    left: tuple[Path, ...] = ()


def keep_files_private() -> None:
    """From now on this process creates folders 0700 and files 0600 (umask 077)."""
    os.umask(OWNER_ONLY_UMASK)


def private_folder(path: Path) -> None:
    """Create `path` (and its parents) owner-only, or make an existing folder 0700."""
    keep_files_private()
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) & _OTHERS:
        path.chmod(FOLDER_MODE)


def secure_data_dir(data_dir: Path) -> WiderModes:
    """Make `data_dir` and everything in it owner-only; log one warning, naming a path, when
    something was readable by others (never for what this process just created)."""
    keep_files_private()
    if not data_dir.exists():
        data_dir.mkdir(mode=FOLDER_MODE, parents=True)
        return WiderModes()
    if not data_dir.is_dir():  # a file in the way: not ours to change; opening it says so
        return WiderModes()
    tightened: list[tuple[Path, int]] = []
    left: list[Path] = []
    for path in _entries(data_dir):
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:  # gone meanwhile
            continue
        if stat.S_ISLNK(mode) or not stat.S_IMODE(mode) & _OTHERS:
            continue
        try:
            path.chmod(FOLDER_MODE if stat.S_ISDIR(mode) else FILE_MODE)
        except OSError:
            left.append(path)
        else:
            tightened.append((path, stat.S_IMODE(mode)))
    found = WiderModes(tuple(tightened), tuple(left))
    _warn(data_dir, found)
    return found


def _entries(data_dir: Path) -> list[Path]:
    """`data_dir` and every folder and file under it (symbolic links are not followed)."""
    entries = [data_dir]
    for folder, folders, files in os.walk(data_dir):
        entries += [Path(folder, name) for name in (*folders, *files)]
    return entries


def _warn(data_dir: Path, found: WiderModes) -> None:
    if found.tightened:
        path, mode = found.tightened[0]
        logger.warning(
            "%s was readable by other users (mode %s)%s; Lore made DATA_DIR %s owner-only"
            " (folders 0700, files 0600). Whoever could read it may have copied it.",
            path,
            f"{mode:04o}",
            f", and {len(found.tightened) - 1} more" if len(found.tightened) > 1 else "",
            data_dir,
        )
    if found.left:
        logger.warning(
            "%s is readable by other users and Lore cannot change that (%d such entries in"
            " DATA_DIR %s): give the folder to the user that runs Lore, mode 0700",
            found.left[0],
            len(found.left),
            data_dir,
        )
