"""Crash safety: SIGKILL an ingesting `lore` process at different moments, repair, and check
that every document is complete or absent with no duplicated or orphaned point (invariant 1)."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import open_lore
from bot.settings import load_settings
from storage.documents import Collection, DocumentRepository

LORE = Path(sys.executable).parent / "lore"
WORDS = [
    *("river", "mountain", "lantern", "harvest", "copper", "meadow", "signal", "orchard"),
    *("winter", "canyon", "ember", "harbor", "willow", "granite", "thunder", "velvet"),
    *("compass", "saffron", "glacier", "falcon"),
]


def write_corpus(folder: Path, documents: int, sections: int) -> None:
    rng = random.Random(documents * 1000 + sections)
    folder.mkdir()
    for number in range(documents):
        parts = [f"# Field notes {number}"]
        for section in range(sections):
            sentence = " ".join(rng.choice(WORDS) for _ in range(120))
            parts.append(f"## Entry {number}.{section}\n\n{sentence}.")
        (folder / f"notes-{number:03d}.md").write_text("\n\n".join(parts))


def lore(workdir: Path, *args: str, lines: bool = False) -> subprocess.Popen[bytes]:
    """Run `lore` in `workdir`; with `lines`, its stdout unbuffered to read it as it goes."""
    # Configuration reaches the child through its working directory's .env file.
    return subprocess.Popen(  # noqa: S603 - our own console script
        [sys.executable, "-u", str(LORE), *args],
        cwd=workdir,
        stdout=subprocess.PIPE if lines else subprocess.DEVNULL,
        stderr=subprocess.DEVNULL if lines else subprocess.PIPE,
    )


def kill_into_next_document(process: subprocess.Popen[bytes], offset: float) -> bool:
    """SIGKILL the ingest `offset` seconds after it reports its first newly saved document,
    so the kill lands inside a later one however fast this machine embeds; False if it
    finished first."""
    assert process.stdout is not None
    with process.stdout as lines:
        for line in lines:
            if "Saved:" in line.decode(errors="replace"):
                break
        else:
            process.wait()
            return False
        try:
            process.wait(timeout=offset)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return True
        return False


async def check_consistent(workdir: Path) -> tuple[int, int]:
    settings = load_settings(_env_file=workdir / ".env")
    async with open_lore(settings) as core:
        db = core.database
        statuses = await db.fetch_all(
            "SELECT d.id, d.status, COUNT(c.id) AS chunks,"
            " SUM(c.vector_status = 'pending') AS pending"
            " FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id"
        )
        for row in statuses:
            assert row["status"] == "ready", dict(row)
            assert row["chunks"] > 0
            assert row["pending"] == 0
        known = await core.bot.maintenance.stats()
        points = await core.index.point_ids(Collection.KNOWLEDGE)
        chunk_points = await DocumentRepository(db).point_ids(Collection.KNOWLEDGE)
        assert points == chunk_points
        assert known.knowledge_points == known.chunks
        shared = settings.uploads_dir / "shared"
        folders = {p.name for p in shared.iterdir()} if shared.exists() else set()
        assert folders == {row["id"] for row in statuses}
        return len(statuses), known.chunks


@pytest.mark.slow
@pytest.mark.timeout(420)
def test_invariant_1_sqlite_first_qdrant_second_survives_sigkill(
    tmp_path: Path, models_dir: Path
) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, documents=16, sections=6)
    (tmp_path / ".env").write_text(
        f"DATA_DIR={tmp_path / 'data'}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\n"
        "CHUNK_TOKENS=128\nCHUNK_OVERLAP_TOKENS=16\nLOG_LEVEL=WARNING\n"
    )
    killed = 0
    previous = (0, 0)
    # Each run saves one document, then dies somewhere in the next: before, during or after
    # its SQLite commit, or between the commit and the vector upsert.
    for offset in (0.0, 0.1, 0.25, 0.5):
        if kill_into_next_document(
            lore(tmp_path, "ingest", str(corpus), "--shared", lines=True), offset
        ):
            killed += 1
        repair = lore(tmp_path, "reindex")
        _, errors = repair.communicate(timeout=180)
        assert repair.returncode == 0, errors.decode()
        documents, chunks = asyncio.run(check_consistent(tmp_path))
        assert documents >= previous[0], "a repaired document vanished"
        previous = (documents, chunks)
    assert killed >= 3, "most ingests finished before their kill; use a larger corpus"
    finish = lore(tmp_path, "ingest", str(corpus), "--shared")
    _, errors = finish.communicate(timeout=300)
    assert finish.returncode == 0, errors.decode()
    documents, chunks = asyncio.run(check_consistent(tmp_path))
    assert documents == 16
