"""Sources sent to Lore on Slack (a file, a shared message, a lone link) go to the `Bot`,
with one status message edited as the ingest moves (downloading, fetching, reading,
saved). Who may save where, and the size check before any download, are the `Bot`'s; this
module only downloads a file's bytes and keeps the status message up to date."""

from __future__ import annotations

from adapters.slack.blocks import scope_buttons
from adapters.slack.context import SlackContext
from adapters.slack.mrkdwn import escape, render_rich
from adapters.slack.outbox import Place
from adapters.slack.payloads import SlackMessage
from adapters.slack.replies import Target, tell
from adapters.slack.streaming import StatusMessage
from bot.errors import LoreError
from bot.events import Identity
from bot.sources import IncomingSource

__all__ = ["offer_source", "save_source"]


async def offer_source(edge: SlackContext, message: SlackMessage, source: IncomingSource) -> None:
    """Ask the `Bot` where the source goes: refused, a Private/Shared question for an owner,
    or saved privately now."""
    identity = await edge.directory.identity(message.user)
    place = Place(message.channel, message.reply_thread)
    try:
        question = await edge.bot.offer_source(
            identity, message.chat, source, edge.config.max_file_bytes
        )
    except LoreError as exc:
        target = Target(place, message.user, private=not message.is_group)
        await tell(edge.outbox, target, str(exc))
        return
    if question is not None:
        await edge.outbox.post(place, render_rich(question.body), scope_buttons(question.key))
        return
    status = StatusMessage(edge.outbox, place, interval=edge.config.stream_interval)
    await status.start(escape(edge.bot.received(source)))
    await save_source(edge, identity, status, source, shared=False)


async def save_source(
    edge: SlackContext,
    identity: Identity,
    status: StatusMessage,
    source: IncomingSource,
    *,
    shared: bool,
) -> None:
    """Download a file if there is one, save through the `Bot`, keep `status` up to date."""
    data: bytes | None = None
    limit = edge.config.max_file_bytes
    if source.file_ref is not None:
        status.set(escape(f"📥 Downloading {source.file_name}…"))
        downloaded = await edge.files.fetch(source.file_ref, limit)
        if isinstance(downloaded, str):
            await status.done(escape(downloaded))
            return
        data = downloaded
    outcome = await edge.bot.save_source(
        identity,
        source,
        shared=shared,
        data=data,
        download_limit=limit,
        on_progress=lambda step: status.set(escape(step)),
    )
    await status.done(render_rich(outcome.body))
