"""Backups that restore (issue 14): `lore backup` writes a consistent snapshot while Lore runs
(never half an ingest), `lore restore` brings it back into an empty data directory, and the
restored Lore finds every document complete and searchable, with nothing orphaned."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import Lore, open_lore
from bot.app.core import backup_layout
from bot.app.models import utc_now
from bot.backups import back_up_from_outside, restore_into
from bot.errors import BackupRefusedError
from bot.settings import Settings
from bot.sources import Source
from storage.backups import MANIFEST, Manifest
from storage.data_lock import DataDirLock
from storage.documents import Collection, DocumentRepository
from storage.edge_store import EdgeVectorStore
from storage.knowledge_index import collection_specs
from storage.write_gate import WriteGate
from tests.chat_turns import OWNER, ask, invite, remember
from tests.conftest import SettingsFactory

LORE = Path(sys.executable).parent / "lore"
# A handbook long enough to be many chunks (several vector batches), each paragraph unique.
HANDBOOK = "\n\n".join(
    f"## Section {n}\n\nRoom {n} of the Vantablack wing keeps the ledger number L-{n:04d}. "
    f"Its keeper is called Keeper{n} and its door is painted shade {n * 7 % 101}."
    for n in range(1, 161)
)
FACTS = {
    "Locker": ("Ann's locker code is Quokka-5521.", "Quokka-5521"),
    "Wifi": ("The office wifi network is called Marmot-Net.", "Marmot-Net"),
}


async def _restored_state(lore: Lore) -> dict[str, object]:
    """Per document: status and whether each chunk has its point; plus the orphans."""
    documents = DocumentRepository(lore.database)
    points = {c: await lore.index.point_ids(c) for c in Collection}
    known = {c: await documents.point_ids(c) for c in Collection}
    rows = await lore.database.fetch_all("SELECT title, status FROM documents ORDER BY title")
    return {
        "statuses": {row["title"]: row["status"] for row in rows},
        "points without chunk": sum(len(points[c] - known[c]) for c in Collection),
        "chunks without point": sum(len(known[c] - points[c]) for c in Collection),
    }


async def _fill(lore: Lore) -> None:
    ann = await invite(lore.bot, "ann")
    await remember(lore.bot, ann, FACTS["Locker"][0], title="Locker")
    await remember(lore.bot, None, FACTS["Wifi"][0], title="Wifi")


async def _assert_searchable(lore: Lore) -> None:
    for question, token in (
        ("What is the office wifi network called?", "Marmot-Net"),
        ("Who keeps room 117 of the Vantablack wing?", "Keeper117"),
    ):
        hits = await lore.bot.search(OWNER, question, private=False)
        assert any(token in hit.passage.text for hit in hits), question


@pytest.mark.timeout(300)
async def test_a_snapshot_taken_mid_ingest_restores_complete_searchable_and_unorphaned(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    source, target = make_settings(data_dir=tmp_path / "a"), make_settings(data_dir=tmp_path / "b")
    later = make_settings(data_dir=tmp_path / "c")
    backup = tmp_path / "backup"
    async with open_lore(source) as lore:
        await _fill(lore)
        embedding = asyncio.Event()
        late: list[asyncio.Task[Manifest]] = []

        def progress(text: str) -> None:
            if "Embedding" in text:
                embedding.set()
            if "Saved" in text:  # at the end of the handbook's write: the whole of it
                late.append(asyncio.create_task(lore.bot.maintenance.backup(tmp_path / "late")))

        handbook = asyncio.create_task(
            lore.bot.ingest(
                OWNER,
                Source(text=HANDBOOK, title="Vantablack handbook"),
                shared=True,
                on_progress=progress,
            )
        )
        await embedding.wait()  # the large ingest is under way
        manifest = await lore.bot.maintenance.backup(backup)
        ingested = await handbook
        assert ingested.chunk_count > 64  # more than one vector batch
        after = await lore.bot.maintenance.stats()
        [late_manifest] = [await task for task in late]
    assert late_manifest.counts["chunks"] == after.chunks
    await restore_into(backup_layout(later), tmp_path / "late", force=False)
    async with open_lore(later) as restored:
        state = await _restored_state(restored)
        assert state["statuses"] == dict.fromkeys(
            ("Locker", "Vantablack handbook", "Wifi"), "ready"
        )
        assert state["points without chunk"] == state["chunks without point"] == 0
        await _assert_searchable(restored)
    assert manifest.vectors == "snapshot"
    assert manifest.embedding_model == source.embedding_model
    assert set(manifest.databases) == {"lore.sqlite3", "checkpoints.sqlite3"}

    await _check_restored_mid_ingest(target, backup, manifest, after.chunks)


async def _check_restored_mid_ingest(
    target: Settings, backup: Path, manifest: Manifest, chunks_after: int
) -> None:
    """The snapshot taken while the handbook was being ingested, restored: every document
    in it complete (the handbook whole or not at all), searchable, nothing orphaned."""
    report = await restore_into(backup_layout(target), backup, force=False)
    assert not report.reembed
    async with open_lore(target) as restored:
        state = await _restored_state(restored)
        statuses = state["statuses"]
        assert isinstance(statuses, dict)
        assert set(statuses) >= {"Locker", "Wifi"}
        assert set(statuses.values()) == {"ready"}  # every document complete
        assert state["points without chunk"] == 0
        assert state["chunks without point"] == 0
        finished = await restored.bot.maintenance.finish_restore(reembed=False)
        assert finished.repair.reembedded_chunks == 0
        assert finished.repair.removed_orphan_points == 0
        assert finished.repair.removed_orphan_folders == 0
        stats = await restored.bot.maintenance.stats()
        assert stats.chunks == manifest.counts["chunks"]
        assert stats.pending_chunks == 0
        assert stats.knowledge_points + stats.private_points == stats.chunks
        hits = await restored.bot.search(OWNER, "What is the office wifi called?", private=False)
        assert any("Marmot-Net" in hit.passage.text for hit in hits)
        if "Vantablack handbook" in statuses:  # taken after the ingest: all of it, searchable
            assert stats.chunks == chunks_after
            hits = await restored.bot.search(OWNER, "Who keeps room 117?", private=False)
            assert any("Keeper117" in hit.passage.text for hit in hits)
        for title, path in await _originals(restored):  # moved along, kept
            assert Path(path).is_relative_to(target.uploads_dir), title
            assert Path(path).is_file(), title


async def _originals(lore: Lore) -> list[tuple[str, str]]:
    rows = await lore.database.fetch_all("SELECT title, original_path FROM documents")
    return [(row["title"], row["original_path"]) for row in rows]


async def _snapshot_holds_no_half_write(folder: Path, dense_size: int) -> None:
    """In a backup folder as written: every document `ready`, and its vector files hold a
    point for every chunk and none other."""
    with sqlite3.connect(folder / "lore.sqlite3") as connection:
        statuses = {row[0] for row in connection.execute("SELECT status FROM documents")}
        rows = connection.execute(
            "SELECT d.collection, c.point_id FROM chunks c JOIN documents d ON d.id = c.document_id"
        ).fetchall()
    connection.close()
    assert statuses <= {"ready"}, folder
    async with EdgeVectorStore(folder / "qdrant") as store:
        for spec in collection_specs(dense_size, 100_000):
            await store.ensure_collection(spec)
            chunks = {point for collection, point in rows if collection == spec.name}
            assert await store.point_ids(spec.name) == chunks, folder


@pytest.mark.timeout(420)
async def test_backups_taken_again_and_again_during_concurrent_ingests_never_hold_half_of_one(
    settings: Settings, tmp_path: Path
) -> None:
    folders: list[Path] = []
    async with open_lore(settings) as lore:
        ingests = [
            asyncio.create_task(
                lore.bot.ingest(
                    OWNER,
                    Source(text=HANDBOOK.replace("Vantablack", f"Wing{k}"), title=f"Wing {k}"),
                    shared=True,
                )
            )
            for k in range(5)
        ]
        while not all(task.done() for task in ingests):  # one backup after the other
            folders.append(tmp_path / f"snapshot-{len(folders)}")
            await lore.bot.maintenance.backup(folders[-1])
        await asyncio.gather(*ingests)
        dense_size = lore.embedder.dimension
    assert len(folders) >= 2
    for folder in folders:
        await _snapshot_holds_no_half_write(folder, dense_size)


async def test_a_snapshot_waits_for_a_write_in_flight_and_holds_new_ones_back() -> None:
    gate, order = WriteGate(), []

    async def snapshot() -> None:
        async with gate.paused():
            order.append("snapshot")

    async def write(name: str) -> None:
        async with gate.writing():
            order.append(name)

    async with gate.writing():
        taken = asyncio.create_task(snapshot())
        for _ in range(10):
            await asyncio.sleep(0)
        order.append("first write done")
    await taken
    assert order == ["first write done", "snapshot"]

    order.clear()
    async with gate.paused():
        held = asyncio.create_task(write("second write"))
        for _ in range(10):
            await asyncio.sleep(0)
        order.append("snapshot done")
    await held
    assert order == ["snapshot done", "second write"]
    assert gate.writers == 0


@pytest.mark.timeout(300)
async def test_a_backup_from_beside_the_running_bot_restores_by_re_embedding(
    make_settings: SettingsFactory, tmp_path: Path
) -> None:
    source, target = make_settings(data_dir=tmp_path / "a"), make_settings(data_dir=tmp_path / "b")
    backup = tmp_path / "backup"
    async with open_lore(source) as lore:  # this process holds DATA_DIR, as the bot would
        await _fill(lore)
        await remember(lore.bot, None, HANDBOOK, title="Vantablack handbook")
        asked = await ask(lore.bot, OWNER, "What is the office wifi network called?")
        assert "Marmot-Net" in asked.done.answer
        manifest = await back_up_from_outside(backup_layout(source), backup, utc_now())
        chunks = (await lore.bot.maintenance.stats()).chunks
    assert manifest.vectors == "re-embed"
    assert not (backup / "qdrant").exists()

    report = await restore_into(backup_layout(target), backup, force=False)
    assert report.reembed
    async with open_lore(target) as restored:
        finished = await restored.bot.maintenance.finish_restore(reembed=True)
        assert finished.repair.reembedded_chunks == chunks
        assert finished.repair.removed_orphan_points == 0
        assert finished.memory_points >= 1  # conversation memory rebuilt from the turn log
        state = await _restored_state(restored)
        assert set(state["statuses"].values()) == {"ready"}  # type: ignore[union-attr]
        assert state["points without chunk"] == state["chunks without point"] == 0
        await _assert_searchable(restored)


async def test_restore_refuses_a_busy_or_non_empty_data_dir_and_a_damaged_backup(
    settings: Settings, make_settings: SettingsFactory, tmp_path: Path
) -> None:
    backup = tmp_path / "backup"
    async with open_lore(settings) as lore:
        await _fill(lore)
        await lore.bot.maintenance.backup(backup)
        with pytest.raises(BackupRefusedError, match="not an empty folder"):
            await lore.bot.maintenance.backup(backup)
        with pytest.raises(BackupRefusedError, match="keep backups outside DATA_DIR"):
            await lore.bot.maintenance.backup(settings.data_dir / "backups" / "monday")
        with pytest.raises(BackupRefusedError, match="is in use by process"):
            await restore_into(backup_layout(settings), backup, force=True)
    with pytest.raises(BackupRefusedError, match="is not empty"):
        await restore_into(backup_layout(settings), backup, force=False)
    assert await restore_into(backup_layout(settings), backup, force=True)

    other = make_settings(data_dir=tmp_path / "other")
    manifest = backup / MANIFEST
    saved = manifest.read_text()
    manifest.write_text("{not json")
    with pytest.raises(BackupRefusedError, match=r"damaged: manifest\.json cannot be read"):
        await restore_into(backup_layout(other), backup, force=False)
    manifest.write_text(json.dumps({**json.loads(saved), "format_version": 99}))
    with pytest.raises(BackupRefusedError, match="Upgrade Lore"):
        await restore_into(backup_layout(other), backup, force=False)
    manifest.unlink()
    with pytest.raises(BackupRefusedError, match=r"manifest\.json is missing"):
        await restore_into(backup_layout(other), backup, force=False)
    assert not (tmp_path / "other" / "lore.sqlite3").exists()  # nothing restored


# -- the terminal ----------------------------------------------------------------------------


def _lore(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own console script
        [str(LORE), *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.mark.timeout(480)
def test_lore_backup_then_restore_from_the_command_line(tmp_path: Path, models_dir: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".env").write_text(
            f"DATA_DIR={tmp_path / name / 'data'}\nMODELS_DIR={models_dir}\n"
            "SAMPLE_DOCS_DIR=\nLOG_LEVEL=WARNING\n"
        )
    (tmp_path / "a" / "wifi.md").write_text("# Office wifi\n\nThe network is Marmot-Net.\n")
    assert _lore(tmp_path / "a", "ingest", "wifi.md", "--shared").returncode == 0
    made = _lore(tmp_path / "a", "backup", str(tmp_path / "snap"))
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == (
        f"Backed up 1 documents, 1 chunks and 2 databases to {tmp_path / 'snap'} "
        "(vectors included)."
    )
    with DataDirLock(tmp_path / "a" / "data"):  # as the running bot holds it
        beside = _lore(tmp_path / "a", "backup", str(tmp_path / "beside"))
    assert beside.returncode == 0, beside.stderr
    assert beside.stdout.strip() == (
        f"Backed up 1 documents, 1 chunks and 2 databases to {tmp_path / 'beside'} "
        "(vectors re-embedded on restore)."
    )
    with DataDirLock(tmp_path / "b" / "data"):
        busy = _lore(tmp_path / "b", "restore", str(tmp_path / "snap"))
    assert busy.returncode == 1
    assert busy.stderr.startswith("Nothing was restored: The Lore data directory")
    restored = _lore(tmp_path / "b", "restore", str(tmp_path / "snap"))
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith(f"Restored 1 documents and 1 chunks from {tmp_path / 'snap'}")
    assert restored.stdout.rstrip().endswith(
        "re-embedded 0 chunks, removed 0 orphan points and 0 orphan folders."
    )
    found = _lore(tmp_path / "b", "search", "wifi network name")
    assert "Marmot-Net" in found.stdout
    again = _lore(tmp_path / "b", "restore", str(tmp_path / "snap"))
    assert again.returncode == 1
    assert "is not empty" in again.stderr
    assert "--force" in again.stderr
