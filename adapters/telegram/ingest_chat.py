"""Sources sent in a chat (a document, a link, a forwarded message, `/note`) become `Bot`
ingests, with one status message edited as the ingest moves (fetching, reading, saved).

Files are checked against the size limit before anything is downloaded. Members' sources
go to their private collection; an owner first chooses Private or Shared.
"""

from __future__ import annotations

import logging
import re

from telegram import Bot as TelegramBot
from telegram import Message, MessageOrigin
from telegram.error import TelegramError

from adapters.telegram.buttons import scope_keyboard
from adapters.telegram.context import EdgeContext, PendingSource
from adapters.telegram.rendering import escape
from adapters.telegram.streaming import StatusMessage
from bot.errors import IngestRefusedError
from bot.ingest_requests import IngestProgress, IngestRequest, IngestResult, UserId
from bot.service import Bot

__all__ = ["LINK", "describe_origin", "offer_or_ingest", "run_ingest", "source_of"]

logger = logging.getLogger(__name__)

LINK = re.compile(r"^https?://\S+$", re.IGNORECASE)


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def describe_origin(origin: MessageOrigin) -> str:
    """Who a forwarded message came from, in words."""
    for attribute in ("sender_user", "chat", "sender_chat"):
        value = getattr(origin, attribute, None)
        if value is not None:
            name = getattr(value, "full_name", None) or getattr(value, "title", None)
            if name:
                return str(name)
    return str(getattr(origin, "sender_user_name", None) or "an unknown sender")


def source_of(message: Message, user_id: int, text: str | None) -> PendingSource | None:
    """The source a message carries (document, forwarded text, or a lone link), if any."""
    if message.document is not None:
        document = message.document
        return PendingSource(
            user_id, file_id=document.file_id, file_name=document.file_name or "document"
        )
    if message.forward_origin is not None and text:
        origin = describe_origin(message.forward_origin)
        when = message.forward_origin.date.strftime("%Y-%m-%d %H:%M UTC")
        return PendingSource(
            user_id,
            text=f"Forwarded from {origin} ({when}):\n\n{text}",
            title=f"Forwarded from {origin}: {text[:60]}",
        )
    if text and LINK.match(text.strip()):
        return PendingSource(user_id, url=text.strip())
    return None


def _too_big(size: int | None, limit: int) -> str | None:
    if size is not None and size > limit:
        return (
            f"That file is {_megabytes(size)}; I can take files up to {_megabytes(limit)}. "
            "Nothing was saved."
        )
    return None


async def offer_or_ingest(
    edge: EdgeContext,
    message: Message,
    source: PendingSource,
    *,
    owner: bool,
    user_id: UserId,
) -> None:
    """Check the size first; an owner chooses where it goes, a member's goes to private."""
    size = message.document.file_size if message.document is not None else None
    refusal = _too_big(size, edge.config.download_limit)
    if refusal is not None:
        await message.reply_text(refusal)
        return
    if owner:
        key = edge.pending.put(source)
        what = escape(source.file_name or source.url or source.title or "this")
        await message.reply_html(
            f"Where should I keep <b>{what}</b>?", reply_markup=scope_keyboard(key)
        )
        return
    status = StatusMessage(message.get_bot(), message.chat_id, interval=edge.config.stream_interval)
    await status.start("📥 Received, working on it…")
    await run_ingest(
        edge.bot,
        message.get_bot(),
        status,
        source,
        owner_id=user_id,
        limit=edge.config.download_limit,
    )


async def _request(
    telegram: TelegramBot,
    status: StatusMessage,
    source: PendingSource,
    owner_id: UserId | None,
    limit: int,
) -> IngestRequest | str:
    if source.file_id is None:
        return IngestRequest(owner_id, url=source.url, text=source.text, title=source.title)
    status.set(f"📥 Downloading {source.file_name}…")
    try:
        file = await telegram.get_file(source.file_id)
        refusal = _too_big(file.file_size, limit)
        if refusal is not None:
            return refusal
        data = bytes(await file.download_as_bytearray())
    except TelegramError as exc:
        logger.info("Download failed: %s", exc)
        return "I could not download that file from Telegram. Please try again."
    return IngestRequest(owner_id, data=data, file_name=source.file_name)


def _saved_text(result: IngestResult, shared: bool) -> str:
    where = "the shared knowledge" if shared else "your private notes"
    title = escape(result.title)
    if result.outcome == "duplicate":
        return f"♻️ Already saved: <b>{title}</b> ({result.chunks_text}) in {where}."
    verb = "Updated" if result.outcome == "updated" else "Saved"
    return f"✅ {verb}: <b>{title}</b> ({result.chunks_text}) in {where}."


async def run_ingest(
    bot: Bot,
    telegram: TelegramBot,
    status: StatusMessage,
    source: PendingSource,
    *,
    owner_id: UserId | None,
    limit: int,
) -> None:
    """Download if needed, ingest through the `Bot`, and keep `status` up to date."""
    request = await _request(telegram, status, source, owner_id, limit)
    if isinstance(request, str):
        await status.done(request)
        return

    def progress(step: IngestProgress) -> None:
        status.set(f"⏳ {step.message}")

    try:
        result = await bot.ingest(request, on_progress=progress)
    except IngestRefusedError as exc:
        await status.done(f"🚫 {exc}")
        return
    await status.done(_saved_text(result, shared=owner_id is None), html=True)
