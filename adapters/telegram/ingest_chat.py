"""Sources sent in a Telegram chat (a document and its caption, a lone link, a forwarded
message) go to the
`Bot`, with one status message edited as the ingest moves (downloading, fetching, reading,
saved). Who may save where, and the size check before any download, are the `Bot`'s; this
module only finds the source in a message and downloads a file's bytes."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from telegram import Bot as TelegramBot
from telegram import Message, MessageOrigin
from telegram.error import TelegramError

from adapters.capped_download import capped_download
from adapters.telegram.context import EdgeContext, chat_ref, identity_of
from adapters.telegram.rendering import render_rich
from adapters.telegram.replies import send_reply
from adapters.telegram.streaming import StatusMessage
from bot.errors import LoreError
from bot.events import Identity
from bot.replies import Message as LoreMessage
from bot.replies import rich
from bot.sources import IncomingSource, forwarded, is_link, too_big

__all__ = ["describe_origin", "download", "offer_source", "save_source", "source_of"]

logger = logging.getLogger(__name__)

DOWNLOAD_FAILED = "I could not download that file from Telegram. Please try again."


def describe_origin(origin: MessageOrigin) -> str:
    """Who a forwarded message came from, in words."""
    for attribute in ("sender_user", "chat", "sender_chat"):
        value = getattr(origin, attribute, None)
        if value is not None:
            name = getattr(value, "full_name", None) or getattr(value, "title", None)
            if name:
                return str(name)
    return str(getattr(origin, "sender_user_name", None) or "an unknown sender")


def source_of(message: Message, text: str | None) -> IncomingSource | None:
    """The source a message carries (a document, a photo or an audio file with its caption,
    forwarded text, or a lone link), if any. A photo and an audio file without a name are
    named after Telegram's unique id of the file, so that each is a source of its own."""
    if message.document is not None:
        document = message.document
        return IncomingSource(
            file_ref=document.file_id,
            file_name=document.file_name or "document",
            size=document.file_size,
            caption=text or None,
        )
    if message.photo:
        photo = message.photo[-1]  # the largest size Telegram keeps
        name = f"photo-{photo.file_unique_id}.jpg"
        return IncomingSource(photo.file_id, name, photo.file_size, caption=text or None)
    if message.audio is not None:
        audio = message.audio
        name = audio.file_name or f"audio-{audio.file_unique_id}.{_suffix(audio.mime_type)}"
        return IncomingSource(audio.file_id, name, audio.file_size, caption=text or None)
    if message.forward_origin is not None and text:
        origin = message.forward_origin
        return forwarded(describe_origin(origin), origin.date, text)
    if text and is_link(text):
        return IncomingSource(url=text.strip())
    return None


def _suffix(mime_type: str | None) -> str:
    """A file suffix for an audio file Telegram sent without a name."""
    known = {"audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/ogg": "ogg", "audio/x-wav": "wav"}
    return known.get(mime_type or "", "mp3")


async def offer_source(edge: EdgeContext, message: Message, source: IncomingSource) -> None:
    """Ask the `Bot` where the source goes: refused, a Private/Shared question for an owner,
    or saved privately now."""
    identity = identity_of(message.from_user) if message.from_user else None
    if identity is None:
        return
    try:
        question = await edge.bot.offer_source(
            identity, chat_ref(message.chat, message), source, edge.config.download_limit
        )
    except LoreError as exc:
        await message.reply_text(str(exc))
        return
    if question is not None:
        await send_reply(message, question)
        return
    status = StatusMessage(message.get_bot(), message.chat_id, interval=edge.config.stream_interval)
    await status.start(edge.bot.received(source))
    await save_source(edge, identity, status, source, shared=False)


async def download(edge: EdgeContext, telegram: TelegramBot, file_ref: str) -> bytes | str:
    """A file's bytes, or why there are none. The size getFile reports is checked first,
    and the download is capped while it streams, whatever that size said."""
    limit = edge.config.download_limit
    try:
        file = await telegram.get_file(file_ref)
    except TelegramError as exc:
        logger.info("Download failed: %s", exc)
        return DOWNLOAD_FAILED
    refusal = too_big(file.file_size, limit)
    if refusal is not None:
        return refusal
    where = file.file_path or ""
    if not where.startswith(("http://", "https://")):  # a local Bot API server's own disk
        return await asyncio.to_thread(_read_capped, Path(where), limit)
    parts = urlsplit(where)
    url = urlunsplit(parts._replace(path=quote(parts.path)))
    return await capped_download(url, limit, edge.config.download_timeout, failed=DOWNLOAD_FAILED)


def _read_capped(path: Path, limit: int) -> bytes | str:
    """A file a local Bot API server keeps on this machine, read up to the cap."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        logger.info("Download failed: %s", type(exc).__name__)
        return DOWNLOAD_FAILED
    return too_big(len(data), limit) or data


async def save_source(
    edge: EdgeContext,
    identity: Identity,
    status: StatusMessage,
    source: IncomingSource,
    *,
    shared: bool,
) -> None:
    """Download a file if there is one, save through the `Bot`, keep `status` up to date."""
    data: bytes | None = None
    if source.file_ref is not None:
        status.set(f"📥 Downloading {source.file_name}…")
        downloaded = await download(edge, status.bot, source.file_ref)
        if isinstance(downloaded, str):
            await status.done(render_rich(rich(downloaded)), html=True)
            return
        data = downloaded
    outcome: LoreMessage = await edge.bot.save_source(
        identity,
        source,
        shared=shared,
        data=data,
        download_limit=edge.config.download_limit,
        on_progress=status.set,
    )
    await status.done(render_rich(outcome.body), html=True)
