"""Deleting one document (issue 14, point 8): `/sources` names each document by a short handle
that never shifts, `/forget HANDLE` asks first and then removes that one document everywhere
(rows, chunks, vectors, original), members delete only their own, shared ones need an owner,
and `lore delete` does the same from the terminal."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.app import Lore
from bot.deletion import NO_TERMINAL
from bot.errors import NotFoundError
from bot.events import ChatRef, Identity
from bot.replies import Confirmation, Message, plain_text
from storage.document_records import HANDLE_LENGTH
from storage.documents import Collection, DocumentRecord, DocumentRepository, SourceType
from storage.ids import DocumentId, UserId
from tests.chat_turns import OWNER, invite, remember, user_id

LORE = Path(sys.executable).parent / "lore"


def _chat(who: Identity) -> ChatRef:
    return ChatRef(who.platform, who.platform_user_id)


async def _sources_text(lore: Lore, who: Identity) -> str:
    reply = await lore.bot.run_command(who, _chat(who), "sources")
    assert isinstance(reply, Message)
    return plain_text(reply.body)


async def _forget(lore: Lore, who: Identity, args: str) -> Confirmation | Message:
    reply = await lore.bot.run_command(who, _chat(who), "forget", args)
    assert isinstance(reply, Confirmation | Message)
    return reply


async def _orphans(lore: Lore) -> dict[Collection, tuple[set[str], set[str]]]:
    """Per collection: (points SQLite does not know, chunks without a point)."""
    documents = DocumentRepository(lore.database)
    found = {}
    for collection in Collection:
        points = await lore.index.point_ids(collection)
        chunks = await documents.point_ids(collection)
        found[collection] = (set(points - chunks), set(chunks - points))
    return found


def _clean() -> dict[Collection, tuple[set[str], set[str]]]:
    return {collection: (set(), set()) for collection in Collection}


async def test_handles_stay_the_same_when_documents_come_and_go(lore: Lore) -> None:
    ann = await invite(lore.bot, "ann")
    for title in ("Alpha", "Bravo", "Charlie"):
        await remember(
            lore.bot, ann, f"{title} notes: the {title} room is on floor 2.", title=title
        )
    before = {doc.title: doc.handle for doc in await lore.bot.sources(ann)}
    assert all(len(handle) == HANDLE_LENGTH for handle in before.values())
    listed = await _sources_text(lore, ann)
    for title, handle in before.items():
        assert f"{handle} {title}" in listed

    await lore.bot.delete_document(ann, before["Bravo"])
    await remember(lore.bot, ann, "Delta notes: the Delta room is in the cellar.", title="Delta")
    after = {doc.title: doc.handle for doc in await lore.bot.sources(ann)}
    assert after["Alpha"] == before["Alpha"]
    assert after["Charlie"] == before["Charlie"]
    assert "Bravo" not in after
    listed = await _sources_text(lore, ann)
    assert f"{before['Alpha']} Alpha" in listed
    assert f"{before['Charlie']} Charlie" in listed


async def test_forget_handle_asks_then_deletes_one_document_everywhere(lore: Lore) -> None:
    ann = await invite(lore.bot, "ann")
    await remember(lore.bot, ann, "The Zorblat printer takes toner TN-2420.", title="Printer")
    await remember(lore.bot, ann, "Ann parks in bay 7 behind the bakery.", title="Parking")
    printer = next(doc for doc in await lore.bot.sources(ann) if doc.title == "Printer")
    original = Path(printer.original_path)
    assert original.is_file()

    asked = await _forget(lore, ann, printer.handle)
    assert isinstance(asked, Confirmation)
    assert "Printer" in plain_text(asked.body)
    assert len(await lore.bot.sources(ann)) == 2  # nothing deleted before the answer

    kept = await lore.bot.confirm(ann, _chat(ann), asked.action, yes=False)
    assert plain_text(kept.body) == "Nothing was deleted."
    assert len(await lore.bot.sources(ann)) == 2

    done = await lore.bot.confirm(ann, _chat(ann), asked.action, yes=True)
    assert plain_text(done.body) == "🗑 Deleted Printer."
    assert [doc.title for doc in await lore.bot.sources(ann)] == ["Parking"]
    hits = await lore.bot.search(ann, "Zorblat printer toner")
    assert not any("Zorblat" in hit.passage.text for hit in hits)
    assert not original.exists()
    assert not original.parent.exists()
    assert await _orphans(lore) == _clean()
    stats = await lore.bot.maintenance.stats()
    assert stats.private_points == stats.chunks
    hits = await lore.bot.search(ann, "where does Ann park?")
    assert any("bay 7" in hit.passage.text for hit in hits)

    again = await lore.bot.confirm(ann, _chat(ann), asked.action, yes=True)
    assert plain_text(again.body) == "That document is already gone."


async def test_unknown_or_ambiguous_handles_change_nothing(lore: Lore) -> None:
    ann = await invite(lore.bot, "ann")
    await remember(lore.bot, ann, "Ann's locker is number 14.", title="Locker")
    unknown = await _forget(lore, ann, "0000000")
    assert isinstance(unknown, Message)
    assert plain_text(unknown.body) == "No document of yours has the handle '0000000'."
    numbered = await _forget(lore, ann, "1")
    assert isinstance(numbered, Message)
    assert "handle shown in /sources" in plain_text(numbered.body)

    owner_id = await user_id(lore.bot, ann)
    documents = DocumentRepository(lore.database)
    for suffix, title in (("1", "First twin"), ("2", "Second twin")):
        await documents.save(_record(f"abcd{suffix * 28}", owner_id, title), [], replace=False)
    ambiguous = await _forget(lore, ann, "abcd")
    assert isinstance(ambiguous, Message)
    text = plain_text(ambiguous.body)
    assert text.startswith("Several documents start with 'abcd'")
    assert "First twin" in text
    assert "Second twin" in text
    chosen = await _forget(lore, ann, "abcd2")
    assert isinstance(chosen, Confirmation)
    assert "Second twin" in plain_text(chosen.body)
    assert len(await lore.bot.sources(ann)) == 3


def _record(document_id: str, owner: UserId, title: str) -> DocumentRecord:
    return DocumentRecord(
        id=DocumentId(document_id),
        owner_id=owner,
        title=title,
        source_type=SourceType.NOTE,
        source_ref="note",
        content_hash=document_id,
        original_path="",
        format="text",
        status="ready",
        created_at="2026-12-01T00:00:00Z",
        updated_at="2026-12-01T00:00:00Z",
    )


async def test_members_delete_their_own_and_shared_ones_need_an_owner(lore: Lore) -> None:
    ann, bob = await invite(lore.bot, "ann"), await invite(lore.bot, "bob")
    await remember(lore.bot, ann, "Ann's secret: the safe code is 4711.", title="Safe")
    await remember(lore.bot, None, "The office opens at 8 am.", title="Opening hours")
    [safe] = await lore.bot.sources(ann)
    [shared] = await DocumentRepository(lore.database).list_for_owner(None)

    for who in (bob, OWNER):  # another member's private document is not theirs to name
        with pytest.raises(NotFoundError, match="No document of yours"):
            await lore.bot.delete_document(who, safe.handle)
    with pytest.raises(NotFoundError, match="No document of yours"):
        await lore.bot.delete_document(bob, shared.handle)
    # A forged Yes for someone else's document (or a shared one, from a member) finds nothing.
    for who, document in ((bob, shared), (bob, safe), (OWNER, safe)):
        forged = await lore.bot.confirm(who, _chat(who), f"forget:{document.id}", yes=True)
        assert plain_text(forged.body) == "That document is already gone."
    assert len(await DocumentRepository(lore.database).list_for_owner(None)) == 1
    assert [doc.title for doc in await lore.bot.sources(ann)] == ["Safe"]

    owner_list = await _sources_text(lore, OWNER)
    assert f"{shared.handle} Opening hours" in owner_list
    asked = await _forget(lore, OWNER, shared.handle)
    assert isinstance(asked, Confirmation)
    assert "from the shared knowledge" in plain_text(asked.body)
    await lore.bot.confirm(OWNER, _chat(OWNER), asked.action, yes=True)
    assert await DocumentRepository(lore.database).list_for_owner(None) == []
    hits = await lore.bot.search(OWNER, "when does the office open?")
    assert not any("8 am" in hit.passage.text for hit in hits)
    assert await _orphans(lore) == _clean()

    assert await lore.bot.delete_document(ann, safe.handle) == "Safe"
    assert await lore.bot.sources(ann) == []
    assert await _orphans(lore) == _clean()


# -- the terminal ----------------------------------------------------------------------------


def _lore(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own console script
        [str(LORE), *args],
        cwd=workdir,
        input="",
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _handles(data: Path) -> dict[str, str]:
    with sqlite3.connect(data / "lore.sqlite3") as connection:
        rows = connection.execute("SELECT title, id FROM documents").fetchall()
    return {title: document_id[:HANDLE_LENGTH] for title, document_id in rows}


def _lore_at_a_terminal(workdir: Path, answer: str, *args: str) -> tuple[int, str]:
    """Run `lore` with a pseudo-terminal as its standard input and type `answer`."""
    controller, terminal = os.openpty()
    try:
        process = subprocess.Popen(  # noqa: S603 - our own console script
            [str(LORE), *args],
            cwd=workdir,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        os.write(controller, f"{answer}\n".encode())
        out, _ = process.communicate(timeout=180)
    finally:
        os.close(terminal)
        os.close(controller)
    return process.returncode, out


@pytest.mark.timeout(600)
def test_lore_delete_asks_at_a_terminal_and_refuses_without_one(
    tmp_path: Path, models_dir: Path
) -> None:
    data = tmp_path / "data"
    (tmp_path / ".env").write_text(
        f"DATA_DIR={data}\nMODELS_DIR={models_dir}\nSAMPLE_DOCS_DIR=\nLOG_LEVEL=WARNING\n"
    )
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "wifi.md").write_text("# Office wifi\n\nThe guest wifi password is on the board.\n")
    (notes / "bikes.md").write_text("# Bikes\n\nBikes go into the shed behind the bakery.\n")
    assert _lore(tmp_path, "ingest", "notes", "--user", "ann").returncode == 0
    handles = _handles(data)
    wifi, bikes = handles["Office wifi"], handles["Bikes"]

    refused = _lore(tmp_path, "delete", wifi, "--user", "ann")
    assert refused.returncode == 1
    assert refused.stderr.strip() == NO_TERMINAL
    assert _handles(data) == handles

    status, shown = _lore_at_a_terminal(tmp_path, "y", "delete", wifi, "--user", "ann")
    assert status == 0
    assert f"Delete Office wifi ({wifi}, private notes)? This cannot be undone. [y/N]" in shown
    assert shown.rstrip().endswith(f"Deleted Office wifi ({wifi}).")
    assert _handles(data) == {"Bikes": bikes}
    assert not any((data / "uploads").rglob("wifi.md"))

    deleted = _lore(tmp_path, "delete", bikes, "--user", "ann", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == f"Deleted Bikes ({bikes})."
    assert _handles(data) == {}

    gone = _lore(tmp_path, "delete", wifi, "--user", "ann", "--yes")
    assert gone.returncode == 1
    assert gone.stderr.strip() == f"No document of yours has the handle '{wifi}'."
