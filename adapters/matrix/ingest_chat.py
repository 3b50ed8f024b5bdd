"""Sources sent to the bot in Matrix (a file, an image, a voice message or a video; a message
that is a lone link) go to the `Bot`, with one status message edited as the ingest moves.
Who may save where, the size check before any download (from the size the message
announces) and which formats are read are the `Bot`'s; this module finds the source in a
message and downloads its bytes through the homeserver's authenticated media API
(`/_matrix/client/v1/media/download`) — never more than the limit, whatever was announced —
and decrypts a file sent in an encrypted room."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import quote, urlsplit

import aiohttp
import nio
from nio.crypto import decrypt_attachment

from adapters.matrix.context import EdgeContext, chat_of, identity_of
from adapters.matrix.html import plain, render_rich
from adapters.matrix.outbox import SendError
from adapters.matrix.replies import send_reply
from adapters.matrix.streaming import LiveReply, StatusMessage
from bot.errors import LoreError
from bot.events import Identity
from bot.sources import IncomingSource, is_link, too_big

__all__ = [
    "DOWNLOAD_FAILED",
    "download",
    "file_ref_of",
    "offer_source",
    "save_source",
    "source_of",
]

logger = logging.getLogger(__name__)

MEDIA = {"m.file", "m.image", "m.audio", "m.video"}
DOWNLOAD_FAILED = "I could not download that file from the homeserver. Please try again."
UNREADABLE = "I could not decrypt that file. Please send it again."


def file_ref_of(content: dict[str, Any]) -> str | None:
    """Where the bytes are: an `mxc://` URL, and the keys when the file is encrypted."""
    encrypted = content.get("file")
    url = encrypted.get("url") if isinstance(encrypted, dict) else content.get("url")
    if not isinstance(url, str) or not url.startswith("mxc://"):
        return None
    return json.dumps({"url": url, "file": encrypted if isinstance(encrypted, dict) else None})


def source_of(content: dict[str, Any], text: str) -> IncomingSource | None:
    """The source a message carries (a media message, with its caption; a lone link)."""
    if content.get("msgtype") in MEDIA:
        reference = file_ref_of(content)
        if reference is None:
            return None
        body = str(content.get("body") or "")
        name = str(content.get("filename") or body or "file")
        caption = body if content.get("filename") and body and body != name else None
        info = content.get("info")
        size = info.get("size") if isinstance(info, dict) else None
        return IncomingSource(
            file_ref=reference,
            file_name=name,
            size=size if isinstance(size, int) else None,
            caption=caption,
        )
    if text and is_link(text):
        return IncomingSource(url=text.strip())
    return None


def _media_path(mxc: str) -> str:
    parts = urlsplit(mxc)
    server, media_id = quote(parts.netloc, safe=""), quote(parts.path.strip("/"), safe="")
    return f"/_matrix/client/v1/media/download/{server}/{media_id}?allow_remote=true"


async def _fetch(client: nio.AsyncClient, mxc: str, limit: int, seconds: float) -> bytes | str:
    headers = {"Authorization": f"Bearer {client.access_token}"}
    try:
        response = await client.send("GET", _media_path(mxc), headers=headers, timeout=seconds)
        async with response:
            if response.status != 200:
                logger.info("Media download answered %d", response.status)
                return DOWNLOAD_FAILED
            announced = response.content_length
            if announced is not None and announced > limit:
                return too_big(announced, limit) or DOWNLOAD_FAILED
            data = bytearray()
            async for chunk in response.content.iter_chunked(64 * 1024):
                data += chunk
                if len(data) > limit:
                    return too_big(len(data), limit) or DOWNLOAD_FAILED
            return bytes(data)
    except (aiohttp.ClientError, TimeoutError) as exc:
        logger.info("Media download failed: %s", type(exc).__name__)
        return DOWNLOAD_FAILED


async def download(edge: EdgeContext, file_ref: str, limit: int) -> bytes | str:
    """A file's bytes (decrypted if it was encrypted), or why there are none."""
    reference = json.loads(file_ref)
    data = await _fetch(edge.client, reference["url"], limit, edge.config.connect_timeout * 3)
    encrypted = reference.get("file")
    if isinstance(data, str) or not encrypted:
        return data
    try:
        return bytes(
            decrypt_attachment(
                data, encrypted["key"]["k"], encrypted["hashes"]["sha256"], encrypted["iv"]
            )
        )
    except (nio.EncryptionError, KeyError, TypeError):
        logger.warning("An encrypted file could not be decrypted")
        return UNREADABLE


async def offer_source(
    edge: EdgeContext, room: Any, event: Any, source: IncomingSource, *, thread: str | None
) -> None:
    """Ask the `Bot` where the source goes: refused, a Private/Shared question for an owner,
    or saved privately now."""
    identity = identity_of(room, event.sender)
    chat = chat_of(room, thread)
    reply_to = event.event_id if chat.is_group else None
    try:
        question = await edge.bot.offer_source(identity, chat, source, edge.config.download_limit)
    except LoreError as exc:
        await edge.outbox.send(room.room_id, plain(str(exc)), reply_to=reply_to, thread=thread)
        return
    if question is not None:
        await send_reply(edge, room.room_id, question, reply_to=reply_to, thread=thread)
        return
    status = StatusMessage(
        LiveReply(edge.outbox, room.room_id, reply_to=reply_to, thread=thread),
        interval=edge.config.stream_interval,
    )
    await status.push(edge.bot.received(source))
    await save_source(edge, identity, source, status, shared=False)


async def save_source(
    edge: EdgeContext,
    identity: Identity,
    source: IncomingSource,
    status: StatusMessage,
    *,
    shared: bool,
) -> None:
    """Download the file if there is one, save through the `Bot`, keep the status up to date,
    and end it with the outcome."""
    data: bytes | None = None
    try:
        if source.file_ref is not None:
            status.set(f"📥 Downloading {source.file_name}…")
            downloaded = await download(edge, source.file_ref, edge.config.download_limit)
            if isinstance(downloaded, str):
                await status.finish(plain(downloaded))
                return
            data = downloaded
        outcome = await edge.bot.save_source(
            identity,
            source,
            shared=shared,
            data=data,
            download_limit=edge.config.download_limit,
            on_progress=status.set,
        )
    except LoreError as exc:
        await status.finish(plain(str(exc)))
        return
    try:
        await status.finish(render_rich(outcome.body))
    except SendError as exc:
        logger.warning("Could not show a saved source's outcome: %s", exc)
