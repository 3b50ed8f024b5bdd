"""Sources sent to the bot in Discord (an attachment, a message that is a lone link) go to the
`Bot`, with one status message edited as the ingest moves (downloading, fetching, reading,
saved). Who may save where, and the size check before any download (from the attachment's
announced size), are the `Bot`'s; this module finds the source in a message and downloads an
attachment's bytes — never more than the limit, whatever the size announced."""

from __future__ import annotations

import logging

import discord

from adapters.capped_download import capped_download
from adapters.discord.context import EdgeContext, chat_of, identity_of, send
from adapters.discord.markdown import render_rich
from adapters.discord.replies import send_reply
from adapters.discord.streaming import StatusMessage, Write, channel_status
from bot.errors import LoreError
from bot.events import Identity
from bot.replies import Message as LoreMessage
from bot.replies import rich
from bot.sources import IncomingSource, is_link

__all__ = ["offer_source", "save_source", "source_of"]

logger = logging.getLogger(__name__)

DOWNLOAD_FAILED = "I could not download that file from Discord. Please try again."


def source_of(message: discord.Message, text: str) -> IncomingSource | None:
    """The source a message carries (its first attachment, with the message's text as its
    caption, or a lone link), if any."""
    if message.attachments:
        attachment = message.attachments[0]
        return IncomingSource(
            file_ref=attachment.url,
            file_name=attachment.filename,
            size=attachment.size,
            caption=text or None,
        )
    if text and is_link(text):
        return IncomingSource(url=text.strip())
    return None


async def offer_source(
    edge: EdgeContext,
    message: discord.Message,
    source: IncomingSource,
    where: discord.abc.Messageable,
) -> None:
    """Ask the `Bot` where the source goes: refused, a Private/Shared question for an owner,
    or saved privately now; the answer goes to `where`."""
    identity = identity_of(message.author)
    chat = chat_of(message.channel, message.guild.id if message.guild else None)
    try:
        question = await edge.bot.offer_source(identity, chat, source, edge.config.download_limit)
    except LoreError as exc:
        await send(where, render_rich(rich(str(exc))))
        return
    if question is not None:
        await send_reply(where, question)
        return
    status, write = channel_status(where, interval=edge.config.stream_interval)
    await status.push(edge.bot.received(source))
    await save_source(edge, identity, source, status, write, shared=False)


async def save_source(
    edge: EdgeContext,
    identity: Identity,
    source: IncomingSource,
    status: StatusMessage,
    write: Write,
    *,
    shared: bool,
) -> None:
    """Download an attachment if there is one, save through the `Bot`, keep the status up to
    date, and end it with the outcome."""
    data: bytes | None = None
    if source.file_ref is not None:
        status.set(f"📥 Downloading {source.file_name}…")
        config = edge.config
        downloaded: bytes | str = DOWNLOAD_FAILED
        if config.may_download(source.file_ref):
            downloaded = await capped_download(
                source.file_ref,
                config.download_limit,
                config.download_timeout,
                failed=DOWNLOAD_FAILED,
            )
        else:
            logger.warning("Attachment URL outside Discord's file hosts refused")
        if isinstance(downloaded, str):
            await status.settle()
            await write(render_rich(rich(downloaded)), None)
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
    await status.settle()
    await write(render_rich(outcome.body), None)
